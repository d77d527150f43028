# One helper per kind of target keeps every module's CMakeLists.txt short.
#
#   layerproof_library(NAME <name> SRCS <files...> [DEPS <targets...>])
#     -> static library layerproof_<name>, alias layerproof::<name>
#   layerproof_test(NAME <name> SRCS <files...> [DEPS <targets...>] [LABELS ...]
#                   [QEMU_SKIP <gtest filter>])
#     -> GoogleTest executable registered with CTest (gtest_discover_tests);
#        the tests QEMU_SKIP matches (e.g. "*.Error*": too slow under qemu)
#        are labelled qemu_skip instead, and scripts/test-aarch64.sh skips
#        them.

# The determinism contract's host flags (docs/determinism.md §1): no implicit
# fma contraction, no fast-math, SSE/AVX arithmetic only (never x87).
set(LAYERPROOF_FP_FLAGS -ffp-contract=off -fno-fast-math -fno-unsafe-math-optimizations
    -fno-finite-math-only)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  list(APPEND LAYERPROOF_FP_FLAGS -mfpmath=sse)
endif()

function(layerproof_apply_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${LAYERPROOF_FP_FLAGS} -Wall -Wextra>)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>)
endfunction()

function(layerproof_library)
  cmake_parse_arguments(LP "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(layerproof_${LP_NAME} STATIC ${LP_SRCS})
  add_library(layerproof::${LP_NAME} ALIAS layerproof_${LP_NAME})
  layerproof_apply_flags(layerproof_${LP_NAME})
  target_link_libraries(layerproof_${LP_NAME} PUBLIC ${LP_DEPS} PRIVATE ${LP_PRIVATE_DEPS})
endfunction()

function(layerproof_test)
  # SLOW and QEMU_SKIP: gtest filters (e.g. "Suite.Exhaustive*:Other.*") of
  # tests registered apart, labelled `slow` (exhaustive sweeps that take
  # minutes: scripts/test-slow.sh runs them, the default suite does not) or
  # `qemu_skip` (too slow under qemu-user). Each registration carries one
  # label only: a list-valued LABELS does not survive gtest_discover_tests'
  # argument passing.
  cmake_parse_arguments(LP "" "NAME;QEMU_SKIP;SLOW" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${LP_NAME} ${LP_SRCS})
  layerproof_apply_flags(${LP_NAME})
  target_link_libraries(${LP_NAME} PRIVATE ${LP_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(NOT LP_LABELS)
    set(LP_LABELS unit)
  endif()
  if(CMAKE_CROSSCOMPILING)
    # Under qemu-user: let CTest run the binary through the emulator.
    set(discovery DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120)
  else()
    set(discovery DISCOVERY_TIMEOUT 60)
  endif()
  set(apart "")
  if(LP_SLOW)
    gtest_discover_tests(${LP_NAME} ${discovery} TEST_FILTER "${LP_SLOW}"
      PROPERTIES LABELS slow TIMEOUT 3600)
    list(APPEND apart "${LP_SLOW}")
  endif()
  if(LP_QEMU_SKIP)
    gtest_discover_tests(${LP_NAME} ${discovery} TEST_FILTER "${LP_QEMU_SKIP}"
      PROPERTIES LABELS qemu_skip)
    list(APPEND apart "${LP_QEMU_SKIP}")
  endif()
  if(apart)
    list(JOIN apart ":" excluded)
    gtest_discover_tests(${LP_NAME} ${discovery} TEST_FILTER "-${excluded}"
      PROPERTIES LABELS "${LP_LABELS}")
  else()
    gtest_discover_tests(${LP_NAME} ${discovery} PROPERTIES LABELS "${LP_LABELS}")
  endif()
endfunction()
