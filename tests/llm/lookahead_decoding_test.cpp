// Lookahead decoding on the float interpreter's static graphs: the same tokens as plain decoding
// (greedy and seeded sampling), verified n-grams that actually get accepted, the token tree's
// rows against one-token decoding, and the option checks.
#include "llm/lookahead_decoding.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "graph/char_tokenizer.h"
#include "graph/random_model.h"
#include "llm/generation.h"
#include "graph/executor.h"
#include "llm/graph_decoder.h"

namespace genai {
namespace {

using graph::ModelMode;
using graph_testing::CharTokenizer;
using graph_testing::random_model;

constexpr LookaheadOptions kSmallTree{.ngram = 3, .window = 2, .gcap = 2};  // 8 rows

// `single`: with kv_forward_ar1 beside the tree method (our programs); without it every step is a
// tree (upstream's lookahead programs).
std::unique_ptr<DecoderScheduler> tree_session(std::shared_ptr<const Model> model, int64_t context, int64_t decode_ar,
                                               bool single = true) {
  graph::DecoderGraphOptions g;
  g.mode = ModelMode::kHybrid;
  g.max_context_len = context;
  g.prefill_ar_len = 8;
  g.decode_ar_len = decode_ar;
  graph::GraphMap graphs = graph::build_decoder_graphs(std::move(model), g);
  EXPECT_EQ(graphs.count(std::string(graph::kKvForwardAr1)), decode_ar > 1 ? 1u : 0u);
  if (!single) graphs.erase(std::string(graph::kKvForwardAr1));
  return make_graph_session(std::make_unique<graph::InterpreterExecutor>(std::move(graphs)));
}

GenerationOptions generation(float temperature, std::optional<LookaheadOptions> lookahead) {
  GenerationOptions o;
  // A repetitive prompt; random models fall into loops that the n-gram pool then predicts.
  o.prompts = {"abcabcabcabc", "xyzxyz"};
  o.max_new_tokens = 40;
  o.sampler = SamplerConfig{.temperature = temperature, .top_p = 0.9f, .seed = 11};
  o.lookahead = lookahead;
  return o;
}

TEST(LookaheadDecoding, GivesPlainDecodingsTokensGreedyAndSampled) {
  CharTokenizer tok;
  int64_t accepted = 0, single_steps = 0;
  for (uint32_t seed : {3u, 5u, 8u})
  for (bool single : {false, true}) {
    auto model = random_model({.seed = seed});
    for (float temperature : {0.0f, 0.8f}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " temperature " << temperature << " single " << single);
      auto plain = tree_session(model, 128, 8, single);
      const GenerationResult want = generate(*plain, tok, ChatFormat::kNone, generation(temperature, std::nullopt));
      auto tree = tree_session(model, 128, 8, single);
      const GenerationResult got = generate(*tree, tok, ChatFormat::kNone, generation(temperature, kSmallTree));
      ASSERT_FALSE(want.tokens.empty());
      EXPECT_EQ(got.tokens, want.tokens);
      EXPECT_EQ(got.text, want.text);
      EXPECT_EQ(got.stats.generated_tokens, want.stats.generated_tokens);
      // Every decode call produced at least one token; the accepted ones saved calls. Without a
      // single-token method every call is a tree.
      if (!single) {
        EXPECT_EQ(got.stats.lookahead_calls, got.stats.decode_steps);
      }
      EXPECT_LE(got.stats.lookahead_calls, got.stats.decode_steps);
      EXPECT_GT(got.stats.lookahead_calls, 0);
      EXPECT_EQ(got.stats.decode_steps + got.stats.lookahead_accepted, got.stats.decode_tokens);
      single_steps += got.stats.decode_steps - got.stats.lookahead_calls;
      EXPECT_EQ(plain->position(), tree->position());
      accepted += got.stats.lookahead_accepted;
    }
  }
  EXPECT_GT(accepted, 0) << "no guess was ever verified: the pool is not doing its job";
  EXPECT_GT(single_steps, 0) << "kv_forward_ar1 never served a step without a guess";
}

// Up to the context's end: the tree's positions past it must not disturb what is accepted.
TEST(LookaheadDecoding, StopsAtTheContextLikePlainDecoding) {
  CharTokenizer tok;
  auto model = random_model({.seed = 5});
  auto o = generation(0.0f, std::nullopt);
  o.prompts = {"abcabc"};
  o.max_new_tokens = 500;
  auto plain = tree_session(model, 48, 8);
  const GenerationResult want = generate(*plain, tok, ChatFormat::kNone, o);
  o.lookahead = kSmallTree;
  auto tree = tree_session(model, 48, 8);
  const GenerationResult got = generate(*tree, tok, ChatFormat::kNone, o);
  EXPECT_EQ(got.tokens, want.tokens);
  ASSERT_EQ(got.turns.size(), 1u);
  EXPECT_EQ(got.turns[0].stop_reason, want.turns[0].stop_reason);
  EXPECT_EQ(tree->position(), plain->position());
}

// A tree's root row is one-token decoding; a chain's rows are the prefix's logits; only the
// accepted rows enter the cache.
TEST(LookaheadDecoding, TreeRowsEqualOneTokenDecodingOfTheirPrefix) {
  auto model = random_model({.seed = 9});
  auto plain = tree_session(model, 64, 8);
  auto tree = tree_session(model, 64, 8);
  const std::vector<int32_t> prompt = {1, 10, 11, 12, 13};
  plain->forward(prompt);
  tree->forward(prompt);
  // Rows: 0 = 20; 1 = 21 after 20; 2 = 22 after 21; 3 = 30 after 20 (a sibling of row 1).
  const std::vector<int32_t> tokens = {20, 21, 22, 30}, depth = {0, 1, 2, 1}, parent = {-1, 0, 1, 0};
  tree->forward_tree(tokens, depth, parent);
  auto close = [](std::span<const float> a, std::span<const float> b) {
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    return worst;
  };
  auto copy = [](std::span<const float> s) { return std::vector<float>(s.begin(), s.end()); };
  std::vector<float> want = copy(plain->forward(std::span(&tokens[0], 1)));
  EXPECT_LT(close(tree->tree_logits(0), want), 1e-4);
  want = copy(plain->forward(std::span(&tokens[1], 1)));
  EXPECT_LT(close(tree->tree_logits(1), want), 1e-4);
  want = copy(plain->forward(std::span(&tokens[2], 1)));
  EXPECT_LT(close(tree->tree_logits(2), want), 1e-4);
  const std::vector<int64_t> path = {0, 1, 2};
  tree->accept_tree_rows(path);
  EXPECT_EQ(tree->position(), plain->position());
  // The sibling (row 3) did not enter the cache: the next token sees 20 21 22 only.
  const int32_t next = 40;
  want = copy(plain->forward(std::span(&next, 1)));
  EXPECT_LT(close(tree->forward(std::span(&next, 1)), want), 1e-4);
}

TEST(LookaheadDecoding, OptionsOutsideTheirRangeOrTheDecodeGraphAreInputErrors) {
  auto model = random_model();
  auto session = tree_session(model, 64, 8);
  for (LookaheadOptions bad : {LookaheadOptions{.ngram = 1, .window = 2, .gcap = 2},
                               LookaheadOptions{.ngram = 3, .window = 0, .gcap = 2},
                               LookaheadOptions{.ngram = 3, .window = 2, .gcap = 0},
                               LookaheadOptions{.ngram = 3, .window = 4, .gcap = 4}}) {  // 16 rows > 8
    try {
      LookaheadDecoder d(*session, bad, 0);
      ADD_FAILURE() << "accepted ngram " << bad.ngram << " window " << bad.window << " gcap " << bad.gcap;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--window"), std::string::npos) << e.what();
    }
  }
  // Plain decoding's one-row kv_forward holds no tree.
  auto one_row = tree_session(model, 64, 1);
  EXPECT_THROW(LookaheadDecoder(*one_row, kSmallTree, 0), InputError);
  // A decode AR the context cannot hold.
  EXPECT_THROW(tree_session(model, 8, 8), InputError);
}

}  // namespace
}  // namespace genai
