// The vectorised column sums of split_matmul_q. Compiled once per target by
// hwy/foreach_target.h (the targets of kernels/simd_targets.h); HWY_DYNAMIC_DISPATCH picks the best
// one the CPU has. Four vectors of columns are held while the rows stream past, as a matmul
// kernel does; codes are widened to int32 and then to double.
#include "kernels/split_matmul_simd.h"

#if defined(GENAI_KERNELS_SCALAR_ONLY)

namespace genai::kernels::split_simd {
void accumulate_rows(const double* a, int64_t rows, const uint8_t* b, int64_t stride, int64_t cols, double* acc) {
  accumulate_rows_scalar(a, rows, b, stride, cols, acc);
}
void accumulate_rows(const double* a, int64_t rows, const uint16_t* b, int64_t stride, int64_t cols, double* acc) {
  accumulate_rows_scalar(a, rows, b, stride, cols, acc);
}
bool split_matmul_q_int(const void*, ActType, const QParams&, std::span<const MatmulSegment>, ActType, const QParams&,
                        int64_t, int64_t, const std::vector<MatmulBatch>&, const QParams&, ActType, void*) {
  return false;
}
}  // namespace genai::kernels::split_simd

#else  // the Highway build

// The same target set as the simd_<family>.cpp files.
#include "kernels/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/split_matmul_simd.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace genai::kernels::split_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
void AccumulateRows(const double* a, int64_t rows, const T* b, int64_t stride, int64_t cols, double* acc) {
#if HWY_TARGET == HWY_SCALAR
  accumulate_rows_scalar(a, rows, b, stride, cols, acc);
#else
  const hn::ScalableTag<double> dd;
  const hn::Rebind<int32_t, decltype(dd)> di;
  const hn::Rebind<T, decltype(dd)> dt;
  const int64_t L = static_cast<int64_t>(hn::Lanes(dd));
  auto load = [&](const T* p) { return hn::PromoteTo(dd, hn::PromoteTo(di, hn::LoadU(dt, p))); };
  int64_t j = 0;
  for (; j + 4 * L <= cols; j += 4 * L) {
    auto s0 = hn::Zero(dd), s1 = hn::Zero(dd), s2 = hn::Zero(dd), s3 = hn::Zero(dd);
    for (int64_t p = 0; p < rows; ++p) {
      const auto av = hn::Set(dd, a[p]);
      const T* row = b + p * stride + j;
      s0 = hn::Add(s0, hn::Mul(av, load(row)));
      s1 = hn::Add(s1, hn::Mul(av, load(row + L)));
      s2 = hn::Add(s2, hn::Mul(av, load(row + 2 * L)));
      s3 = hn::Add(s3, hn::Mul(av, load(row + 3 * L)));
    }
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j), s0), dd, acc + j);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j + L), s1), dd, acc + j + L);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j + 2 * L), s2), dd, acc + j + 2 * L);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j + 3 * L), s3), dd, acc + j + 3 * L);
  }
  for (; j + L <= cols; j += L) {
    auto s = hn::Zero(dd);
    for (int64_t p = 0; p < rows; ++p) s = hn::Add(s, hn::Mul(hn::Set(dd, a[p]), load(b + p * stride + j)));
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j), s), dd, acc + j);
  }
  if (j < cols) accumulate_rows_scalar(a, rows, b + j, stride, cols - j, acc + j);
#endif
}

void AccumulateRowsU8(const double* a, int64_t rows, const uint8_t* b, int64_t stride, int64_t cols, double* acc) {
  AccumulateRows(a, rows, b, stride, cols, acc);
}
void AccumulateRowsU16(const double* a, int64_t rows, const uint16_t* b, int64_t stride, int64_t cols, double* acc) {
  AccumulateRows(a, rows, b, stride, cols, acc);
}

}  // namespace HWY_NAMESPACE
}  // namespace genai::kernels::split_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace genai::kernels::split_simd {

HWY_EXPORT(AccumulateRowsU8);
HWY_EXPORT(AccumulateRowsU16);

void accumulate_rows(const double* a, int64_t rows, const uint8_t* b, int64_t stride, int64_t cols, double* acc) {
  HWY_DYNAMIC_DISPATCH(AccumulateRowsU8)(a, rows, b, stride, cols, acc);
}
void accumulate_rows(const double* a, int64_t rows, const uint16_t* b, int64_t stride, int64_t cols, double* acc) {
  HWY_DYNAMIC_DISPATCH(AccumulateRowsU16)(a, rows, b, stride, cols, acc);
}

}  // namespace genai::kernels::split_simd
#endif  // HWY_ONCE

#endif  // GENAI_KERNELS_SCALAR_ONLY
