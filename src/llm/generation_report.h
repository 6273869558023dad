// JSON rendering of a generation result (`genai run --json` and the compiled-program runner).
#pragma once

#include <nlohmann/json.hpp>

#include "llm/generation.h"

namespace genai {

// {text, tokens, prompt_tokens, stop_reason, turns: [...], stats: {prompt_tokens,
// generated_tokens, load_ms, ttft_ms, prefill_tok_s, decode_tok_s}, peak_rss_mb}
nlohmann::json generation_json(const GenerationResult& result, double peak_rss_mb);

}  // namespace genai
