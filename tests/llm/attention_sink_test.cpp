// Attention sink: evicted caches hold what computing the kept keys at their new slots would give
// (float and quantized caches), generation runs far past the context with the same tokens as
// plain decoding up to the first eviction, and the options the scheduler cannot honour are
// InputErrors naming --use_attention_sink.
#include "llm/attention_sink.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.h"
#include "graph/char_tokenizer.h"
#include "graph/random_model.h"
#include "llm/generation.h"
#include "llm/graph_decoder.h"
#include "llm/smart_mask_kv_cache.h"

namespace genai {
namespace {

using graph::ModelMode;
using graph_testing::CharTokenizer;
using graph_testing::random_model;

constexpr int64_t kHeads = 2, kHeadDim = 8, kContext = 17;  // cache of 16 slots for AR 1
const std::vector<float> kInvFreq = {1.0f, 0.3f, 0.05f};    // partial rotary: 6 of 8 dims

// Key `k` (head_dim values per head) rotated to position p, rotate-half pairs (i, i + 3).
std::vector<float> rotated(const std::vector<float>& k, int64_t p) {
  std::vector<float> out = k;
  const size_t n = kInvFreq.size();
  for (int64_t h = 0; h < kHeads; ++h)
    for (size_t i = 0; i < n; ++i) {
      const double a = static_cast<double>(p) * kInvFreq[i];
      const double x = k[h * kHeadDim + i], y = k[h * kHeadDim + i + n];
      out[h * kHeadDim + i] = static_cast<float>(x * std::cos(a) - y * std::sin(a));
      out[h * kHeadDim + i + n] = static_cast<float>(y * std::cos(a) + x * std::sin(a));
    }
  return out;
}

// Fills a one-layer cache with 12 entries, key j = R(j) k_j and value j = v_j, evicts 4 after
// a sink of 2 and returns the worst |error| of the keys now at slots 2..7 against R(slot) k_{slot+4}
// (`decode` reads one stored element back as float).
template <typename T>
double evict_and_compare(DType dtype, const quant::Encoding* e, double* value_error) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  SmartMaskKvCache cache(KvCacheLayout::uniform(1, kHeads, kHeadDim, kContext), dtype, {1});
  auto code = [e](float x) { return e ? static_cast<T>(quant::quantize_value(x, *e)) : static_cast<T>(x); };
  auto value = [e](T q) { return e ? quant::dequantize_value(q, *e) : static_cast<float>(q); };
  std::vector<std::vector<float>> keys, values;
  for (int64_t j = 0; j < 12; ++j) {
    std::vector<float> k(kHeads * kHeadDim), v(kHeads * kHeadDim);
    for (auto& x : k) x = u(rng);
    for (auto& x : v) x = u(rng);
    keys.push_back(k);
    values.push_back(v);
    const std::vector<float> kr = rotated(k, j);
    Tensor k_out = Tensor::zeros(dtype, {1, kHeads, kHeadDim, 1}), v_out = Tensor::zeros(dtype, {1, kHeads, 1, kHeadDim});
    for (int64_t i = 0; i < kHeads * kHeadDim; ++i) {
      static_cast<T*>(k_out.mutable_raw())[i] = code(kr[i]);
      static_cast<T*>(v_out.mutable_raw())[i] = code(v[i]);
    }
    cache.update(0, k_out, v_out, 1);
    cache.advance(1);
  }
  std::vector<quant::Encoding> encodings;
  if (e) encodings.push_back(*e);
  const KeyRerotation rerotation({KeyRotary{kInvFreq}}, encodings);
  cache.evict(2, 4, rerotation);
  EXPECT_EQ(cache.n_past(), 8);
  const Tensor k = cache.k_input(0), v = cache.v_input(0);
  const T* kd = static_cast<const T*>(k.raw());
  const T* vd = static_cast<const T*>(v.raw());
  const int64_t stride = cache.cache_len();
  double worst = 0;
  *value_error = 0;
  for (int64_t slot = 0; slot < 8; ++slot) {
    const int64_t source = slot < 2 ? slot : slot + 4;
    const std::vector<float> want = rotated(keys[source], slot);
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t d = 0; d < kHeadDim; ++d) {
        worst = std::max(worst, std::abs(static_cast<double>(value(kd[(h * kHeadDim + d) * stride + slot])) -
                                         want[h * kHeadDim + d]));
        *value_error = std::max(*value_error, std::abs(static_cast<double>(value(vd[(h * stride + slot) * kHeadDim + d])) -
                                                       values[source][h * kHeadDim + d]));
      }
  }
  return worst;
}

TEST(AttentionSink, EvictedKeysAreTheKeysOfTheirNewSlots) {
  double v_err = 0;
  EXPECT_LT(evict_and_compare<float>(DType::kF32, nullptr, &v_err), 1e-5);
  EXPECT_EQ(v_err, 0.0);  // values only move
}

TEST(AttentionSink, QuantizedKeysStayWithinTheirEncodingsRounding) {
  for (quant::QDType t : {quant::QDType::kU8, quant::QDType::kU16}) {
    const quant::Encoding e = quant::asymmetric_encoding(t, -1.5f, 1.5f);
    double v_err = 0;
    const double k_err = t == quant::QDType::kU8 ? evict_and_compare<uint8_t>(DType::kU8, &e, &v_err)
                                                 : evict_and_compare<uint16_t>(DType::kU16, &e, &v_err);
    // Stored codes carry half a step of error; rotating them and rounding again adds at most one
    // more (a rotation does not grow the error of a pair).
    EXPECT_LE(k_err, 2.0 * e.scale) << quant::qdtype_name(t);
    EXPECT_LE(v_err, 0.5 * e.scale + 1e-6) << quant::qdtype_name(t);
  }
}

std::unique_ptr<DecoderScheduler> session(std::shared_ptr<const Model> model, ModelMode mode,
                                          std::optional<AttentionSinkOptions> sink) {
  GraphSessionOptions g;
  g.mode = mode;
  g.max_context_len = 32;
  g.prefill_ar_len = 8;
  g.attention_sink = sink;
  return make_graph_session(std::move(model), g);
}

// Generation that ends only at the budget or the context.
class NoStopTokenizer : public CharTokenizer {
 public:
  std::vector<int32_t> stop_ids() const override { return {}; }
};

TEST(AttentionSink, GeneratesFourContextsWithPlainDecodingsTokensUntilTheFirstEviction) {
  NoStopTokenizer tok;
  auto model = random_model({.seed = 4});
  GenerationOptions o;
  o.prompts = {"Once upon a time"};  // 17 tokens with BOS
  o.max_new_tokens = 4 * 32;
  o.sampler.temperature = 0.0f;
  for (ModelMode mode : {ModelMode::kHybrid, ModelMode::kKv}) {
    SCOPED_TRACE(graph::model_mode_name(mode));
    auto plain = session(model, mode, std::nullopt);
    const GenerationResult want = generate(*plain, tok, ChatFormat::kNone, o);
    ASSERT_EQ(want.turns[0].stop_reason, StopReason::kContextFull);
    auto sink = session(model, mode, AttentionSinkOptions{4, 8});
    const GenerationResult got = generate(*sink, tok, ChatFormat::kNone, o);
    EXPECT_EQ(got.turns[0].stop_reason, StopReason::kMaxNewTokens);
    EXPECT_EQ(static_cast<int64_t>(got.tokens.size()), o.max_new_tokens);
    EXPECT_GT(sink->evictions(), 3);
    // Plain decoding's last call runs on a full cache and stores nothing; the sink evicts before
    // that call, so every token before it came before the first eviction.
    const auto before = static_cast<long>(want.tokens.size()) - 1;
    ASSERT_GT(before, 0);
    ASSERT_GE(static_cast<long>(got.tokens.size()), before);
    EXPECT_EQ(std::vector<int32_t>(got.tokens.begin(), got.tokens.begin() + before),
              std::vector<int32_t>(want.tokens.begin(), want.tokens.begin() + before));
  }
}

// With lookahead decoding the tree call makes room for the tokens it may accept.
TEST(AttentionSink, LookaheadDecodingRunsPastTheContextToo) {
  NoStopTokenizer tok;
  GraphSessionOptions g;
  g.mode = ModelMode::kHybrid;
  g.max_context_len = 32;
  g.prefill_ar_len = 8;
  g.decode_ar_len = 8;
  g.attention_sink = AttentionSinkOptions{4, 8};
  auto session = make_graph_session(random_model({.seed = 4}), g);
  GenerationOptions o;
  o.prompts = {"Once upon a time"};
  o.max_new_tokens = 4 * 32;
  o.sampler.temperature = 0.0f;
  o.lookahead = LookaheadOptions{.ngram = 3, .window = 2, .gcap = 2};
  const GenerationResult r = generate(*session, tok, ChatFormat::kNone, o);
  EXPECT_EQ(static_cast<int64_t>(r.tokens.size()), o.max_new_tokens);
  EXPECT_GT(session->evictions(), 3);
  EXPECT_GT(r.stats.lookahead_calls, 0);
}

TEST(AttentionSink, PromptsLongerThanTheContextArePrefilledThroughEvictions) {
  auto model = random_model({.seed = 6});
  auto sink = session(model, ModelMode::kHybrid, AttentionSinkOptions{2, 8});
  const std::vector<int32_t> prompt = graph_testing::random_tokens(100, model->config.vocab_size, 3);
  const std::span<const float> logits = sink->forward(prompt);
  EXPECT_EQ(sink->position(), 100);
  EXPECT_GT(sink->evictions(), 0);
  for (float x : logits) ASSERT_TRUE(std::isfinite(x));
}

TEST(AttentionSink, SettingsTheCacheCannotHonourAreInputErrors) {
  auto model = random_model();
  auto expect_named = [&](ModelMode mode, AttentionSinkOptions o, const char* word) {
    try {
      session(model, mode, o);
      ADD_FAILURE() << "accepted " << o.sink << "," << o.eviction;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--use_attention_sink"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  expect_named(ModelMode::kHybrid, {4, 4}, "prefill_forward");  // EVICTION below the prefill AR (8)
  expect_named(ModelMode::kHybrid, {20, 8}, "SINK + 2");        // no room for a prefill call after the sink
  expect_named(ModelMode::kKv, {4, 30}, "SINK + EVICTION");
  EXPECT_NO_THROW(session(model, ModelMode::kKv, AttentionSinkOptions{4, 1}));
}

}  // namespace
}  // namespace genai
