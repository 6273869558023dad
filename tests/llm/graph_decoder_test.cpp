// The static graphs run through the smart-mask session must reproduce the float reference
// (ReferenceDecoder) at every position, in kv and hybrid mode, for prompts shorter than, equal to
// and longer than AR-N, up to the full context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/sampler.h"
#include "graph/decoder_graphs.h"
#include "graph/char_tokenizer.h"
#include "graph/random_model.h"
#include "llm/generation.h"
#include "llm/graph_decoder.h"
#include "llm/reference_session.h"
#include "model/reference_decoder.h"

namespace genai {
namespace {

using graph::ModelMode;
using graph_testing::random_model;
using graph_testing::random_tokens;
using graph_testing::CharTokenizer;

// max |a - b| / max |b| over the rows compared.
double relative_error(std::span<const float> got, std::span<const float> want) {
  EXPECT_EQ(got.size(), want.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return diff / scale;
}

struct ParityCase {
  ModelMode mode;
  int64_t context;
  int64_t ar;
  int64_t prompt;
  bool separate_embedding = false;
};

// Prompt through forward_all, then greedy decoding one token at a time until the context is
// full; every position's logits are compared with the reference. Returns the worst error.
double run_parity(std::shared_ptr<const Model> model, const ParityCase& pc) {
  auto session = make_graph_session(model, {pc.mode, pc.context, pc.ar, pc.separate_embedding});
  ReferenceDecoder ref(*model);
  const auto prompt = random_tokens(pc.prompt, model->config.vocab_size, static_cast<uint32_t>(pc.prompt * 31 + pc.ar));
  const std::vector<float> ref_all = ref.forward(prompt);
  double worst = relative_error(session->forward_all(prompt), ref_all);
  EXPECT_EQ(session->position(), pc.prompt);
  std::vector<float> ref_last(ref_all.end() - model->config.vocab_size, ref_all.end());
  while (session->position() < pc.context) {
    const int32_t next = argmax(ref_last);
    const std::span<const float> got = session->forward(std::span(&next, 1));
    ref_last = ref.forward_last(std::span(&next, 1));
    worst = std::max(worst, relative_error(got, ref_last));
  }
  EXPECT_EQ(session->position(), pc.context);
  const int32_t one = 3;
  EXPECT_THROW(session->forward(std::span(&one, 1)), InputError);
  EXPECT_EQ(session->position(), pc.context);
  return worst;
}

TEST(GraphDecoder, MatchesReferenceAtEveryPositionInKvAndHybridModes) {
  auto model = random_model();
  const int64_t CL = 24, AR = 5;
  // Shorter than, equal to, longer than AR-N (several chunks, a partial last one), a prompt
  // whose padded last chunk would pass the context (falls back to AR-1), and the full context.
  for (int64_t prompt : {3, 5, 13, 18, 22, 24}) {
    for (ModelMode mode : {ModelMode::kKv, ModelMode::kHybrid}) {
      SCOPED_TRACE(::testing::Message() << graph::model_mode_name(mode) << " prompt " << prompt);
      EXPECT_LT(run_parity(model, {mode, CL, AR, prompt}), 1e-5);
    }
  }
}

TEST(GraphDecoder, MatchesReferenceForQwen2BiasTiedHeadAndLlama3Rope) {
  graph_testing::RandomModelSpec qwen;
  qwen.arch = Architecture::kQwen2;
  qwen.tied = true;
  qwen.n_heads = 6;
  qwen.n_kv_heads = 1;
  graph_testing::RandomModelSpec llama3;
  llama3.llama3_rope = true;
  llama3.n_kv_heads = 4;  // plain multi-head attention
  llama3.seed = 11;
  for (const auto& spec : {qwen, llama3}) {
    auto model = random_model(spec);
    for (int64_t prompt : {4, 11}) {
      SCOPED_TRACE(::testing::Message() << architecture_name(spec.arch) << " prompt " << prompt);
      EXPECT_LT(run_parity(model, {ModelMode::kHybrid, 20, 4, prompt}), 1e-5);
      EXPECT_LT(run_parity(model, {ModelMode::kKv, 20, 4, prompt}), 1e-5);
    }
  }
}

// qwen3 (q/k norms), granite (embedding, residual, attention and logit multipliers), smollm3
// (a layer without rotary embedding), ... gemma4 (per-layer embeddings, shared KV, global heads of
// their own size): the graphs compute what the reference computes.
TEST(GraphDecoder, MatchesReferenceForEveryFamilyFeature) {
  for (Architecture arch : testing::feature_families()) {
    auto model = random_model({.arch = arch, .tied = arch != Architecture::kQwen3, .seed = 23});
    for (int64_t prompt : {4, 11}) {
      SCOPED_TRACE(::testing::Message() << architecture_name(arch) << " prompt " << prompt);
      EXPECT_LT(run_parity(model, {ModelMode::kHybrid, 20, 4, prompt}), 1e-5);
      EXPECT_LT(run_parity(model, {ModelMode::kKv, 20, 4, prompt}), 1e-5);
      if (model->config.ple_dim > 0)  // gemma4's per-layer embeddings read the tokens: refused by name
        EXPECT_THROW(make_graph_session(model, {ModelMode::kHybrid, 20, 6, true}), InputError);
      else
        EXPECT_LT(run_parity(model, {ModelMode::kHybrid, 20, 6, prompt, true}), 1e-5);  // separate embedding
    }
  }
}

// Sliding layers past their window (gemma2's every other layer, gemma3's local layers): the
// windowed mask makes the graphs equal the reference, which slides, over contexts several windows
// long, in kv and hybrid mode (chunks up to the window, and one chunk of the whole context).
TEST(GraphDecoder, SlidingLayersPastTheirWindowMatchTheReference) {
  for (Architecture arch : {Architecture::kGemma2, Architecture::kGemma3}) {
    auto model = std::const_pointer_cast<Model>(random_model({.arch = arch, .tied = true, .seed = 29}));
    model->config.sliding_window = 5;
    const ModelConfig& c = model->config;
    ASSERT_TRUE(graph::windowed_layers(c, 20));
    for (int64_t prompt : {3, 11}) {
      SCOPED_TRACE(::testing::Message() << architecture_name(arch) << " prompt " << prompt);
      EXPECT_LT(run_parity(model, {ModelMode::kKv, 20, 4, prompt}), 1e-5);
      EXPECT_LT(run_parity(model, {ModelMode::kHybrid, 20, 4, prompt}), 1e-5);
      EXPECT_LT(run_parity(model, {ModelMode::kHybrid, 20, 5, prompt}), 1e-5);
    }
    // Without the window the logits differ (the test above would pass if both ignored it).
    auto global = std::make_shared<Model>(*model);
    global->config.sliding_window = 0;
    const auto tokens = random_tokens(16, c.vocab_size, 3);
    ReferenceDecoder a(*model), b(*global);
    EXPECT_GT(relative_error(a.forward(tokens), b.forward(tokens)), 1e-3);
    // A chunk longer than the window after a cache is refused by option name.
    try {
      make_graph_session(model, {ModelMode::kHybrid, 20, 6});
      ADD_FAILURE() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--prefill_ar_len 6"), std::string::npos) << e.what();
    }
  }
}

// Each feature changes the logits (a feature the graph or the reference ignored would pass the
// test above only if both ignored it; this pins that the reference does not).
TEST(GraphDecoder, EveryFamilyFeatureChangesTheLogits) {
  for (Architecture arch : testing::feature_families()) {
    SCOPED_TRACE(architecture_name(arch));
    auto with = random_model({.arch = arch, .seed = 23});
    auto without = std::make_shared<Model>(*with);
    ModelConfig& c = without->config;
    c.qk_norm = false;
    c.embedding_multiplier = c.residual_multiplier = c.logits_scaling = 1.0f;
    c.attention_multiplier = 0.0f;
    c.rope_layers.clear();
    c.rotary_dim = 0;
    c.long_rope = {};
    c.ffn_activation = FfnActivation::kSilu;
    c.sandwich_norms = false;
    c.attn_logit_softcap = c.final_logit_softcap = 0.0f;
    c.rope_local_theta = 0.0f;
    const auto tokens = random_tokens(6, c.vocab_size, 5);
    ReferenceDecoder a(*with), b(*without);
    EXPECT_GT(relative_error(a.forward(tokens), b.forward(tokens)), 1e-3);
  }
}

TEST(GraphDecoder, SeparateTokenEmbeddingGraphsGiveTheSameLogits) {
  auto model = random_model({.tied = true});
  for (ModelMode mode : {ModelMode::kKv, ModelMode::kHybrid}) {
    SCOPED_TRACE(graph::model_mode_name(mode));
    EXPECT_LT(run_parity(model, {mode, 20, 6, 13, true}), 1e-5);
  }
}

// The scheduler takes the decode AR from kv_forward's signature: a kv_forward of AR 4 runs
// prompts in chunks of 4 and single tokens padded to 4, and matches the reference up to the
// last position its cache allows.
TEST(GraphDecoder, DecodeArComesFromTheKvForwardSignature) {
  auto model = random_model();
  const int64_t CL = 20, AR = 4;
  std::shared_ptr<const Weights> weights(model, &model->weights);
  graph::GraphMap graphs{{std::string(graph::kKvForward),
                          graph::build_decoder_graph(model->config, weights, std::string(graph::kKvForward), AR, CL)}};
  auto session = make_graph_session(std::make_unique<graph::InterpreterExecutor>(std::move(graphs)));
  EXPECT_EQ(session->decode_ar_len(), AR);
  EXPECT_EQ(session->prefill_ar_len(), 0);
  EXPECT_EQ(session->max_context(), CL - AR + 1);  // the cache holds CL - AR entries
  ReferenceDecoder ref(*model);
  const auto prompt = random_tokens(10, model->config.vocab_size, 17);
  const std::vector<float> ref_all = ref.forward(prompt);
  EXPECT_LT(relative_error(session->forward_all(prompt), ref_all), 1e-5);
  EXPECT_EQ(session->kv_calls(), 3);  // 4 + 4 + 2 (padded)
  std::vector<float> ref_last(ref_all.end() - model->config.vocab_size, ref_all.end());
  while (session->position() < session->max_context()) {
    const int32_t next = argmax(ref_last);
    const std::span<const float> got = session->forward(std::span(&next, 1));
    ref_last = ref.forward_last(std::span(&next, 1));
    EXPECT_LT(relative_error(got, ref_last), 1e-5) << "position " << session->position();
  }
  EXPECT_EQ(session->kv_calls(), 3 + (CL - AR + 1) - 10);
  const int32_t one = 3;
  EXPECT_THROW(session->forward(std::span(&one, 1)), InputError);
}

TEST(GraphDecoder, HybridUsesPrefillChunksAndKvForSingleTokens) {
  auto model = random_model();
  auto session = make_graph_session(model, {ModelMode::kHybrid, 32, 8});
  EXPECT_EQ(session->prefill_ar_len(), 8);
  session->forward(random_tokens(19, model->config.vocab_size, 3));  // 8 + 8 + 3 (padded)
  EXPECT_EQ(session->prefill_calls(), 3);
  EXPECT_EQ(session->kv_calls(), 0);
  const int32_t t = 5;
  session->forward(std::span(&t, 1));
  EXPECT_EQ(session->kv_calls(), 1);
  EXPECT_EQ(session->position(), 20);

  auto kv = make_graph_session(model, {ModelMode::kKv, 32, 8});
  EXPECT_EQ(kv->prefill_ar_len(), 0);
  kv->forward(random_tokens(19, model->config.vocab_size, 3));
  EXPECT_EQ(kv->kv_calls(), 19);
  EXPECT_EQ(kv->prefill_calls(), 0);
}

TEST(GraphDecoder, KvAndHybridGenerateIdenticalGreedyTokens) {
  auto model = random_model();
  const auto prompt = random_tokens(9, model->config.vocab_size, 5);
  std::vector<std::vector<int32_t>> runs;
  for (ModelMode mode : {ModelMode::kKv, ModelMode::kHybrid}) {
    auto session = make_graph_session(model, {mode, 40, 4});
    std::span<const float> logits = session->forward(prompt);
    std::vector<int32_t> out;
    while (session->position() < 40) {
      const int32_t next = argmax(logits);
      out.push_back(next);
      logits = session->forward(std::span(&next, 1));
    }
    runs.push_back(out);
  }
  EXPECT_EQ(runs[0].size(), 31u);
  EXPECT_EQ(runs[0], runs[1]);
  // Not a constant stream: the comparison above compares something.
  EXPECT_GT(std::set<int32_t>(runs[0].begin(), runs[0].end()).size(), 1u);
}

TEST(GraphDecoder, ContextOverflowIsAnInputErrorBeforeAnyWork) {
  auto model = random_model();
  auto session = make_graph_session(model, {ModelMode::kHybrid, 16, 4});
  session->forward(random_tokens(10, model->config.vocab_size, 1));
  try {
    session->forward(random_tokens(7, model->config.vocab_size, 2));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("context of 16"), std::string::npos) << e.what();
  }
  EXPECT_EQ(session->position(), 10);
  EXPECT_EQ(session->prefill_calls(), 3);
  const int32_t bad = 1000;
  EXPECT_THROW(session->forward(std::span(&bad, 1)), InputError);
  EXPECT_EQ(session->position(), 10);
  session->reset();
  EXPECT_EQ(session->position(), 0);
  EXPECT_EQ(session->forward(random_tokens(16, model->config.vocab_size, 2)).size(), 83u);
}

TEST(GraphDecoder, RejectsBadOptions) {
  auto model = random_model();
  EXPECT_THROW(make_graph_session(model, {ModelMode::kHybrid, 16, 16}), InputError);
  EXPECT_THROW(make_graph_session(model, {ModelMode::kHybrid, 16, 0}), InputError);
  EXPECT_THROW(make_graph_session(model, {ModelMode::kKv, 1, 1}), InputError);
  EXPECT_THROW(graph::model_mode_from_name("lookahead"), InputError);
}

TEST(GraphDecoder, GenerationLoopProducesTheReferenceTokensAndText) {
  auto model = random_model({.seed = 3});
  CharTokenizer tok;
  GenerationOptions options;
  options.prompts = {"Hello, graphs!", "And again?"};  // two turns: the cache is extended
  options.max_new_tokens = 12;
  options.sampler.temperature = 0.0f;
  ReferenceSession ref(*model);
  const GenerationResult want = generate(ref, tok, ChatFormat::kNone, options);
  ASSERT_FALSE(want.tokens.empty());
  for (ModelMode mode : {ModelMode::kHybrid, ModelMode::kKv}) {
    auto session = make_graph_session(model, {mode, 64, 8});
    const GenerationResult got = generate(*session, tok, ChatFormat::kNone, options);
    EXPECT_EQ(got.tokens, want.tokens) << graph::model_mode_name(mode);
    EXPECT_EQ(got.text, want.text);
  }
}

}  // namespace
}  // namespace genai
