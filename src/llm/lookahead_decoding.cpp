#include "llm/lookahead_decoding.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace genai {

void LookaheadOptions::validate(int64_t capacity) const {
  if (window < 1 || gcap < 1 || ngram < 2)
    throw_input_error("--model_mode lookahead needs --window >= 1, --gcap >= 1 and --ngram >= 2 (got {}, {}, {})", window,
                      gcap, ngram);
  if (tree_rows() > capacity)
    throw_input_error("--model_mode lookahead: (--window {} + --gcap {}) * (--ngram {} - 1) = {} rows exceed the {} of "
                      "the program's kv_forward (its AR length); compile with these values or pass smaller ones",
                      window, gcap, ngram, tree_rows(), capacity);
}

LookaheadDecoder::LookaheadDecoder(TreeDecoderSession& session, const LookaheadOptions& options, uint64_t seed)
    : session_(session), o_(options), rng_(seed) {
  o_.validate(session.tree_capacity());
  branch_.assign(static_cast<size_t>(o_.ngram - 1), std::vector<int32_t>(static_cast<size_t>(o_.window), 0));
  // Optimistic until measured: a continuation seen before is expected to hold entirely.
  tree_tokens_[1] = static_cast<double>(o_.ngram);
}

void LookaheadDecoder::start(std::span<const int32_t> context, bool continued) {
  if (!continued) pooled_ = 0;
  if (context.empty()) return;
  if (!started_) {
    // As upstream: the Jacobi iterations start from tokens of the prompt (its first, usually
    // BOS, only when it is all there is).
    const size_t first = context.size() > 1 ? 1 : 0, n = context.size() - first;
    for (auto& level : branch_)
      for (int32_t& t : level) t = context[first + static_cast<size_t>(rng_.next() % n)];
    started_ = true;
  }
}

void LookaheadDecoder::pool_gram(int32_t first, const std::vector<int32_t>& gram) {
  Pool& p = pool_[first];
  if (std::find(p.grams.begin(), p.grams.end(), gram) != p.grams.end()) return;
  if (p.grams.size() < static_cast<size_t>(o_.gcap)) {
    p.grams.push_back(gram);
  } else {
    p.grams[p.head] = gram;
    p.head = (p.head + 1) % p.grams.size();
  }
}

void LookaheadDecoder::pool_context(std::span<const int32_t> context) {
  const size_t L = static_cast<size_t>(o_.ngram - 1);
  std::vector<int32_t> gram(L);
  // The gram starting at s ends at s + L.
  for (size_t s = pooled_ > L ? pooled_ - L : 0; s + L < context.size(); ++s) {
    std::copy(context.begin() + static_cast<std::ptrdiff_t>(s + 1),
              context.begin() + static_cast<std::ptrdiff_t>(s + 1 + L), gram.begin());
    pool_gram(context[s], gram);
  }
  pooled_ = std::max(pooled_, context.size());
}

void LookaheadDecoder::build_tree(int32_t current) {
  const int64_t W = o_.window, L = o_.ngram - 1;
  tokens_.clear();
  depth_.clear();
  parent_.clear();
  auto add = [&](int32_t token, int32_t depth, int32_t parent) {
    tokens_.push_back(token);
    depth_.push_back(depth);
    parent_.push_back(parent);
  };
  // Level 0: the current token, then the rest of the first level as one causal chain.
  for (int64_t j = 0; j < W; ++j) add(j == 0 ? current : branch_[0][j], static_cast<int32_t>(j), static_cast<int32_t>(j - 1));
  // Level i, column j: one step further than level i-1 of the same column.
  for (int64_t i = 1; i < L; ++i)
    for (int64_t j = 0; j < W; ++j)
      add(branch_[i][j], static_cast<int32_t>(i + j), static_cast<int32_t>((i - 1) * W + j));
  // Verification: each guess (find_guesses) after the current token's row.
  for (const auto& gram : guesses_) {
    for (int64_t j = 0; j < L; ++j) {
      const int32_t here = static_cast<int32_t>(tokens_.size());
      add(gram[j], static_cast<int32_t>(j + 1), j == 0 ? 0 : here - 1);
    }
  }
}

void LookaheadDecoder::find_guesses(std::span<const int32_t> context) {
  const size_t L = static_cast<size_t>(o_.ngram - 1), cap = static_cast<size_t>(o_.gcap);
  const int32_t current = context.back();
  guesses_.clear();
  // First what followed the last time the conversation held the two previous tokens and this
  // one (the pool's key is the current token alone, which a reply that repeats a list or its
  // prompt has many different continuations of; free text repeats three tokens far less often).
  // The continuation must end before the current token.
  const size_t m = context.size() - 1;  // the current token's index
  matched_ = false;
  if (m > L + 2) {
    const int32_t prev = context[m - 1], prev2 = context[m - 2];
    for (size_t i = m - 1 - L; i >= 2; --i) {
      if (context[i] == current && context[i - 1] == prev && context[i - 2] == prev2) {
        guesses_.emplace_back(context.begin() + static_cast<std::ptrdiff_t>(i + 1),
                              context.begin() + static_cast<std::ptrdiff_t>(i + 1 + L));
        matched_ = true;
        break;
      }
    }
  }
  if (auto it = pool_.find(current); it != pool_.end())
    for (const auto& gram : it->second.grams) {
      if (guesses_.size() >= cap) break;
      if (std::find(guesses_.begin(), guesses_.end(), gram) == guesses_.end()) guesses_.push_back(gram);
    }
}

void LookaheadDecoder::advance_branch(int32_t current) {
  // Column j's n-gram: its level-0 token (the current token for column 0), then the levels
  // above it after the shift, the last one freshly predicted. Logits are read before the pool
  // changes: the rows of this call are still in the session.
  const int64_t W = o_.window, L = o_.ngram - 1;
  std::vector<int32_t> first(static_cast<size_t>(W));
  for (int64_t j = 0; j < W; ++j) first[j] = j == 0 ? current : branch_[0][j];
  for (int64_t i = 0; i + 1 < L; ++i) branch_[i] = branch_[i + 1];
  for (int64_t j = 0; j < W; ++j) branch_[L - 1][j] = argmax(session_.tree_logits((L - 1) * W + j));
  std::vector<int32_t> gram(static_cast<size_t>(L));
  for (int64_t j = 0; j < W; ++j) {
    for (int64_t i = 0; i < L; ++i) gram[i] = branch_[i][j];
    pool_gram(first[j], gram);
  }
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
// Moving average: recent calls weigh most (the cost of a call changes with the context filled).
void blend(double& average, double value) { average = average == 0.0 ? value : 0.8 * average + 0.2 * value; }
// A tree after this many skipped ones times the cost of a tree in single calls, to keep measuring
// at a cost of about 1/16 of the time.
constexpr double kExploreEvery = 16.0;

}  // namespace

bool LookaheadDecoder::tree_pays(std::span<const int32_t> context) {
  find_guesses(context);
  if (!session_.has_single_token_method()) return true;
  if (guesses_.empty()) return false;
  // Unmeasured costs: try both.
  if (tree_ms_ == 0.0 || single_ms_ == 0.0 || tree_tokens_[matched_] * single_ms_ > tree_ms_ ||
      static_cast<double>(++skipped_) >= kExploreEvery * std::max(1.0, tree_ms_ / single_ms_)) {
    skipped_ = 0;
    return true;
  }
  return false;
}

std::vector<int32_t> LookaheadDecoder::single_step(int32_t current, Sampler& sampler) {
  const auto t0 = Clock::now();
  const int32_t token = sampler.sample(session_.forward(std::span(&current, 1)));
  blend(single_ms_, ms_since(t0));
  return {token};
}

std::vector<int32_t> LookaheadDecoder::step(std::span<const int32_t> context, Sampler& sampler, int64_t limit,
                                            const std::function<bool(int32_t)>& stop) {
  if (limit < 1 || context.empty()) throw_failure("internal: lookahead step with a limit of {} after {} tokens", limit,
                                                  context.size());
  const int32_t current = context.back();
  pool_context(context);
  if (!tree_pays(context)) return single_step(current, sampler);
  const auto t0 = Clock::now();
  // (The limit keeps every accepted row inside the context.)
  build_tree(current);
  session_.forward_tree(tokens_, depth_, parent_);
  ++stats_.calls;

  const int64_t W = o_.window, L = o_.ngram - 1;
  std::vector<int32_t> out;
  std::vector<int64_t> rows{0};  // rows whose entries join the cache: one per produced token
  std::vector<bool> active(guesses_.size(), true);
  int64_t row = 0;
  for (int64_t v = 0;; ++v) {
    const int32_t token = sampler.sample(session_.tree_logits(row));
    out.push_back(token);
    if (v == 0) advance_branch(current);
    if (stop(token) || static_cast<int64_t>(out.size()) >= limit || v == L) break;
    // The first guess still in agreement whose next token is this one continues the path.
    int64_t next_row = -1;
    for (size_t g = 0; g < guesses_.size(); ++g) {
      const int64_t r = W * L + static_cast<int64_t>(g) * L + v;  // guess g's token at depth v+1
      active[g] = active[g] && tokens_[r] == token;
      if (active[g] && next_row < 0) next_row = r;
    }
    if (next_row < 0) break;
    row = next_row;
    rows.push_back(row);
    ++stats_.accepted;
  }
  // The last token's entry is computed by the next call, as in plain decoding.
  session_.accept_tree_rows(rows);
  blend(tree_ms_, ms_since(t0));
  blend(tree_tokens_[matched_], static_cast<double>(out.size()));
  return out;
}

}  // namespace genai
