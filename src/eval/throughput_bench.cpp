#include "eval/throughput_bench.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/sampler.h"

namespace genai {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<int32_t> random_tokens(Xoshiro256& rng, int64_t n, int32_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& id : t) id = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(vocab));
  return t;
}

// Seconds for one prompt batch from an empty cache.
double time_prefill(DecoderSession& s, const std::vector<int32_t>& tokens) {
  s.reset();
  const auto t0 = Clock::now();
  s.forward(tokens);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Seconds for tokens.size() single-token steps from an empty cache.
double time_decode(DecoderSession& s, const std::vector<int32_t>& tokens) {
  s.reset();
  const auto t0 = Clock::now();
  for (const int32_t& id : tokens) s.forward(std::span(&id, 1));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

ThroughputResult summarise(std::string test, int64_t n, const std::vector<double>& seconds) {
  ThroughputResult r{std::move(test), n, {}, 0, 0};
  for (double s : seconds) r.tok_s.push_back(static_cast<double>(n) / s);
  for (double v : r.tok_s) r.mean += v;
  r.mean /= static_cast<double>(r.tok_s.size());
  if (r.tok_s.size() > 1) {
    double ss = 0;
    for (double v : r.tok_s) ss += (v - r.mean) * (v - r.mean);
    r.stddev = std::sqrt(ss / static_cast<double>(r.tok_s.size() - 1));
  }
  return r;
}

}  // namespace

std::vector<ThroughputResult> run_throughput(DecoderSession& session, const ThroughputConfig& c) {
  if (c.reps < 1) throw_input_error("--reps must be >= 1, got {}", c.reps);
  if (c.pp < 0 || c.tg < 0) throw_input_error("--pp and --tg must be >= 0");
  if (c.pp > session.max_context()) throw_input_error("--pp {} exceeds the context of {} tokens", c.pp, session.max_context());
  if (c.tg > session.max_context()) throw_input_error("--tg {} exceeds the context of {} tokens", c.tg, session.max_context());
  Xoshiro256 rng(c.seed);
  std::vector<ThroughputResult> out;
  if (c.pp > 0) {
    const auto tokens = random_tokens(rng, c.pp, session.vocab_size());
    time_prefill(session, tokens);  // warm-up: page in weights, spin up threads
    std::vector<double> secs;
    for (int r = 0; r < c.reps; ++r) secs.push_back(time_prefill(session, tokens));
    out.push_back(summarise(fmt::format("pp{}", c.pp), c.pp, secs));
  }
  if (c.tg > 0) {
    const auto tokens = random_tokens(rng, c.tg, session.vocab_size());
    time_decode(session, std::vector<int32_t>(tokens.begin(), tokens.begin() + std::min<int64_t>(c.tg, 4)));
    std::vector<double> secs;
    for (int r = 0; r < c.reps; ++r) secs.push_back(time_decode(session, tokens));
    out.push_back(summarise(fmt::format("tg{}", c.tg), c.tg, secs));
  }
  session.reset();
  return out;
}

std::string throughput_markdown(const BenchModelInfo& info, const std::vector<ThroughputResult>& results) {
  std::string s =
      "| model | size | params | backend | threads | test | t/s |\n"
      "| ----- | ---: | -----: | ------- | ------: | ---: | --: |\n";
  const double mib = static_cast<double>(info.size_bytes) / (1024.0 * 1024.0);
  const std::string size = mib >= 1024 ? fmt::format("{:.2f} GiB", mib / 1024.0) : fmt::format("{:.2f} MiB", mib);
  const double p = static_cast<double>(info.params);
  const std::string params = p >= 1e9 ? fmt::format("{:.2f} B", p / 1e9) : fmt::format("{:.2f} M", p / 1e6);
  for (const ThroughputResult& r : results)
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {:.2f} ± {:.2f} |\n", info.model, size, params, info.backend,
                     info.threads, r.test, r.mean, r.stddev);
  return s;
}

}  // namespace genai
