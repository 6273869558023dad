// Whether this test binary runs under AddressSanitizer (the CI's second tree). Sweeps that spawn
// the CLI hundreds of times run fewer rounds there: every spawn of an instrumented `genai` costs
// about ten times as much, and the memory-safety coverage of those paths comes from the same
// inputs run in process and from the fuzzers. The release tree runs the full count.
#pragma once

namespace genai::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// `full` rounds in the release tree, `sanitized` under the sanitizers.
constexpr int rounds(int full, int sanitized) { return kSanitized ? sanitized : full; }

}  // namespace genai::testing
