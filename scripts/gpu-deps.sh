#!/usr/bin/env bash
# Copies the header-only dependencies a bare GPU machine lacks into
# .gpu-deps/include/ (git-ignored), to travel to that machine with the
# working tree; scripts/gpu-check.sh points CMake at them when present.
# Today that is nlohmann-json, which kernels/model needs (about 1 MB).
#
# Usage: scripts/gpu-deps.sh   (NLOHMANN_INCLUDE: the directory holding
#   nlohmann/json.hpp, default /usr/include)
set -euo pipefail
cd "$(dirname "$0")/.."

SRC="${NLOHMANN_INCLUDE:-/usr/include}/nlohmann"
if [[ ! -f "${SRC}/json.hpp" ]]; then
  echo "gpu-deps: ${SRC}/json.hpp not found (apt-get install nlohmann-json3-dev)" >&2
  exit 1
fi
rm -rf .gpu-deps/include/nlohmann
mkdir -p .gpu-deps/include
cp -R "${SRC}" .gpu-deps/include/
echo "gpu-deps: copied ${SRC} into .gpu-deps/include/" \
     "($(du -sh .gpu-deps | cut -f1)); carry .gpu-deps to the GPU machine"
