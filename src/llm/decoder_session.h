// What the generation loop drives: a stateful decoder that consumes tokens at increasing
// positions and returns next-token logits. The float reference (ReferenceSession) and the
// scheduler over static methods (DecoderScheduler: graphs or compiled programs) implement it, so
// the loop, sampling and stats are written once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace genai {

// Embeddings that take the place of some tokens' own in one call (image features at the <image>
// tokens): row i of `rows` ([at.size(), dim], float32) replaces the embedding of tokens[at[i]].
struct EmbeddingRows {
  std::vector<int64_t> at;  // ascending token indices of the call
  std::vector<float> rows;
  int64_t dim = 0;
  bool empty() const { return at.empty(); }
};

class DecoderSession {
 public:
  virtual ~DecoderSession() = default;

  // Runs `tokens` (one or more) at positions position()..position()+n-1, appending them to the
  // KV cache, and returns the logits [vocab_size()] of the LAST token. The span stays valid until
  // the next call. Throws InputError when position() + n would exceed max_context().
  virtual std::span<const float> forward(std::span<const int32_t> tokens) = 0;
  // The same with some embeddings replaced (EmbeddingRows). Only sessions whose decoder takes
  // embeddings from a separate embedding step can; the others throw InputError.
  virtual std::span<const float> forward_replacing(std::span<const int32_t> tokens, const EmbeddingRows& replaced);
  // Tokens currently in the cache.
  virtual int64_t position() const = 0;
  // The most positions the cache can hold.
  virtual int64_t max_context() const = 0;
  virtual int32_t vocab_size() const = 0;
  // Empties the cache: the next forward starts at position 0.
  virtual void reset() = 0;
};

// A session whose decode method takes a token tree in one call (lookahead decoding): static
// graphs with a decode AR length above 1 (DecoderScheduler).
class TreeDecoderSession : public DecoderSession {
 public:
  // Rows one tree call holds (kv_forward's AR length).
  virtual int64_t tree_capacity() const = 0;
  // True when forward() of one token costs less than a tree call (a method of its own).
  virtual bool has_single_token_method() const = 0;
  // Runs the tree after the cache: row i holds tokens[i] at position position() + depth[i] and
  // attends the cache, itself and its ancestors (parent[i] < i; -1: a root). Nothing enters the
  // cache until accept_tree_rows. InputError for more rows than tree_capacity() or a bad id.
  virtual void forward_tree(std::span<const int32_t> tokens, std::span<const int32_t> depth,
                            std::span<const int32_t> parent) = 0;
  // Row `row`'s logits of the last forward_tree; valid until the next call.
  virtual std::span<const float> tree_logits(int64_t row) = 0;
  // Appends the K/V entries of `rows` (a path from a root: depths 0, 1, ...) to the cache, as if
  // their tokens had been forwarded; position() grows by rows.size().
  virtual void accept_tree_rows(std::span<const int64_t> rows) = 0;
};

}  // namespace genai
