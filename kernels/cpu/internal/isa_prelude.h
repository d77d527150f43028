// Everything the ISA translation units include that is not ISA code: the
// standard library, <immintrin.h> and the project's plain headers. An ISA
// .cc includes this first, then switches the ISA on with
// avx512_target_begin.h / avx2_target_begin.h. Inline functions and std::
// templates are compiled for the target in force where they are *defined*,
// so everything defined here stays baseline x86-64 code, and no AVX-512
// copy of a shared inline function can reach the linker (docs/kernels.md,
// isa_symbols_test).
#ifndef LAYERPROOF_KERNELS_CPU_INTERNAL_ISA_PRELUDE_H_
#define LAYERPROOF_KERNELS_CPU_INTERNAL_ISA_PRELUDE_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

// GCC 12's AVX-512 intrinsics build some results from a self-initialised
// _mm512_undefined_*() and trip -Wuninitialized (GCC PR 105593, fixed in
// 13) wherever they are inlined; silenced for the intrinsic headers only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "kernels/backend.h"
#include "kernels/cpu/internal/avx2_gemm.h"
#include "kernels/cpu/internal/avx512_gemm.h"
#include "kernels/cpu/internal/isa_ops.h"
#include "kernels/dtype.h"
#include "kernels/ref/reduction.h"

#endif  // LAYERPROOF_KERNELS_CPU_INTERNAL_ISA_PRELUDE_H_
