#include "llm/generation_report.h"

#include "kernels/kernel_mode.h"

namespace genai {

nlohmann::json generation_json(const GenerationResult& r, double peak_rss_mb) {
  nlohmann::json turns = nlohmann::json::array();
  for (const TurnResult& t : r.turns)
    turns.push_back({{"prompt", t.prompt},
                     {"text", t.text},
                     {"tokens", t.tokens},
                     {"prompt_tokens", t.prompt_tokens},
                     {"prompt_ids", t.prompt_ids},
                     {"stop_reason", stop_reason_name(t.stop_reason)}});
  const GenerationStats& s = r.stats;
  return {{"text", r.text},
          {"tokens", r.tokens},
          {"prompt_tokens", s.prompt_tokens},
          {"stop_reason", r.turns.empty() ? "" : std::string(stop_reason_name(r.turns.back().stop_reason))},
          {"turns", turns},
          {"stats",
           {{"prompt_tokens", s.prompt_tokens},
            {"generated_tokens", s.generated_tokens},
            {"load_ms", s.load_ms},
            {"ttft_ms", s.ttft_ms},
            {"prefill_tok_s", s.prefill_tok_s()},
            {"decode_tok_s", s.decode_tok_s()},
            {"decode_calls", s.decode_steps},
            {"lookahead_calls", s.lookahead_calls},
            {"lookahead_accepted", s.lookahead_accepted},
            {"evictions", s.evictions},
            {"images", s.images},
            {"image_tiles", s.image_tiles},
            {"image_ms", s.image_ms},
            {"audio_clips", s.audio_clips},
            {"audio_ms", s.audio_ms}}},
          {"peak_rss_mb", peak_rss_mb},
          {"kernels", std::string(kernels::active_kernels())}};
}

}  // namespace genai
