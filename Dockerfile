# syntax=docker/dockerfile:1
# The `layerproof` binary in a Debian 12 image that runs as a non-root user
# and holds only the shared libraries the binary links (docs/operations.md
# "Container image"; scripts/test-dockerfile.sh checks that list against
# the binary's own dependencies).
#
#   docker build -t layerproof:0.1.0 .
#   docker build -t layerproof-cuda:0.1.0 --build-context cuda=/usr/local/cuda .
#
# The second form builds the CUDA backend with the toolkit directory it is
# given (CUDA 12 or later; its runtime is linked statically, so the image
# needs no CUDA package: the NVIDIA container runtime brings the driver).
# The same binary also serves on CPUs.

# The CUDA toolkit, if one is passed as the build context "cuda"; empty
# otherwise, and the build is CPU-only.
FROM scratch AS cuda

FROM debian:12 AS build
ARG CUDA_ARCHITECTURES=""
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config ca-certificates \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      libssl-dev librocksdb-dev libabsl-dev nlohmann-json3-dev \
      libonig-dev libutf8proc-dev libcpp-httplib-dev prometheus-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN --mount=type=bind,from=cuda,target=/usr/local/cuda \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DLAYERPROOF_BUILD_TESTS=OFF -DLAYERPROOF_BUILD_BENCH=OFF \
      ${CUDA_ARCHITECTURES:+-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}} \
 && cmake --build /build --target layerproof \
 && install -D -m 0755 -s /build/cli/layerproof /out/usr/local/bin/layerproof \
 && install -D -m 0644 docs/operations.md /out/usr/share/doc/layerproof/operations.md

FROM debian:12-slim
# Exactly the packages of the libraries `ldd layerproof` lists, beyond what
# debian:12-slim has (libc6, libgcc-s1, libstdc++6).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libabsl20220623 libbrotli1 libbz2-1.0 libc-ares2 libcpp-httplib0.11 \
      libgrpc++1.51 libgrpc29 liblz4-1 libonig5 libprometheus-cpp-core1.0 \
      libprotobuf32 libre2-9 libsnappy1v5 libssl3 libutf8proc2 libzstd1 \
      zlib1g \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 layerproof \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin layerproof
COPY --from=build /out/ /
USER 10001:10001
ENTRYPOINT ["/usr/local/bin/layerproof"]
CMD ["--help"]
