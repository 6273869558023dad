// Prefill / decode throughput of a DecoderSession, reported like llama-bench: pp<N> runs a prompt
// of N random tokens as one batch, tg<N> runs N single-token decode steps from an empty cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llm/decoder_session.h"

namespace genai {

struct ThroughputConfig {
  int64_t pp = 128;  // prompt tokens (0 = skip)
  int64_t tg = 128;  // generated tokens (0 = skip)
  int reps = 3;      // timed repetitions, after one untimed warm-up
  uint64_t seed = 1; // random token ids
};

struct ThroughputResult {
  std::string test;             // "pp128", "tg128"
  int64_t tokens = 0;
  std::vector<double> tok_s;    // one per repetition
  double mean = 0, stddev = 0;  // sample standard deviation, as llama-bench
};

// Throws InputError when pp or tg exceeds the session's context, or reps < 1.
std::vector<ThroughputResult> run_throughput(DecoderSession& session, const ThroughputConfig& config);

// What llama-bench prints in front of the figures.
struct BenchModelInfo {
  std::string model;    // e.g. "llama 135M F32"
  uint64_t size_bytes = 0;
  uint64_t params = 0;
  std::string backend;  // e.g. "CPU (fp32 reference)"
  int threads = 1;
};

// Markdown table: | model | size | params | backend | threads | test | t/s |
std::string throughput_markdown(const BenchModelInfo& info, const std::vector<ThroughputResult>& results);

}  // namespace genai
