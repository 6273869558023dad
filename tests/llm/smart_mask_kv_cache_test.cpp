// The smart-mask KV cache: byte-generic updates at the current position, the rearrangement
// between AR lengths, and the mask.
#include <gtest/gtest.h>

#include "core/error.h"
#include "llm/smart_mask_kv_cache.h"

namespace genai {
namespace {

// K/V outputs of one call with ar columns whose every entry encodes (head, dim, token): uint8
// codes, as a quantized runtime would store them.
Tensor k_out(int64_t kv, int64_t hd, int64_t ar, int first_token) {
  Tensor t = Tensor::zeros(DType::kU8, {1, kv, hd, ar});
  for (int64_t h = 0; h < kv; ++h)
    for (int64_t d = 0; d < hd; ++d)
      for (int64_t a = 0; a < ar; ++a)
        t.mutable_data<uint8_t>()[(h * hd + d) * ar + a] = static_cast<uint8_t>(h * 64 + d * 16 + first_token + a);
  return t;
}
Tensor v_out(int64_t kv, int64_t hd, int64_t ar, int first_token) {
  Tensor t = Tensor::zeros(DType::kU8, {1, kv, ar, hd});
  for (int64_t h = 0; h < kv; ++h)
    for (int64_t a = 0; a < ar; ++a)
      for (int64_t d = 0; d < hd; ++d)
        t.mutable_data<uint8_t>()[(h * ar + a) * hd + d] = static_cast<uint8_t>(h * 64 + d * 16 + first_token + a);
  return t;
}

// Checks that cache positions [0, n) of layer l hold tokens 0..n-1 in the current layout.
void expect_tokens(const SmartMaskKvCache& c, int64_t n, int64_t l = 0) {
  const KvLayerShape& s = c.layout().layers.at(static_cast<size_t>(l));
  const int64_t kv = s.kv_heads, hd = s.head_dim, len = c.cache_len();
  const Tensor k = c.k_input(l), v = c.v_input(l);
  EXPECT_EQ(k.shape(), (Shape{1, kv, hd, len}));
  EXPECT_EQ(v.shape(), (Shape{1, kv, len, hd}));
  for (int64_t h = 0; h < kv; ++h)
    for (int64_t d = 0; d < hd; ++d)
      for (int64_t p = 0; p < n; ++p) {
        const uint8_t want = static_cast<uint8_t>(h * 64 + d * 16 + p);
        ASSERT_EQ(k.data<uint8_t>()[(h * hd + d) * len + p], want) << h << " " << d << " " << p;
        ASSERT_EQ(v.data<uint8_t>()[(h * len + p) * hd + d], want) << h << " " << d << " " << p;
      }
}

TEST(SmartMaskKvCache, UpdatesAtThePositionAndRearrangesBetweenArLengths) {
  const int64_t KV = 2, HD = 3, CL = 16;
  SmartMaskKvCache cache(KvCacheLayout::uniform(1, KV, HD, CL), DType::kU8, {4, 1});
  EXPECT_EQ(cache.ar_len(), 4);
  EXPECT_EQ(cache.cache_len(), 12);
  // Two AR-4 chunks, the second partial (3 real rows).
  cache.update(0, k_out(KV, HD, 4, 0), v_out(KV, HD, 4, 0), 4);
  cache.advance(4);
  cache.update(0, k_out(KV, HD, 4, 4), v_out(KV, HD, 4, 4), 3);
  cache.advance(3);
  expect_tokens(cache, 7);
  cache.set_ar_len(1);  // stride 12 -> 15
  EXPECT_EQ(cache.cache_len(), 15);
  expect_tokens(cache, 7);
  for (int t = 7; t < 10; ++t) {
    cache.update(0, k_out(KV, HD, 1, t), v_out(KV, HD, 1, t), 1);
    cache.advance(1);
  }
  expect_tokens(cache, 10);
  cache.set_ar_len(4);  // back: stride 15 -> 12
  expect_tokens(cache, 10);
  EXPECT_FALSE(cache.fits(3));
  EXPECT_TRUE(cache.fits(2));
  EXPECT_THROW(cache.update(0, k_out(KV, HD, 4, 10), v_out(KV, HD, 4, 10), 3), Failure);
  cache.reset();
  EXPECT_EQ(cache.n_past(), 0);
  EXPECT_EQ(cache.k_input(0).data<uint8_t>()[0], 0);
}

TEST(SmartMaskKvCache, RejectsMismatchedOutputsAndLayouts) {
  SmartMaskKvCache cache(KvCacheLayout::uniform(1, 2, 3, 8), DType::kF32, {1});
  Tensor wrong_type = Tensor::zeros(DType::kU8, {1, 2, 3, 1});
  Tensor v = Tensor::zeros(DType::kF32, {1, 2, 1, 3});
  EXPECT_THROW(cache.update(0, wrong_type, v, 1), Failure);
  EXPECT_THROW(cache.set_ar_len(2), Failure);
  EXPECT_THROW(SmartMaskKvCache(KvCacheLayout::uniform(1, 2, 3, 8), DType::kF32, {8}), InputError);
}

// Gemma 4's layout: layers with their own KV heads and head size, each kept and rearranged in its
// own shape; a layer's outputs in another layer's shape are refused.
TEST(SmartMaskKvCache, LayersOfDifferentShapesKeepTheirOwn) {
  const int64_t CL = 12;
  SmartMaskKvCache cache({{{1, 2}, {2, 3}}, CL}, DType::kU8, {3, 1});
  for (int64_t l = 0; l < 2; ++l) {
    const KvLayerShape& s = cache.layout().layers[static_cast<size_t>(l)];
    cache.update(l, k_out(s.kv_heads, s.head_dim, 3, 0), v_out(s.kv_heads, s.head_dim, 3, 0), 3);
  }
  cache.advance(3);
  cache.set_ar_len(1);
  for (int64_t l = 0; l < 2; ++l) {
    const KvLayerShape& s = cache.layout().layers[static_cast<size_t>(l)];
    cache.update(l, k_out(s.kv_heads, s.head_dim, 1, 3), v_out(s.kv_heads, s.head_dim, 1, 3), 1);
  }
  cache.advance(1);
  expect_tokens(cache, 4, 0);
  expect_tokens(cache, 4, 1);
  EXPECT_THROW(cache.update(0, k_out(2, 3, 1, 4), v_out(2, 3, 1, 4), 1), Failure);
}

TEST(SmartMaskKvCache, MaskAttendsFilledPositionsAndEarlierNewTokens) {
  const int64_t ar = 3, CL = 8;
  std::vector<float> mask(ar * CL, 7.0f);
  fill_smart_mask<float>(mask.data(), ar, CL, 2, 0.0f, -255.0f);
  const float M = -255.0f;
  EXPECT_EQ(mask, (std::vector<float>{0, 0, M, M, M, 0, M, M,  //
                                      0, 0, M, M, M, 0, 0, M,  //
                                      0, 0, M, M, M, 0, 0, 0}));
  std::vector<uint16_t> q(CL);
  fill_smart_mask<uint16_t>(q.data(), 1, CL, 3, 65535, 0);
  EXPECT_EQ(q, (std::vector<uint16_t>{65535, 65535, 65535, 0, 0, 0, 0, 65535}));
}

}  // namespace
}  // namespace genai
