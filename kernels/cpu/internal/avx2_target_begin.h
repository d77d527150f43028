// Switches AVX2 + FMA + F16C on for the rest of an ISA translation unit,
// after kernels/cpu/internal/isa_prelude.h; isa_target_end.h switches it off.
// No include guard: it is a region marker, included once per unit.
#if defined(__clang__)
// clang ignores #pragma GCC target; its attribute pragma gives every
// function declared in the region (lambdas and templates included) the
// same target (the sanitizer and fuzzing builds use clang).
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#define LAYERPROOF_TARGET_AVX2 1
