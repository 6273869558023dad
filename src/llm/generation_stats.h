// Timing and size figures of one run, shared by every runner (float reference, compiled
// programs) so their reports read the same. Times in milliseconds, rates in tokens per second.
#pragma once

#include <cstdint>
#include <string>

namespace genai {

struct GenerationStats {
  int64_t prompt_tokens = 0;     // tokens prefilled, over all turns
  int64_t generated_tokens = 0;  // tokens produced (stop tokens excluded), over all turns
  double load_ms = 0;            // set by the caller: checkpoint/program loading
  double ttft_ms = 0;            // first turn: start of prefill to the first sampled token
  double prefill_ms = 0;         // time in prompt forwards
  double decode_ms = 0;          // time in decode calls
  int64_t decode_steps = 0;      // decode calls run
  int64_t decode_tokens = 0;     // tokens they produced (lookahead decoding: up to ngram per call)
  int64_t lookahead_calls = 0;   // lookahead decoding: tree calls, and the tokens of verified
  int64_t lookahead_accepted = 0;  // n-grams among decode_tokens
  int64_t evictions = 0;           // attention-sink evictions (set by the caller)
  int64_t images = 0;              // --image_path images, and the time to decode, split and encode
  int64_t image_tiles = 0;         // them (set by the caller)
  double image_ms = 0;
  int64_t audio_clips = 0;         // --audio_path clips, and the time to read and encode them
  double audio_ms = 0;

  double prefill_tok_s() const { return prefill_ms > 0 ? prompt_tokens * 1000.0 / prefill_ms : 0.0; }
  double decode_tok_s() const { return decode_ms > 0 ? decode_tokens * 1000.0 / decode_ms : 0.0; }
};

// Peak resident set size of this process so far (getrusage ru_maxrss), in MiB.
double peak_rss_mb();

// Human-readable multi-line summary for stderr (no trailing newline).
std::string format_stats(const GenerationStats& stats, double peak_rss_mb);

}  // namespace genai
