// Which sanitizer this test binary is built with (scripts/sanitize.sh), for
// the few checks whose bounds are the regular build's: RSS under ASan's
// quarantine (flood_test.cc), a child's start-up time under TSan
// (power_loss_test.cc). GCC defines __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__; clang answers __has_feature.
#ifndef LAYERPROOF_TESTS_INTEGRATION_SANITIZER_BUILD_H_
#define LAYERPROOF_TESTS_INTEGRATION_SANITIZER_BUILD_H_

namespace layerproof::integration {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kUnderAddressSanitizer = __has_feature(address_sanitizer);
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kUnderThreadSanitizer = __has_feature(thread_sanitizer);
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

}  // namespace layerproof::integration

#endif  // LAYERPROOF_TESTS_INTEGRATION_SANITIZER_BUILD_H_
