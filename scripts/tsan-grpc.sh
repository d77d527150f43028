#!/usr/bin/env bash
# Builds Debian's own gRPC source, the version the machine has installed,
# with -fsanitize=thread, for scripts/sanitize.sh tsan (docs/hardening.md,
# "Sanitizers", says why: TSan sees a hand-off only when both of its halves
# are instrumented, and gRPC's per-call objects pass between gRPC's threads
# inside libgrpc). Prints the folder holding the instrumented libgrpc++,
# libgrpc, libgpr, libupb and libaddress_sorting, with Debian's sonames, so
# that LD_LIBRARY_PATH puts them in place of the packaged ones: the TSan
# build compiles and links against the packaged headers and libraries as
# every other build does, and only what runs changes.
#
# Idempotent: the source and the build stay in
# ${LAYERPROOF_TSAN_GRPC:-~/.cache/layerproof/grpc-tsan}/<version>; a second
# run that finds the libraries builds nothing and needs no network. The
# first run adds Debian's deb-src line (apt's sources, as root) when apt has
# none, fetches the source package through apt, and builds about 850 objects
# (10 minutes on 2 cores shared with another build, 2026-12-05).
# Usage: scripts/tsan-grpc.sh   (progress on stderr, the folder on stdout)
set -euo pipefail

version=$(dpkg-query -W -f='${source:Version}' libgrpc++-dev)
base="${LAYERPROOF_TSAN_GRPC:-${HOME}/.cache/layerproof/grpc-tsan}/$version"
libs="$base/build"
if [[ -f "$libs/.complete" ]]; then
  echo "$libs"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
# apt-get source needs a deb-src entry; Debian's images ship only deb.
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list \
  /etc/apt/sources.list.d/; then
  echo "tsan-grpc: adding Debian's deb-src entry for apt-get source" >&2
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" \
    "Suites: $codename $codename-updates" "Components: main" \
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
    $sudo tee /etc/apt/sources.list.d/layerproof-deb-src.sources >/dev/null
  $sudo apt-get update >&2
fi

mkdir -p "$base"
if [[ ! -f "$base/src/CMakeLists.txt" ]]; then
  rm -rf "$base/fetch" "$base/src"
  mkdir -p "$base/fetch"
  (cd "$base/fetch" && apt-get source --download-only "grpc=$version" >&2)
  # dpkg-source applies Debian's patches (system Abseil, no BoringSSL), so
  # the library is built as the package was.
  dpkg-source -x "$base/fetch"/grpc_*.dsc "$base/src" >&2
fi

# The package's own configuration (debian/rules): every dependency from the
# system, shared libraries with the package's sonames. The code generators
# are not built (the packaged protoc plugin generates the same code), nor
# grpc++_reflection, which stays the packaged one (it needs them).
protoc_lib=$(ls /usr/lib/*/libprotoc.so.* | head -1)
CC=clang-14 CXX=clang++-14 cmake -S "$base/src" -B "$libs" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
  -DBUILD_SHARED_LIBS=ON -DgRPC_BUILD_TESTS=OFF -DgRPC_BUILD_CODEGEN=OFF \
  -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF \
  -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package \
  -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_RE2_PROVIDER=package \
  -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
  -DProtobuf_PROTOC_LIBRARY="$protoc_lib" >&2
cmake --build "$libs" --parallel "$(nproc)" --target grpc++ >&2
touch "$libs/.complete"
echo "$libs"
