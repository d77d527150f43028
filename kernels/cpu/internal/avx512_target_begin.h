// Switches the AVX-512 kernels' ISA on for the rest of an ISA translation
// unit, after kernels/cpu/internal/isa_prelude.h; isa_target_end.h switches
// it off. No include guard: it is a region marker, included once per unit.
// Only functions defined after it are compiled for AVX-512.
#if defined(__clang__)
// clang ignores #pragma GCC target; its attribute pragma gives every
// function declared in the region (lambdas and templates included) the
// same target (the sanitizer and fuzzing builds use clang).
// A unit may add features by defining LAYERPROOF_AVX512_EXTRA_FEATURES
// (",avx512vnni") first; one function takes one target attribute only.
#ifndef LAYERPROOF_AVX512_EXTRA_FEATURES
#define LAYERPROOF_AVX512_EXTRA_FEATURES ""
#endif
#pragma clang attribute push(                                                                   \
    __attribute__((target(                                                                      \
        "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c" LAYERPROOF_AVX512_EXTRA_FEATURES))), \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
#endif
#define LAYERPROOF_TARGET_AVX512 1
