// Switches the AVX-512 kernels' ISA on for the rest of an ISA translation
// unit, after kernels/cpu/internal/isa_prelude.h; isa_target_end.h switches
// it off. No include guard: it is a region marker, included once per unit.
// Only functions defined after it are compiled for AVX-512.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
#define LAYERPROOF_TARGET_AVX512 1
