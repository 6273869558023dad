#include "model/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace genai {
namespace {

std::vector<double> wavelengths(float rope_theta, int64_t head_dim) {
  std::vector<double> w;
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    const float freq = 1.0f / std::pow(rope_theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
    w.push_back(2.0 * std::numbers::pi / freq);
  }
  return w;
}

bool matches(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 1e-4f * std::max(1.0f, std::fabs(b[i]))) return false;
  return true;
}

}  // namespace

std::vector<float> llama3_rope_freq_factors(const RopeScaling& s, float rope_theta, int64_t head_dim) {
  const double old_len = static_cast<double>(s.original_max_positions);
  const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
  std::vector<float> out;
  for (double wavelen : wavelengths(rope_theta, head_dim)) {
    if (wavelen < high_wavelen) {
      out.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      out.push_back(s.factor);
    } else {
      const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      out.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / s.factor + smooth)));
    }
  }
  return out;
}

std::optional<RopeScaling> fit_llama3_rope_scaling(const std::vector<float>& factors, float rope_theta,
                                                   int64_t head_dim, int64_t original_max_positions) {
  if (factors.empty() || static_cast<int64_t>(factors.size()) != head_dim / 2) return std::nullopt;
  RopeScaling s;
  s.factor = *std::max_element(factors.begin(), factors.end());
  s.original_max_positions = original_max_positions;
  if (!(s.factor > 1.0f)) return std::nullopt;
  // The published Llama 3.x setting first.
  s.low_freq_factor = 1.0f;
  s.high_freq_factor = 4.0f;
  if (matches(llama3_rope_freq_factors(s, rope_theta, head_dim), factors)) return s;
  // Otherwise solve old_len / wavelen = smooth * (high - low) + low from two blended frequencies.
  const auto wl = wavelengths(rope_theta, head_dim);
  std::vector<std::pair<double, double>> pts;  // (smooth, old_len / wavelen)
  for (size_t i = 0; i < factors.size(); ++i) {
    const double f = factors[i];
    if (f <= 1.0 + 1e-6 || f >= s.factor - 1e-6) continue;
    const double smooth = (1.0 / f - 1.0 / s.factor) / (1.0 - 1.0 / s.factor);
    pts.emplace_back(smooth, static_cast<double>(original_max_positions) / wl[i]);
  }
  if (pts.size() < 2 || std::fabs(pts.front().first - pts.back().first) < 1e-9) return std::nullopt;
  const double a = (pts.back().second - pts.front().second) / (pts.back().first - pts.front().first);
  const double low = pts.front().second - a * pts.front().first;
  s.low_freq_factor = static_cast<float>(low);
  s.high_freq_factor = static_cast<float>(low + a);
  if (!(s.low_freq_factor > 0.0f) || !(s.high_freq_factor > s.low_freq_factor)) return std::nullopt;
  if (matches(llama3_rope_freq_factors(s, rope_theta, head_dim), factors)) return s;
  return std::nullopt;
}

}  // namespace genai
