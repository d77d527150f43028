// Ends the ISA region an avx*_target_begin.h opened.
#pragma GCC pop_options
#undef LAYERPROOF_TARGET_AVX512
#undef LAYERPROOF_TARGET_AVX2
