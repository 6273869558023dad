#include "kernels/quantized_silu.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "kernels/float_arith.h"
#include "kernels/quantized_mul.h"
#include "kernels/scalar_kernels.h"
#include "kernels/simd_kernels.h"

namespace genai::kernels {
namespace {

// The result code of one input code.
uint16_t silu_code(int32_t q, const QParams& ex, const QParams& ey, double ratio) {
  const int32_t dx = q - ex.zero_point;
  return static_cast<uint16_t>(mul_code(dx, htp_sigmoid_code(static_cast<float>(dx) * ex.scale), ratio, ey));
}

// The result code of every input code for one pair of encodings: a decoder has one pair per layer,
// and a table read costs less than the exp. Tables are kept for the process (at most kMaxTables,
// 128 KiB each), shared by every thread; past that, codes are computed one by one.
constexpr size_t kMaxTables = 128;
using TableKey = std::tuple<uint32_t, int32_t, uint32_t, int32_t>;  // scales by their bits (NaN too)

const std::vector<uint16_t>* silu_table(const QParams& ex, const QParams& ey, double ratio) {
  static std::mutex mutex;
  static std::map<TableKey, std::unique_ptr<const std::vector<uint16_t>>> tables;
  const TableKey key{std::bit_cast<uint32_t>(ex.scale), ex.zero_point, std::bit_cast<uint32_t>(ey.scale), ey.zero_point};
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = tables.find(key); it != tables.end()) return it->second.get();
  if (tables.size() >= kMaxTables) return nullptr;
  auto t = std::make_unique<std::vector<uint16_t>>(65536);
  for (int32_t q = 0; q < 65536; ++q) (*t)[static_cast<size_t>(q)] = silu_code(q, ex, ey, ratio);
  return (tables[key] = std::move(t)).get();
}

}  // namespace

QParams htp_sigmoid_grid() { return {1.0f / 65535.0f, 0, 0, 65535}; }

int32_t htp_sigmoid_code(float x) {
  // 15 fraction bits, floored, then doubled onto the 1/65535 grid: every code the HTP gives is even.
  const float sigmoid = 1.0f / (1.0f + exp_f32(-x));
  if (!(sigmoid > 0.0f)) return 0;  // also NaN (a corrupted payload's scale)
  return std::min(2 * static_cast<int32_t>(std::floor(sigmoid * 32768.0f)), 65535);
}

bool htp_silu_applies(const QParams& x, const QParams& y) {
  return x.qmin == 0 && x.qmax == 65535 && y.qmin == 0 && y.qmax == 65535;
}

namespace scalar {

void silu_q(const uint16_t* x, int64_t n, const QParams& ex, const QParams& ey, uint16_t* y) {
  const double ratio = product_ratio(ex.scale, htp_sigmoid_grid().scale, ey);
  if (const std::vector<uint16_t>* table = n >= 256 ? silu_table(ex, ey, ratio) : nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (*table)[x[i]];
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = silu_code(x[i], ex, ey, ratio);
}

}  // namespace scalar

void silu_q(const uint16_t* x, int64_t n, const QParams& ex, const QParams& ey, uint16_t* y) {
  if (n <= 0) return;
  if (use_simd()) simd::silu_q(x, n, ex, ey, y);
  else scalar::silu_q(x, n, ex, ey, y);
}

}  // namespace genai::kernels
