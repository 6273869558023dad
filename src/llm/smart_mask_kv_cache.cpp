#include "llm/smart_mask_kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace genai {

SmartMaskKvCache::SmartMaskKvCache(KvCacheLayout layout, DType element, std::vector<int64_t> ar_lens)
    : layout_(layout), element_(element), esize_(dtype_size(element)), ar_lens_(std::move(ar_lens)) {
  if (ar_lens_.empty()) throw_failure("internal: KV cache without an AR length");
  for (int64_t ar : ar_lens_)
    if (ar < 1 || ar >= layout_.context_len)
      throw_input_error("KV cache: AR length {} must be in [1, {}) for a context of {}", ar, layout_.context_len,
                        layout_.context_len);
  capacity_ = layout_.context_len - *std::min_element(ar_lens_.begin(), ar_lens_.end());
  ar_len_ = ar_lens_.front();
  for (const KvLayerShape& s : layout_.layers) {
    const size_t bytes = static_cast<size_t>(s.kv_heads * s.head_dim * capacity_) * esize_;
    k_.emplace_back(new uint8_t[bytes]());
    v_.emplace_back(new uint8_t[bytes]());
    bytes_.push_back(bytes);
  }
}

void SmartMaskKvCache::reset() {
  for (size_t l = 0; l < k_.size(); ++l) {
    std::memset(k_[l].get(), 0, bytes_[l]);
    std::memset(v_[l].get(), 0, bytes_[l]);
  }
  n_past_ = 0;
  ar_len_ = ar_lens_.front();
}

void SmartMaskKvCache::set_ar_len(int64_t ar) {
  if (ar == ar_len_) return;
  if (std::find(ar_lens_.begin(), ar_lens_.end(), ar) == ar_lens_.end())
    throw_failure("internal: KV cache was not sized for AR length {}", ar);
  const int64_t src = layout_.context_len - ar_len_, dst = layout_.context_len - ar;
  if (n_past_ > dst) throw_failure("KV cache: {} entries do not fit a cache of {} for AR length {}", n_past_, dst, ar);
  const size_t row_bytes = static_cast<size_t>(n_past_) * esize_;
  for (int64_t l = 0; l < layout_.n_layers(); ++l) {
    const int64_t KV = layout_.layers[static_cast<size_t>(l)].kv_heads, hd = layout_.layers[static_cast<size_t>(l)].head_dim;
    const int64_t rows = KV * hd;
    uint8_t* k = k_buf(l);
    uint8_t* v = v_buf(l);
    // Growing the stride moves rows back to front, shrinking front to back, so no row overwrites
    // one that has not moved yet (memmove handles the overlap within a row).
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = dst > src ? rows - 1 - i : i;
      std::memmove(k + r * dst * esize_, k + r * src * esize_, row_bytes);
    }
    for (int64_t i = 0; i < KV; ++i) {
      const int64_t h = dst > src ? KV - 1 - i : i;
      std::memmove(v + h * dst * hd * esize_, v + h * src * hd * esize_, row_bytes * hd);
    }
  }
  ar_len_ = ar;
}

Tensor SmartMaskKvCache::k_input(int64_t l) const {
  const KvLayerShape& s = layout_.layers.at(static_cast<size_t>(l));
  return Tensor::view(element_, {1, s.kv_heads, s.head_dim, cache_len()}, k_.at(l).get(), k_.at(l));
}

Tensor SmartMaskKvCache::v_input(int64_t l) const {
  const KvLayerShape& s = layout_.layers.at(static_cast<size_t>(l));
  return Tensor::view(element_, {1, s.kv_heads, cache_len(), s.head_dim}, v_.at(l).get(), v_.at(l));
}

int64_t SmartMaskKvCache::check_update(int64_t l, const Tensor& k_out, const Tensor& v_out, int64_t n_update) const {
  // The outputs' AR length may differ from the current layout: a call's last entries can be
  // stored after switching to a layout with a longer cache.
  const KvLayerShape& shape = layout_.layers.at(static_cast<size_t>(l));
  const int64_t KV = shape.kv_heads, hd = shape.head_dim;
  const int64_t ar = k_out.rank() == 4 ? k_out.dim(3) : -1;
  const Shape k_shape{1, KV, hd, ar}, v_shape{1, KV, ar, hd};
  if (k_out.dtype() != element_ || v_out.dtype() != element_ || k_out.shape() != k_shape || v_out.shape() != v_shape)
    throw_failure("KV cache: layer {} outputs {}{} / {}{} do not match {}{} / {}", l, dtype_name(k_out.dtype()),
                  shape_to_string(k_out.shape()), dtype_name(v_out.dtype()), shape_to_string(v_out.shape()),
                  dtype_name(element_), shape_to_string(k_shape), shape_to_string(v_shape));
  if (n_update < 0 || n_update > ar || n_past_ + n_update > cache_len())
    throw_failure("KV cache: cannot add {} entries at position {} to a cache of {}", n_update, n_past_, cache_len());
  return ar;
}

void SmartMaskKvCache::copy_run(int64_t l, const Tensor& k_out, const Tensor& v_out, int64_t ar, int64_t first_row,
                                int64_t slot, int64_t n) {
  const KvLayerShape& shape = layout_.layers[static_cast<size_t>(l)];
  const int64_t KV = shape.kv_heads, hd = shape.head_dim, stride = cache_len();
  const uint8_t* ks = static_cast<const uint8_t*>(k_out.raw());
  const uint8_t* vs = static_cast<const uint8_t*>(v_out.raw());
  uint8_t* k = k_buf(l);
  uint8_t* v = v_buf(l);
  for (int64_t r = 0; r < KV * hd; ++r)
    std::memcpy(k + (r * stride + slot) * esize_, ks + (r * ar + first_row) * esize_, n * esize_);
  for (int64_t h = 0; h < KV; ++h)
    std::memcpy(v + (h * stride + slot) * hd * esize_, vs + (h * ar + first_row) * hd * esize_, n * hd * esize_);
}

void SmartMaskKvCache::update(int64_t l, const Tensor& k_out, const Tensor& v_out, int64_t n_update) {
  const int64_t ar = check_update(l, k_out, v_out, n_update);
  copy_run(l, k_out, v_out, ar, 0, n_past_, n_update);
}

void SmartMaskKvCache::update_rows(int64_t l, const Tensor& k_out, const Tensor& v_out, std::span<const int64_t> rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t ar = check_update(l, k_out, v_out, n);
  for (int64_t row : rows)
    if (row < 0 || row >= ar) throw_failure("KV cache: row {} outside the call's {} entries", row, ar);
  // One copy per run of consecutive rows (a verified n-gram is one).
  for (int64_t i = 0; i < n;) {
    int64_t run = 1;
    while (i + run < n && rows[i + run] == rows[i] + run) ++run;
    copy_run(l, k_out, v_out, ar, rows[i], n_past_ + i, run);
    i += run;
  }
}

void SmartMaskKvCache::evict(int64_t sink, int64_t count, const KeyRerotation& rerotation) {
  if (sink < 0 || count < 1 || sink + count > n_past_)
    throw_failure("KV cache: cannot evict {} entries after {} of {}", count, sink, n_past_);
  if (rerotation.n_layers() != layout_.n_layers())
    throw_failure("internal: key rerotation for {} layers, cache of {}", rerotation.n_layers(), layout_.n_layers());
  const int64_t stride = cache_len(), kept = n_past_ - sink - count;
  for (int64_t l = 0; l < layout_.n_layers(); ++l) {
    const KvLayerShape& s = layout_.layers[static_cast<size_t>(l)];
    uint8_t* k = k_buf(l);
    uint8_t* v = v_buf(l);
    for (int64_t r = 0; r < s.kv_heads * s.head_dim; ++r)
      std::memmove(k + (r * stride + sink) * esize_, k + (r * stride + sink + count) * esize_, kept * esize_);
    for (int64_t h = 0; h < s.kv_heads; ++h)
      std::memmove(v + (h * stride + sink) * s.head_dim * esize_, v + (h * stride + sink + count) * s.head_dim * esize_,
                   kept * s.head_dim * esize_);
    rerotation.apply(l, k, element_, s.kv_heads, s.head_dim, stride, sink, sink + kept, count);
  }
  n_past_ -= count;
}

void SmartMaskKvCache::advance(int64_t n_update) {
  if (n_past_ + n_update > cache_len())
    throw_failure("KV cache: advancing {} past the cache of {}", n_update, cache_len());
  n_past_ += n_update;
}

}  // namespace genai
