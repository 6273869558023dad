// Attention sink (upstream's --use_attention_sink SINK,EVICTION; Xiao et al., 2023): when a call
// would overflow the KV cache, the first SINK entries stay, the EVICTION entries after them go, and
// the rest move down by EVICTION slots. New tokens take their cache slot as position, so the
// moved keys must be rotated back by EVICTION positions: RoPE is a rotation per frequency pair,
// R(p - e) = R(-e) R(p), so each pair is rotated by -e * inv_freq with no need to know p. That
// is what upstream's attention_sink_evictor program computes on the quantized cache
// (dequantize, rotate, requantize with the same encoding); here it runs on the cache buffers
// directly, with the quantizer's own rounding (quant/encoding.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/dtype.h"
#include "model/model_config.h"
#include "quant/encoding.h"

namespace genai {

class MethodRunner;

struct AttentionSinkOptions {
  int64_t sink = 0;      // entries kept at the front
  int64_t eviction = 0;  // entries dropped after them per eviction
};

// How one cached layer's keys were rotated: its RoPE frequencies (rotate-half pairs (i, i + n)
// over the leading 2n dims of each head, n = inv_freq.size()); empty when it uses no RoPE.
struct KeyRotary {
  std::vector<float> inv_freq;
};

class KeyRerotation {
 public:
  // `rotary`: per cached layer. `encodings`: per cached layer for uint8/uint16 caches, empty for
  // float32 ones.
  KeyRerotation(std::vector<KeyRotary> rotary, std::vector<quant::Encoding> encodings);

  // Rotates layer `l`'s keys in slots [from, to) of a K cache laid out [kv_heads, head_dim,
  // stride] (element type `element`) back by `delta` positions.
  void apply(int64_t l, void* k, DType element, int64_t kv_heads, int64_t head_dim, int64_t stride, int64_t from,
             int64_t to, int64_t delta) const;
  int64_t n_layers() const { return static_cast<int64_t>(rotary_.size()); }

 private:
  std::vector<KeyRotary> rotary_;
  std::vector<quant::Encoding> encodings_;
};

// What the compiled programs publish for it (compile/constant_methods.h): get_rope_inv_freq_{l}
// per cached layer and, for quantized caches, get_kv_output_{l}_quant_attr (the K outputs come
// first). InputError naming the program when they are missing.
KeyRerotation key_rerotation_from_constants(const MethodRunner& runner, int64_t n_layers, DType kv_dtype);
// The same from the model (graphs of `context` positions with float32 caches: the interpreter,
// the QDQ reference).
KeyRerotation key_rerotation_from_model(const ModelConfig& config, int64_t context);

}  // namespace genai
