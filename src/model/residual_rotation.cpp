#include "model/residual_rotation.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "core/thread_pool.h"

namespace genai {
namespace {

bool is_prime(int64_t q) {
  if (q < 2) return false;
  for (int64_t f = 2; f * f <= q; ++f)
    if (q % f == 0) return false;
  return true;
}

// Paley's construction I: for a prime q = 3 mod 4, H = I + S of order q + 1 with
// S = [[0, 1^T], [-1, C]] and C the Jacobsthal matrix C_ij = legendre(j - i mod q).
std::vector<int8_t> paley(int64_t q) {
  std::vector<int8_t> residue(static_cast<size_t>(q), -1);
  residue[0] = 0;
  for (int64_t x = 1; x < q; ++x) residue[static_cast<size_t>((x * x) % q)] = 1;
  const int64_t n = q + 1;
  std::vector<int8_t> h(static_cast<size_t>(n * n), 0);
  auto at = [&](int64_t i, int64_t j) -> int8_t& { return h[static_cast<size_t>(i * n + j)]; };
  for (int64_t j = 1; j < n; ++j) at(0, j) = 1, at(j, 0) = -1;
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = 1; j < n; ++j) at(i, j) = residue[static_cast<size_t>(((j - i) % q + q) % q)];
  for (int64_t i = 0; i < n; ++i) at(i, i) = static_cast<int8_t>(at(i, i) + 1);
  return h;
}

// Orders genai builds from one Paley factor: q + 1 for primes q = 3 mod 4 (4, 8, 12, 20, 24, ...).
bool paley_order(int64_t m) { return m >= 4 && m % 4 == 0 && (m - 1) % 4 == 3 && is_prime(m - 1); }

int64_t odd_part(int64_t n) {
  while (n % 2 == 0) n /= 2;
  return n;
}

void add_factor(HadamardFactors& h, std::vector<int8_t> f, int64_t order) {
  h.factors.push_back(std::move(f));
  h.orders.push_back(order);
}

}  // namespace

HadamardFactors hadamard_factors(int64_t n) {
  HadamardFactors h;
  if (n < 1) return h;
  const int64_t odd = odd_part(n);
  std::vector<int64_t> paley_orders;  // one or two Paley factors carrying the odd part
  if (odd > 1) {
    for (int64_t m = 4; m <= n && paley_orders.empty(); m += 4)
      if (n % m == 0 && odd_part(m) == odd && paley_order(m)) paley_orders = {m};
    for (int64_t a = 4; a <= n && paley_orders.empty(); a += 4)
      for (int64_t b = a; a * b <= n && paley_orders.empty(); b += 4)
        if (n % (a * b) == 0 && odd_part(a) * odd_part(b) == odd && paley_order(a) && paley_order(b)) paley_orders = {a, b};
    if (paley_orders.empty()) return h;
  }
  int64_t rest = n;
  for (int64_t m : paley_orders) {
    add_factor(h, paley(m - 1), m);
    rest /= m;
  }
  for (; rest > 1; rest /= 2) add_factor(h, {1, 1, 1, -1}, 2);
  return h;
}

ResidualRotation::ResidualRotation(int64_t dim) : dim_(dim), h_(hadamard_factors(dim)) {
  if (h_.empty())
    throw_input_error("--rotation hadamard: no Hadamard matrix of order {} (the model's hidden size) is known to genai "
                      "(orders 2^k times one or two Paley orders q + 1, q prime = 3 mod 4)",
                      dim);
  // Random signs (fixed seed: identical inputs give identical programs) keep Q away from the
  // structured H alone, which can leave an outlier aligned with its first row.
  std::mt19937_64 rng(0x5eed0f0ba7a11e5ULL);
  signs_.resize(static_cast<size_t>(dim));
  for (auto& s : signs_) s = (rng() & 1) ? 1.0f : -1.0f;
}

void ResidualRotation::rotate_rows(float* data, int64_t rows) const {
  const double norm = 1.0 / std::sqrt(static_cast<double>(dim_));
  ThreadPool::global().parallel_for(
      rows,
      [&](int64_t r0, int64_t r1) {
        std::vector<double> x(static_cast<size_t>(dim_)), y(static_cast<size_t>(dim_));
        for (int64_t r = r0; r < r1; ++r) {
          float* row = data + r * dim_;
          for (int64_t i = 0; i < dim_; ++i) x[static_cast<size_t>(i)] = static_cast<double>(row[i]) * signs_[static_cast<size_t>(i)];
          // x H for H = F_0 (x) F_1 (x) ...: x viewed as a tensor [n_0, n_1, ...], each factor
          // applied along its axis: y[.., j, ..] = sum_i x[.., i, ..] F[i][j].
          int64_t stride = dim_;
          for (size_t t = 0; t < h_.factors.size(); ++t) {
            const int64_t m = h_.orders[t];
            const std::vector<int8_t>& f = h_.factors[t];
            stride /= m;
            const int64_t outer = dim_ / (m * stride);
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t p = 0; p < stride; ++p) {
                const int64_t base = o * m * stride + p;
                for (int64_t j = 0; j < m; ++j) {
                  double s = 0.0;
                  for (int64_t i = 0; i < m; ++i) s += x[static_cast<size_t>(base + i * stride)] * f[static_cast<size_t>(i * m + j)];
                  y[static_cast<size_t>(base + j * stride)] = s;
                }
              }
            std::swap(x, y);
          }
          for (int64_t i = 0; i < dim_; ++i) row[i] = static_cast<float>(x[static_cast<size_t>(i)] * norm);
        }
      },
      64);
}

namespace {

// Columns of w [rows, cols] times g (a norm's weight folded into the projection reading it).
void scale_columns(Tensor& w, const Tensor& g) {
  const int64_t rows = w.dim(0), cols = w.dim(1);
  float* d = w.mutable_data<float>();
  const float* s = g.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) d[r * cols + c] *= s[c];
}

// w [dim, cols] -> Q^T w: each column as a row vector times Q.
void rotate_output_side(Tensor& w, const ResidualRotation& q) {
  const int64_t rows = w.dim(0), cols = w.dim(1);
  std::vector<float> t(static_cast<size_t>(rows * cols));
  float* d = w.mutable_data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = d[r * cols + c];
  q.rotate_rows(t.data(), cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) d[r * cols + c] = t[static_cast<size_t>(c * rows + r)];
}

}  // namespace

void rotate_residual_stream(Model& model) {
  ModelConfig& c = model.config;
  if (c.layer_norm || c.sandwich_norms || c.parallel_blocks || c.ple_dim > 0)
    throw_input_error("--rotation hadamard: {} models are not supported (the rotation needs RMS norms right before "
                      "the projections; supported: llama, qwen2, qwen3, granite, smollm3, phi3, gemma, glm)",
                      architecture_name(c.arch));
  const ResidualRotation q(c.dim);
  // The head reads the final norm, which is folded into it: a tied head becomes its own table.
  untie_output_head(model);
  Weights& w = model.weights;
  namespace wn = weight_names;
  // Each tensor's new value depends on its old value and on norm weights copied before they are
  // reset, so the results replace the originals as they are made.
  auto input_side = [&](const std::string& name, const Tensor* norm) {
    if (!w.contains(name)) return;
    Tensor t = w.get(name).f32_copy();
    if (norm) scale_columns(t, *norm);
    q.rotate_rows(t.mutable_data<float>(), t.dim(0));
    w.add(name, std::move(t));
  };
  auto output_side = [&](const std::string& name) {
    if (!w.contains(name)) return;
    Tensor t = w.get(name).f32_copy();
    rotate_output_side(t, q);
    w.add(name, std::move(t));
    const std::string bias = wn::bias_of(name);
    if (w.contains(bias)) {
      Tensor b = w.get(bias).f32_copy();
      q.rotate_rows(b.mutable_data<float>(), 1);
      w.add(bias, std::move(b));
    }
  };
  auto ones_like = [&](const std::string& name) {
    Tensor t = w.get(name).f32_copy();
    std::fill(t.mutable_data<float>(), t.mutable_data<float>() + t.numel(), 1.0f);
    w.add(name, std::move(t));
  };

  const Tensor final_norm = w.get(wn::final_norm()).f32_copy();
  input_side(wn::lm_head(), &final_norm);
  input_side(wn::embed_tokens(), nullptr);
  ones_like(wn::final_norm());
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Tensor attn_norm = w.get(wn::layer(l, "input_layernorm.weight")).f32_copy();
    const Tensor ffn_norm = w.get(wn::layer(l, "post_attention_layernorm.weight")).f32_copy();
    for (const char* p : {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"})
      input_side(wn::layer(l, p), &attn_norm);
    for (const char* p : {"mlp.gate_proj.weight", "mlp.up_proj.weight"}) input_side(wn::layer(l, p), &ffn_norm);
    output_side(wn::layer(l, "self_attn.o_proj.weight"));
    output_side(wn::layer(l, "mlp.down_proj.weight"));
    ones_like(wn::layer(l, "input_layernorm.weight"));
    ones_like(wn::layer(l, "post_attention_layernorm.weight"));
  }
}

}  // namespace genai
