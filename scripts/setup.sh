#!/usr/bin/env bash
# Installs every Debian package LayerProof's build, tests and benchmarks need,
# and the npm packages of the peer tests (tests/peer/package-lock.json) into
# a cache directory, ${LAYERPROOF_PEER_MODULES:-~/.cache/layerproof/peers}.
# Idempotent: when everything is present it installs nothing and never touches
# the network. Runs as root, or through sudo when that is available.
# Usage: scripts/setup.sh [--with-browser]
#   --with-browser  also install chromium, for scripts/test-browser.sh
set -euo pipefail

with_browser=0
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=1 ;;
    *) echo "setup: unknown option $arg (want --with-browser)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev librocksdb-dev libabsl-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
  libonig-dev libutf8proc-dev python3-jinja2
  qemu-user g++-aarch64-linux-gnu
)
# Node.js runs the peer tests; a machine that has its own keeps it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
if ((with_browser)); then packages+=(chromium); fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
else
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The peer tests' npm packages, exactly as locked. A cache whose lock file
# equals ours and whose install finished is left alone.
peers_src="$(cd "$(dirname "$0")/.." && pwd)/tests/peer"
peers="${LAYERPROOF_PEER_MODULES:-${HOME}/.cache/layerproof/peers}"
if cmp -s "${peers_src}/package-lock.json" "${peers}/package-lock.json" &&
   [[ -f "${peers}/.installed" ]]; then
  echo "setup: peer npm packages present in ${peers}"
else
  echo "setup: installing the peer npm packages into ${peers}"
  mkdir -p "${peers}"
  rm -f "${peers}/.installed"
  cp "${peers_src}/package.json" "${peers_src}/package-lock.json" "${peers}/"
  (cd "${peers}" && npm ci --no-audit --no-fund --loglevel=error)
  touch "${peers}/.installed"
fi
