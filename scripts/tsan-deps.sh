#!/usr/bin/env bash
# Builds Debian's own sources of Abseil, protobuf, gRPC and RocksDB, the
# versions the machine has installed, with -fsanitize=thread, for
# scripts/sanitize.sh tsan (docs/hardening.md, "Sanitizers", says why: TSan
# sees a hand-off only when both of its halves are instrumented, and
# Abseil's locks, protobuf's arenas, gRPC's per-call objects and RocksDB's
# write groups make their hand-offs inside those libraries). Prints a
# library path (folders joined by ':') holding the instrumented libraries
# with Debian's sonames, so that LD_LIBRARY_PATH puts them in place of the
# packaged ones: the TSan build compiles and links against the packaged
# headers and libraries as every other build does, and only what runs
# changes. There is still one copy of each library in a process, the
# instrumented one.
#
# Idempotent: each package's source and build stay in
# ${LAYERPROOF_TSAN_CACHE:-~/.cache/layerproof}/<package>-tsan/<version>; a
# second run that finds the libraries builds nothing and needs no network.
# The first run adds Debian's deb-src entry (apt's sources, as root) when
# apt has none, fetches the source packages through apt, and builds about
# 250 objects for Abseil, 100 for protobuf, 850 for gRPC and 330 for RocksDB
# (10 minutes for gRPC on 2 cores shared with another build, 2026-12-05;
# RocksDB 12 minutes beside a .ci/run, 2026-12-06).
# Usage: scripts/tsan-deps.sh   (progress on stderr, the path on stdout)
set -euo pipefail

cache="${LAYERPROOF_TSAN_CACHE:-${HOME}/.cache/layerproof}"

# apt-get source needs a deb-src entry; Debian's images ship only deb.
ensure_deb_src() {
  if grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list \
    /etc/apt/sources.list.d/; then
    return
  fi
  local sudo="" codename
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  echo "tsan-deps: adding Debian's deb-src entry for apt-get source" >&2
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" \
    "Suites: $codename $codename-updates" "Components: main" \
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
    $sudo tee /etc/apt/sources.list.d/layerproof-deb-src.sources >/dev/null
  $sudo apt-get update >&2
}

# build_tsan SOURCE BINARY_PACKAGE TARGET [CMAKE ARGS...]: builds TARGET of
# Debian's source package SOURCE, at the version of the installed
# BINARY_PACKAGE, with TSan into <cache>/SOURCE-tsan/<version>/, once, with
# every shared library in its lib/ folder; prints that folder.
build_tsan() {
  local source="$1" binary="$2" target="$3"
  shift 3
  local version base
  version=$(dpkg-query -W -f='${source:Version}' "$binary")
  base="$cache/$source-tsan/$version"
  if [[ -f "$base/lib/.complete" ]]; then
    echo "$base/lib"
    return
  fi
  mkdir -p "$base"
  if [[ ! -f "$base/src/CMakeLists.txt" ]]; then
    ensure_deb_src
    rm -rf "$base/fetch" "$base/src"
    mkdir -p "$base/fetch"
    (cd "$base/fetch" && apt-get source --download-only "$source=$version" >&2)
    # dpkg-source applies Debian's patches, so the library is built as the
    # package was.
    dpkg-source -x "$base/fetch/${source}_"*.dsc "$base/src" >&2
  fi
  CC=clang-14 CXX=clang++-14 cmake -S "$base/src" -B "$base/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
    -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$base/lib" \
    -DBUILD_SHARED_LIBS=ON "$@" >&2
  cmake --build "$base/build" --parallel "$(nproc)" --target "$target" >&2
  touch "$base/lib/.complete"
  echo "$base/lib"
}

# Abseil as debian/rules configures its shared build. Every library: the
# process loads whichever of them gRPC, protobuf and ours link.
absl=$(build_tsan abseil libabsl-dev all -DCMAKE_CXX_STANDARD=17)

# protobuf's runtime library. Debian builds it with autotools; its CMake
# build of the same source gives the same soname (libprotobuf.so.32,
# cmake/libprotobuf.cmake), which is what LD_LIBRARY_PATH needs. Neither
# protoc nor the tests: the packaged protoc generates our code.
protobuf=$(build_tsan protobuf libprotobuf-dev libprotobuf \
  -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
  -Dprotobuf_BUILD_SHARED_LIBS=ON -Dprotobuf_WITH_ZLIB=ON)

# gRPC as debian/rules configures it: every dependency from the system
# (Debian's patches: system Abseil, no BoringSSL), shared libraries with the
# package's sonames. The code generators are not built (the packaged protoc
# plugin generates the same code), nor grpc++_reflection, which stays the
# packaged one (it needs them).
protoc_lib=$(ls /usr/lib/*/libprotoc.so.* | head -1)
grpc=$(build_tsan grpc libgrpc++-dev grpc++ \
  -DgRPC_BUILD_TESTS=OFF -DgRPC_BUILD_CODEGEN=OFF \
  -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF \
  -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package \
  -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_RE2_PROVIDER=package \
  -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
  -DProtobuf_PROTOC_LIBRARY="$protoc_lib")
# RocksDB as debian/rules configures it (Debian's compression libraries,
# PORTABLE), its shared library only: librocksdb.so.7.8, which the TSan
# build links instead of the librocksdb.a every other build links
# (cmake/LayerproofSanitize.cmake). WITH_TSAN is RocksDB's own switch for
# this build.
rocksdb=$(build_tsan rocksdb librocksdb-dev rocksdb-shared \
  -DWITH_BZ2=ON -DWITH_LZ4=ON -DWITH_ZLIB=ON -DWITH_ZSTD=ON -DWITH_SNAPPY=ON \
  -DROCKSDB_BUILD_SHARED=ON -DWITH_TESTS=OFF -DWITH_TOOLS=OFF \
  -DWITH_CORE_TOOLS=OFF -DWITH_BENCHMARK_TOOLS=OFF -DPORTABLE=ON \
  -DFAIL_ON_WARNINGS=OFF -DWITH_TSAN=ON)
echo "$absl:$protobuf:$grpc:$rocksdb"
