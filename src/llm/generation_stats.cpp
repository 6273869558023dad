#include "llm/generation_stats.h"

#include <algorithm>

#include <sys/resource.h>

#include <fmt/format.h>

namespace genai {

double peak_rss_mb() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

std::string format_stats(const GenerationStats& s, double rss_mb) {
  const std::string lookahead =
      s.lookahead_calls > 0
          ? fmt::format("lookahead: {} tree calls of {} steps, {:.2f} tokens per tree, {} from verified n-grams\n",
                        s.lookahead_calls, s.decode_steps,
                        static_cast<double>(s.lookahead_calls + s.lookahead_accepted) / s.lookahead_calls,
                        s.lookahead_accepted)
                            : std::string();
  const std::string sink =
      s.evictions > 0 ? fmt::format("attention sink: {} evictions\n", s.evictions) : std::string();
  const std::string images =
      s.images > 0 ? fmt::format("images: {} ({} tiles) encoded in {:.1f} ms, {:.1f} ms per tile\n", s.images, s.image_tiles,
                                 s.image_ms, s.image_ms / static_cast<double>(std::max<int64_t>(s.image_tiles, 1)))
                   : std::string();
  const std::string audio =
      s.audio_clips > 0 ? fmt::format("audio: {} clip(s) encoded in {:.1f} ms\n", s.audio_clips, s.audio_ms) : std::string();
  return fmt::format(
      "prompt tokens: {}, generated tokens: {}\n"
      "load: {:.1f} ms, time to first token: {:.1f} ms\n"
      "prefill: {:.2f} tok/s ({:.1f} ms), decode: {:.2f} tok/s ({} steps, {:.1f} ms)\n"
      "{}{}{}{}peak RSS: {:.1f} MiB",
      s.prompt_tokens, s.generated_tokens, s.load_ms, s.ttft_ms, s.prefill_tok_s(), s.prefill_ms, s.decode_tok_s(),
      s.decode_steps, s.decode_ms, lookahead, sink, images, audio, rss_mb);
}

}  // namespace genai
