#!/usr/bin/env bash
# Installs every Debian package LayerProof's build, tests and benchmarks need.
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
  qemu-user g++-aarch64-linux-gnu
)
if ((with_browser)); then packages+=(chromium); fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
