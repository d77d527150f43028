// Ends the ISA region an avx*_target_begin.h opened.
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#undef LAYERPROOF_TARGET_AVX512
#undef LAYERPROOF_TARGET_AVX2
#undef LAYERPROOF_AVX512_EXTRA_FEATURES
