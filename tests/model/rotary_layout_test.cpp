// The q/k row permutation turns interleaved-pair RoPE into rotate-half RoPE, numerically.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "model/rotary_layout.h"

namespace genai {
namespace {

constexpr int64_t kHeads = 3, kHeadDim = 8, kDim = 5;

Tensor random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 gen(seed);
  Tensor t = Tensor::zeros(DType::kF32, {rows, cols});
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = static_cast<float>(gen() % 2001) / 1000.0f - 1.0f;
  return t;
}

std::vector<float> matvec(const Tensor& w, const std::vector<float>& x) {
  std::vector<float> y(static_cast<size_t>(w.dim(0)));
  for (int64_t r = 0; r < w.dim(0); ++r)
    for (int64_t c = 0; c < w.dim(1); ++c) y[r] += w.data<float>()[r * w.dim(1) + c] * x[c];
  return y;
}

float freq(int64_t i) { return std::pow(10000.0f, -2.0f * static_cast<float>(i) / kHeadDim); }

// Hugging Face: rotate halves (i, i + d/2).
void rope_half(std::vector<float>& v, int64_t pos) {
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < kHeadDim / 2; ++i) {
      float& a = v[h * kHeadDim + i];
      float& b = v[h * kHeadDim + i + kHeadDim / 2];
      const float c = std::cos(pos * freq(i)), s = std::sin(pos * freq(i));
      const float x = a, y = b;
      a = x * c - y * s;
      b = x * s + y * c;
    }
}

// Meta / llama2.c run.c / llama.cpp: rotate adjacent pairs (2i, 2i+1).
void rope_interleaved(std::vector<float>& v, int64_t pos) {
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < kHeadDim / 2; ++i) {
      float& a = v[h * kHeadDim + 2 * i];
      float& b = v[h * kHeadDim + 2 * i + 1];
      const float c = std::cos(pos * freq(i)), s = std::sin(pos * freq(i));
      const float x = a, y = b;
      a = x * c - y * s;
      b = x * s + y * c;
    }
}

TEST(RotaryLayout, PermutationsAreInverse) {
  Tensor w = random_matrix(kHeads * kHeadDim, kDim, 1);
  Tensor back = interleaved_to_half_rows(half_to_interleaved_rows(w, kHeads), kHeads);
  for (int64_t i = 0; i < w.numel(); ++i) EXPECT_EQ(back.data<float>()[i], w.data<float>()[i]);
  Tensor p = half_to_interleaved_rows(w, kHeads);
  bool moved = false;
  for (int64_t i = 0; i < w.numel(); ++i) moved = moved || p.data<float>()[i] != w.data<float>()[i];
  EXPECT_TRUE(moved);
}

TEST(RotaryLayout, InterleavedRopeOnPermutedRowsEqualsRotateHalfRope) {
  Tensor w_hf = random_matrix(kHeads * kHeadDim, kDim, 2);
  Tensor w_meta = half_to_interleaved_rows(w_hf, kHeads);
  std::vector<float> x = {0.3f, -1.2f, 0.7f, 0.05f, -0.4f};
  for (int64_t pos : {0, 1, 7, 123}) {
    std::vector<float> q_hf = matvec(w_hf, x), q_meta = matvec(w_meta, x);
    rope_half(q_hf, pos);
    rope_interleaved(q_meta, pos);
    // Same rotated vector up to the fixed row permutation: interleaved 2i+j == half j*d/2+i.
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t i = 0; i < kHeadDim / 2; ++i)
        for (int64_t j = 0; j < 2; ++j)
          EXPECT_NEAR(q_meta[h * kHeadDim + 2 * i + j], q_hf[h * kHeadDim + j * kHeadDim / 2 + i], 1e-5f);
    // Hence the attention scores q.k agree.
    std::vector<float> k_hf = matvec(w_hf, {1, 2, 3, 4, 5}), k_meta = matvec(w_meta, {1, 2, 3, 4, 5});
    rope_half(k_hf, pos + 2);
    rope_interleaved(k_meta, pos + 2);
    float s_hf = 0, s_meta = 0;
    for (size_t i = 0; i < q_hf.size(); ++i) s_hf += q_hf[i] * k_hf[i], s_meta += q_meta[i] * k_meta[i];
    EXPECT_NEAR(s_hf, s_meta, 1e-4f);
  }
}

TEST(RotaryLayout, BiasesPermuteLikeRows) {
  Tensor b = Tensor::zeros(DType::kF32, {kHeads * kHeadDim});
  for (int64_t i = 0; i < b.numel(); ++i) b.mutable_data<float>()[i] = static_cast<float>(i);
  Tensor p = half_to_interleaved_rows(b, kHeads);
  // interleaved row 1 (pair 0, second element) holds rotate-half row d/2.
  EXPECT_EQ(p.data<float>()[1], static_cast<float>(kHeadDim / 2));
  EXPECT_EQ(p.data<float>()[kHeadDim + 2], static_cast<float>(kHeadDim + 1));
}

}  // namespace
}  // namespace genai
