// Switches AVX2 + FMA + F16C on for the rest of an ISA translation unit,
// after kernels/cpu/internal/isa_prelude.h; isa_target_end.h switches it off.
// No include guard: it is a region marker, included once per unit.
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define LAYERPROOF_TARGET_AVX2 1
