# Sanitizer and fuzzing builds (issue 17; docs/hardening.md says how to run
# them). Both apply to every C and C++ target of the build, libraries
# included, so a finding anywhere in our code is reported; third-party
# libraries come from Debian uninstrumented.
#
#   LAYERPROOF_SANITIZE  "" (default), or a -fsanitize= list:
#                        "address,undefined" (scripts/sanitize.sh asan) or
#                        "thread" (scripts/sanitize.sh tsan). Every finding
#                        aborts the test that made it (no recovery).
#   LAYERPROOF_FUZZ      builds the libFuzzer targets of tests/fuzz/ with
#                        clang: every object gets coverage instrumentation
#                        (-fsanitize=fuzzer-no-link), the targets link
#                        libFuzzer's main (-fsanitize=fuzzer).
#
# Sanitizer builds turn CUDA off (scripts/sanitize.sh, scripts/fuzz.sh pass
# -DLAYERPROOF_CUDA=OFF): nvcc objects are not instrumented.
set(LAYERPROOF_SANITIZE "" CACHE STRING
    "-fsanitize= list for every target (address,undefined or thread)")
option(LAYERPROOF_FUZZ "Build the libFuzzer targets in tests/fuzz (clang)" OFF)

if(LAYERPROOF_SANITIZE)
  set(lp_san -fsanitize=${LAYERPROOF_SANITIZE} -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${lp_san}>")
  add_link_options(-fsanitize=${LAYERPROOF_SANITIZE})
endif()

if(LAYERPROOF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LAYERPROOF_FUZZ needs clang (scripts/fuzz.sh sets "
                        "CXX=clang++-14)")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
endif()
