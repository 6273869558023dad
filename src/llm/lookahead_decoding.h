// Lookahead decoding (Fu et al., 2024; upstream's LhdTokenGenerator): each decode call runs one
// token tree through kv_forward (AR = next_pow2((window + gcap) * (ngram - 1))):
//   - the lookahead branch, ngram-1 levels of `window` tokens: Jacobi iterations whose columns,
//     read top to bottom, become n-gram candidates for the pool;
//   - the verification branch, up to `gcap` guesses: what followed the last three tokens earlier
//     in the conversation, then pooled n-grams that start with the current token.
// The current token's row gives the next token; while a pooled n-gram agrees with what was
// sampled, its rows give the tokens after it, so one call can yield up to `ngram` tokens. Every
// token is still sampled from the logits of its own exact prefix, so the output equals plain
// decoding's (the same tokens under greedy, the same draws of the same sampler otherwise).
//
// Where a tree call costs several single-token calls (our programs on a CPU carry
// kv_forward_ar1 for that), a step runs the tree only when it pays: a guess exists, and the
// tokens recent tree calls yielded exceed their measured cost in single calls (with a tree now
// and then to keep measuring). Otherwise it decodes one token.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/random.h"
#include "core/sampler.h"
#include "llm/decoder_session.h"

namespace genai {

struct LookaheadOptions {
  int64_t ngram = 5;   // --ngram: tokens per verified n-gram, the current one included
  int64_t window = 8;  // --window: columns of the lookahead branch
  int64_t gcap = 8;    // --gcap: pooled n-grams verified per call
  // Rows of the tree: (window + gcap) * (ngram - 1), at most the decode method's AR length.
  int64_t tree_rows() const { return (window + gcap) * (ngram - 1); }
  // InputError naming --ngram/--window/--gcap when out of range or when the tree exceeds `capacity`.
  void validate(int64_t capacity) const;
};

struct LookaheadStats {
  int64_t calls = 0;     // tree calls
  int64_t accepted = 0;  // tokens they produced from verified n-grams (beyond one per call)
};

class LookaheadDecoder {
 public:
  LookaheadDecoder(TreeDecoderSession& session, const LookaheadOptions& options, uint64_t seed);

  // After a prefill: `context` is every token in the session; `continued` is false when the
  // session started over. Seeds the lookahead branch from the prompt on first use.
  void start(std::span<const int32_t> context, bool continued);

  // `context`: the session's tokens followed by the current one (the last sampled, not yet in
  // the session). Pools the context's n-grams not pooled yet (our addition to upstream's pool,
  // which holds only the branch's n-grams: a reply that repeats its prompt, or itself, is
  // verified from the first call), then runs one tree call, or one single-token call when a
  // tree does not pay, and returns the tokens it yields, in order (1 to ngram), each drawn by
  // `sampler` from its prefix's logits; stops after a token for which `stop` is true or after
  // `limit` tokens (>= 1). The session then holds the current token and every returned one but
  // the last.
  std::vector<int32_t> step(std::span<const int32_t> context, Sampler& sampler, int64_t limit,
                            const std::function<bool(int32_t)>& stop);

  const LookaheadStats& stats() const { return stats_; }

 private:
  // guesses_ for the context's last (current) token: what followed its last three tokens
  // earlier, then pooled n-grams, gcap at most.
  void find_guesses(std::span<const int32_t> context);
  bool tree_pays(std::span<const int32_t> context);
  std::vector<int32_t> single_step(int32_t current, Sampler& sampler);
  void build_tree(int32_t current);
  void advance_branch(int32_t current);
  void pool_gram(int32_t first, const std::vector<int32_t>& gram);
  // Pools the n-grams of `context` that end at or after index pooled_.
  void pool_context(std::span<const int32_t> context);

  TreeDecoderSession& session_;
  LookaheadOptions o_;
  Xoshiro256 rng_;
  bool started_ = false;
  // branch_[level][column], levels 0 .. ngram-2.
  std::vector<std::vector<int32_t>> branch_;
  // Pooled n-grams (their ngram-1 tokens after the key) by first token: a ring of at most gcap.
  struct Pool {
    std::vector<std::vector<int32_t>> grams;
    size_t head = 0;
  };
  std::unordered_map<int32_t, Pool> pool_;
  size_t pooled_ = 0;  // the context's n-grams ending before this index are in the pool
  // Moving averages of the tokens per tree call and of both calls' milliseconds; steps since the
  // last tree that skipped one although a guess existed. The tokens are averaged apart for trees
  // whose first guess continued the last three tokens as the conversation did before (matched_)
  // and for the others: the former are far more often right.
  double tree_tokens_[2] = {2.0, 2.0}, tree_ms_ = 0.0, single_ms_ = 0.0;  // [1] starts at ngram
  bool matched_ = false;
  int64_t skipped_ = 0;
  std::vector<int32_t> tokens_, depth_, parent_;
  std::vector<std::vector<int32_t>> guesses_;  // the n-grams this call verifies, in tree order
  LookaheadStats stats_;
};

}  // namespace genai
