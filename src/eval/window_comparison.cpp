#include "eval/window_comparison.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/progress.h"
#include "core/sampler.h"
#include "eval/quant_evaluation.h"

namespace genai {
namespace {

double log_softmax_at(std::span<const float> logits, int32_t target) {
  double mx = -std::numeric_limits<double>::infinity();
  for (float v : logits) mx = std::max(mx, static_cast<double>(v));
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  return static_cast<double>(logits[static_cast<size_t>(target)]) - mx - std::log(sum);
}

}  // namespace

WindowComparison compare_windows(std::span<const std::span<const int32_t>> windows, int64_t vocab,
                                 std::span<const LogitsSource> sources, const std::string& what) {
  if (sources.empty()) throw_failure("compare_windows: no logits source");
  const size_t V = static_cast<size_t>(vocab);
  WindowComparison c;
  std::vector<double> nll(sources.size(), 0.0), signal(sources.size(), 0.0), noise(sources.size(), 0.0);
  for (const auto& s : sources) c.sources.push_back({s.name});
  ProgressBar bar(what, static_cast<int64_t>(windows.size()));
  std::vector<std::vector<float>> logits(sources.size());
  for (const std::span<const int32_t> window : windows) {
    const size_t n = window.size();
    for (size_t k = 0; k < sources.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      logits[k] = sources[k].logits(window);
      c.sources[k].seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (logits[k].size() != n * V)
        throw_failure("{}: the {} side gave {} logits for a window of {} tokens, expected {}", what, sources[k].name,
                      logits[k].size(), n, n * V);
    }
    const std::vector<float>& ref = logits.front();
    for (size_t k = 0; k < sources.size(); ++k) {
      for (size_t i = 0; i < ref.size(); ++i) {
        const double a = ref[i], d = a - logits[k][i];
        signal[k] += a * a;
        noise[k] += d * d;
      }
      for (size_t i = 0; i + 1 < n; ++i) {
        const std::span<const float> row(logits[k].data() + i * V, V);
        nll[k] -= log_softmax_at(row, window[i + 1]);
        if (argmax(row) == argmax(std::span<const float>(ref.data() + i * V, V))) ++c.sources[k].top1_agreed;
      }
    }
    c.logits_rows += static_cast<int64_t>(n);
    c.predicted_tokens += n > 0 ? static_cast<int64_t>(n) - 1 : 0;
    ++c.windows;
    bar.advance();
  }
  bar.finish();
  for (size_t k = 0; k < sources.size(); ++k) {
    c.sources[k].sqnr_db = sqnr_db(signal[k], noise[k]);
    c.sources[k].perplexity = c.predicted_tokens > 0 ? std::exp(nll[k] / static_cast<double>(c.predicted_tokens))
                                                     : std::numeric_limits<double>::quiet_NaN();
  }
  return c;
}

}  // namespace genai
