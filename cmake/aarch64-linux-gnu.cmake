# CMake toolchain file: cross-compile for 64-bit Arm Linux with Debian's
# g++-aarch64-linux-gnu and run the target's binaries (tests, gtest discovery)
# under qemu-user. Used by scripts/test-aarch64.sh:
#
#   cmake -S . -B build-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#     -DLAYERPROOF_KERNELS_ONLY=ON -DLAYERPROOF_BUILD_BENCH=OFF
#
# Needs the Debian packages g++-aarch64-linux-gnu and qemu-user
# (scripts/setup.sh installs both).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(LP_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${LP_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${LP_AARCH64_TRIPLE}-g++)

# Debian's multiarch cross sysroot.
set(LP_AARCH64_SYSROOT /usr/${LP_AARCH64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${LP_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# CTest and gtest_discover_tests run target binaries through this; -L points
# qemu's dynamic loader at the cross libc / libstdc++.
set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-aarch64;-L;${LP_AARCH64_SYSROOT}")
