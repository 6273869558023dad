#include "quant/gptq.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/requantize.h"

namespace genai::quant {
namespace {

// In place: the lower Cholesky factor L of the symmetric positive definite a [n, n] (a = L L^T),
// right-looking: after each column, the trailing rows take a contiguous axpy with a copy of the
// column (in parallel). False when a pivot is not positive.
bool cholesky_lower(std::vector<double>& a, int64_t n) {
  std::vector<double> col(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const double pivot = a[static_cast<size_t>(k * n + k)];
    if (!(pivot > 0.0)) return false;
    const double l = std::sqrt(pivot);
    a[static_cast<size_t>(k * n + k)] = l;
    for (int64_t i = k + 1; i < n; ++i) col[static_cast<size_t>(i)] = a[static_cast<size_t>(i * n + k)] /= l;
    ThreadPool::global().parallel_for(
        n - k - 1,
        [&](int64_t b, int64_t e) {
          for (int64_t i = k + 1 + b; i < k + 1 + e; ++i) {
            const double lik = col[static_cast<size_t>(i)];
            double* row = a.data() + i * n;
            for (int64_t j = k + 1; j <= i; ++j) row[j] -= lik * col[static_cast<size_t>(j)];
          }
        },
        32);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) a[static_cast<size_t>(i * n + j)] = 0.0;
  return true;
}

// In place: the inverse X of the lower triangular l [n, n], row by row: X[i] = (e_i - sum_{k<i}
// l[i][k] X[k]) / l[i][i], each term a contiguous axpy over row k of X.
void invert_lower(std::vector<double>& l, int64_t n) {
  std::vector<double> x(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double* xi = x.data() + i * n;
    xi[i] = 1.0;
    for (int64_t k = 0; k < i; ++k) {
      const double lik = l[static_cast<size_t>(i * n + k)];
      const double* xk = x.data() + k * n;
      for (int64_t j = 0; j <= k; ++j) xi[j] -= lik * xk[j];
    }
    const double d = l[static_cast<size_t>(i * n + i)];
    for (int64_t j = 0; j <= i; ++j) xi[j] /= d;
  }
  l = std::move(x);
}

}  // namespace

GptqFactor gptq_factor(const std::vector<double>& gram, int64_t rows, int64_t n, double damp) {
  if (static_cast<int64_t>(gram.size()) != n * n || rows <= 0) throw_failure("quant: GPTQ needs an [{0}, {0}] Gram matrix", n);
  GptqFactor f;
  f.n = n;
  f.dead.assign(static_cast<size_t>(n), false);
  f.diagonal.resize(static_cast<size_t>(n));
  // H reversed (J H J): the upper Cholesky factor of H^-1 is J L~^-1 J for J H J = L~ L~^T.
  std::vector<double> h(static_cast<size_t>(n * n));
  double mean_diag = 0.0;
  for (int64_t i = 0; i < n; ++i) mean_diag += gram[static_cast<size_t>(i * n + i)] / static_cast<double>(rows);
  mean_diag /= static_cast<double>(n);
  const double add = damp * (mean_diag > 0.0 ? mean_diag : 1.0);
  for (int64_t i = 0; i < n; ++i) {
    const double d = gram[static_cast<size_t>(i * n + i)] / static_cast<double>(rows);
    f.diagonal[static_cast<size_t>(i)] = static_cast<float>(d);
    f.dead[static_cast<size_t>(i)] = !(d > 0.0);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const bool dead = f.dead[static_cast<size_t>(i)] || f.dead[static_cast<size_t>(j)];
      double v = dead ? (i == j ? 1.0 : 0.0) : gram[static_cast<size_t>(i * n + j)] / static_cast<double>(rows);
      if (i == j) v += add;
      h[static_cast<size_t>((n - 1 - i) * n + (n - 1 - j))] = v;
    }
  if (!cholesky_lower(h, n)) throw_failure("quant: GPTQ: the inputs' Gram matrix of order {} is not positive definite", n);
  invert_lower(h, n);
  f.u.assign(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i; j < n; ++j)
      f.u[static_cast<size_t>(i * n + j)] = static_cast<float>(h[static_cast<size_t>((n - 1 - i) * n + (n - 1 - j))]);
  return f;
}

WeightEncoding gptq_quantize(const std::string& name, const float* w, int64_t rows, int64_t cols, QDType dtype,
                             int64_t block_size, const GptqFactor& f, int64_t candidates) {
  check_weight_format(name, cols, dtype, block_size);
  if (f.n != cols) throw_failure("quant: GPTQ factor of order {} for weight {} with {} columns", f.n, name, cols);
  WeightEncoding e;
  e.dtype = dtype;
  e.rows = rows;
  e.cols = cols;
  e.block_size = block_size;
  const int64_t nb = e.blocks(), width = block_size > 0 ? block_size : cols;
  const float qmin = static_cast<float>(qdtype_min(dtype)), qmax = static_cast<float>(qdtype_max(dtype));
  e.scales.resize(static_cast<size_t>(rows * nb));
  e.stored_codes.resize(static_cast<size_t>(rows * cols));
  const float* importance = candidates > 0 ? f.diagonal.data() : nullptr;
  // Rows are independent given U: each runs the whole column loop on its own copy.
  ThreadPool::global().parallel_for(
      rows,
      [&](int64_t r0, int64_t r1) {
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = 0; c < cols; ++c) row[static_cast<size_t>(c)] = f.dead[static_cast<size_t>(c)] ? 0.0f : w[r * cols + c];
          float scale = 1.0f;
          for (int64_t c = 0; c < cols; ++c) {
            if (c % width == 0) {
              const int64_t b = c / width;
              scale = weight_scale(row.data() + c, width, dtype, importance ? importance + c : nullptr, candidates);
              e.scales[static_cast<size_t>(r * nb + b)] = scale;
            }
            const float x = row[static_cast<size_t>(c)];
            const float q = kernels::requantize(x / scale, qmin, qmax);
            e.stored_codes[static_cast<size_t>(r * cols + c)] = static_cast<int16_t>(q);
            const float* u = f.u.data() + c * cols;
            const float err = (x - q * scale) / u[c];
            for (int64_t j = c + 1; j < cols; ++j) row[static_cast<size_t>(j)] -= err * u[j];
          }
        }
      },
      4);
  return e;
}

}  // namespace genai::quant
