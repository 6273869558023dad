// The runner's KV cache for static graphs, "smart mask" style (as upstream's only remaining
// manager): per layer one K input buffer [n_kv, head_dim, CL-ar] and one V input buffer
// [n_kv, CL-ar, head_dim] (n_kv and head_dim that layer's); slots never move while decoding, new entries are copied in at the
// current position, and the attention mask hides the slots not filled yet. The element type is
// only a byte size, so the quantized runtime stores uint8/uint16 codes with the same code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "llm/attention_sink.h"

namespace genai {

// Per layer with a cache of its own: KV heads and head size (gemma4's global layers are wider).
struct KvLayerShape {
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool operator==(const KvLayerShape&) const = default;
};

struct KvCacheLayout {
  std::vector<KvLayerShape> layers;
  int64_t context_len = 0;  // CL: cache columns + the ar new columns of a call
  int64_t n_layers() const { return static_cast<int64_t>(layers.size()); }
  // Every layer alike (all families but gemma4).
  static KvCacheLayout uniform(int64_t n_layers, int64_t kv_heads, int64_t head_dim, int64_t context_len) {
    return {std::vector<KvLayerShape>(static_cast<size_t>(n_layers), KvLayerShape{kv_heads, head_dim}), context_len};
  }
};

class SmartMaskKvCache {
 public:
  // `ar_lens`: every AR length the graphs use (e.g. {1, 32}); buffers are sized for the longest
  // cache (CL - min ar) so switching between them rearranges in place. Starts in layout ar_lens[0].
  SmartMaskKvCache(KvCacheLayout layout, DType element, std::vector<int64_t> ar_lens);

  const KvCacheLayout& layout() const { return layout_; }
  DType element() const { return element_; }
  int64_t ar_len() const { return ar_len_; }
  int64_t cache_len() const { return layout_.context_len - ar_len_; }  // CL - ar
  int64_t n_past() const { return n_past_; }

  // Forgets every entry (n_past = 0); buffers are zeroed so runs are reproducible.
  void reset();
  // Re-lays the cache out for graphs of `ar` tokens: each row moves from stride CL-ar_old to
  // CL-ar (upstream's rearrange_cache). Failure when the filled entries would not fit.
  void set_ar_len(int64_t ar);

  // Read-only views of layer `l`'s cache in the current layout, as graph inputs:
  // K [1, n_kv, head_dim, CL-ar], V [1, n_kv, CL-ar, head_dim].
  Tensor k_input(int64_t l) const;
  Tensor v_input(int64_t l) const;

  // Copies the first `n_update` of the ar new entries of layer `l` — k_out [1, n_kv, head_dim, ar],
  // v_out [1, n_kv, ar, head_dim] — into the cache at position n_past() (K: n_update elements per
  // (head, dim) row; V: n_update*head_dim per head). Call for every layer, then advance(). The
  // outputs' ar need not be the current layout's (see fits()).
  bool fits(int64_t n_update) const { return n_past_ + n_update <= cache_len(); }
  void update(int64_t l, const Tensor& k_out, const Tensor& v_out, int64_t n_update);
  // The same for the entries of `rows` (ascending positions of a path through a token tree, as
  // lookahead decoding accepts them), stored at n_past(), n_past() + 1, ...
  void update_rows(int64_t l, const Tensor& k_out, const Tensor& v_out, std::span<const int64_t> rows);
  void advance(int64_t n_update);
  // Attention sink: drops the `count` entries after the first `sink` and moves the later ones
  // down by `count` slots, their keys rotated back by `count` positions (attention_sink.h);
  // n_past() shrinks by `count`. Failure when fewer than sink + count entries are cached.
  void evict(int64_t sink, int64_t count, const KeyRerotation& rerotation);

 private:
  // Checks the outputs of layer `l` and that `n_update` entries fit; returns their AR length.
  int64_t check_update(int64_t l, const Tensor& k_out, const Tensor& v_out, int64_t n_update) const;
  // Copies entries first_row .. first_row + n - 1 of a call of `ar` to slots slot .. slot + n - 1.
  void copy_run(int64_t l, const Tensor& k_out, const Tensor& v_out, int64_t ar, int64_t first_row, int64_t slot,
                int64_t n);
  uint8_t* k_buf(int64_t l) { return k_[l].get(); }
  uint8_t* v_buf(int64_t l) { return v_[l].get(); }

  KvCacheLayout layout_;
  DType element_;
  size_t esize_;
  std::vector<int64_t> ar_lens_;
  int64_t capacity_ = 0;  // longest cache length of any layout
  int64_t ar_len_ = 0;
  int64_t n_past_ = 0;
  std::vector<size_t> bytes_;  // per layer, each of K and V
  std::vector<std::shared_ptr<uint8_t[]>> k_, v_;
};

// The attention mask [1, 1, ar, CL] for a call of `ar` tokens at position n_past: row i attends
// cache columns [0, n_past) and the new columns CL-ar .. CL-ar+i (itself and the earlier new
// tokens); every other column holds `masked`. T is float for float graphs, uint16 when quantized.
template <typename T>
void fill_smart_mask(T* mask, int64_t ar, int64_t context_len, int64_t n_past, T attend, T masked) {
  const int64_t cache_len = context_len - ar;
  for (int64_t i = 0; i < ar; ++i) {
    T* row = mask + i * context_len;
    for (int64_t j = 0; j < context_len; ++j) {
      const bool visible = j < n_past || (j >= cache_len && j - cache_len <= i);
      row[j] = visible ? attend : masked;
    }
  }
}

// The attention mask of a token tree (lookahead decoding) for a call at position n_past: row i
// attends cache columns [0, n_past), its own new column and those of its ancestors, where
// parent[i] < i is row i's parent (-1: a root, attending the cache alone besides itself).
template <typename T>
void fill_tree_mask(T* mask, int64_t ar, int64_t context_len, int64_t n_past, std::span<const int32_t> parent, T attend,
                    T masked) {
  const int64_t cache_len = context_len - ar;
  for (int64_t i = 0; i < ar; ++i) {
    T* row = mask + i * context_len;
    const int32_t p = i < static_cast<int64_t>(parent.size()) ? parent[i] : -1;
    if (p >= 0) {
      // Ancestors are the parent's visible new columns (rows come after their parents).
      std::copy(mask + p * context_len, mask + (p + 1) * context_len, row);
    } else {
      for (int64_t j = 0; j < context_len; ++j) row[j] = j < n_past ? attend : masked;
    }
    row[cache_len + i] = attend;
  }
}

}  // namespace genai
