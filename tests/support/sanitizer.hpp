#pragma once
/// How much slower the processes a test starts are under a sanitizer (the asan preset): each
/// starts about 0.4 s later and runs several times slower, more so when the suite runs tests
/// side by side. Tests whose deadlines or signals race those processes stretch them by this.

namespace gpucheck::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr int k_sanitizer_slowdown = 6;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr int k_sanitizer_slowdown = 6;
#else
inline constexpr int k_sanitizer_slowdown = 1;
#endif
#else
inline constexpr int k_sanitizer_slowdown = 1;
#endif

} // namespace gpucheck::testing
