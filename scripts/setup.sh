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
  libonig-dev libutf8proc-dev python3-jinja2 libcpp-httplib-dev
  prometheus-cpp-dev prometheus systemd python3-yaml openssl clang-14
  libclang-rt-14-dev
  qemu-user g++-aarch64-linux-gnu
)
# kubectl renders deploy/k8s (tests/deploy/k8s_manifests_test.py). Debian's
# kubernetes-client conflicts with a kubectl installed otherwise, so it comes
# only where there is none.
if ! command -v kubectl >/dev/null 2>&1; then
  packages+=(kubernetes-client)
fi
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
#   install_peers SRC DEST NPM_COMMAND [npm options...]
# The lock file we ship is kept as DEST/.source-lock, since `npm install`
# may rewrite DEST/package-lock.json.
install_peers() {
  local src="$1" dest="$2"
  shift 2
  if cmp -s "${src}/package-lock.json" "${dest}/.source-lock" &&
     [[ -f "${dest}/.installed" ]]; then
    echo "setup: peer npm packages present in ${dest}"
    return
  fi
  echo "setup: installing the peer npm packages into ${dest}"
  mkdir -p "${dest}"
  rm -f "${dest}/.installed"
  cp "${src}/package.json" "${src}/package-lock.json" "${dest}/"
  cp "${src}/package-lock.json" "${dest}/.source-lock"
  (cd "${dest}" && npm "$@" --no-audit --no-fund --loglevel=error)
  touch "${dest}/.installed"
}
peers_src="$(cd "$(dirname "$0")/.." && pwd)/tests/peer"
peers="${LAYERPROOF_PEER_MODULES:-${HOME}/.cache/layerproof/peers}"
install_peers "${peers_src}" "${peers}" ci
# llama.cpp (node-llama-cpp's prebuilt linux-x64 CPU binaries): without its
# optional GPU builds, and without its postinstall, which would fetch and
# build llama.cpp from source where no prebuilt binary fits. `npm install`
# with the lock, because npm 11's `ci` refuses a lock that omits the other
# platforms' optional packages, and a lock that names them would not be
# installable here.
install_peers "${peers_src}/llama_cpp" "${peers}/llama_cpp" \
  install --omit=optional --ignore-scripts
