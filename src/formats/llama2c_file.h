// llama2.c checkpoints (the legacy "version 0" float32 .bin that run.c reads): a header of seven
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative
// vocab_size means a separate classifier follows), then float32 arrays in a fixed order. This
// file knows only that layout; mapping to model weights (and llama2.c's interleaved rotary row
// order) is the model layer's job.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace genai {

struct Llama2cHeader {
  int32_t dim = 0;
  int32_t hidden_dim = 0;
  int32_t n_layers = 0;
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;
  int32_t vocab_size = 0;  // always positive here; see shared_classifier
  int32_t seq_len = 0;
  bool shared_classifier = true;
  int32_t head_size() const { return n_heads > 0 ? dim / n_heads : 0; }
};

// One array of the file, in file order. Per-layer arrays are stacked over layers as llama2.c
// stores them: name "wq" with shape [n_layers, n_heads*head_size, dim], and so on.
struct Llama2cArray {
  std::string name;  // token_embedding_table, rms_att_weight, wq, wk, wv, wo, rms_ffn_weight,
                     // w1, w2, w3, rms_final_weight, freq_cis_real, freq_cis_imag, wcls
  Shape shape;
};

// The arrays of a checkpoint with this header, in file order.
std::vector<Llama2cArray> llama2c_layout(const Llama2cHeader& h);

class Llama2cFile {
 public:
  static Llama2cFile open(const std::filesystem::path& path);
  static Llama2cFile parse(std::span<const uint8_t> bytes, std::string source,
                           std::shared_ptr<const void> keepalive = nullptr);

  const Llama2cHeader& header() const { return header_; }
  const std::string& source() const { return source_; }
  // float32 view of an array by name (views into the map); throws InputError when absent.
  Tensor array(const std::string& name) const;
  bool has(const std::string& name) const;

 private:
  std::string source_;
  std::shared_ptr<const void> keepalive_;
  Llama2cHeader header_;
  std::vector<std::pair<Llama2cArray, const float*>> arrays_;
};

// Writes the header and the arrays in file order; `produce(array)` returns each array's
// float32 values (numel of the array's shape). Atomic and deterministic.
void write_llama2c(const std::filesystem::path& path, const Llama2cHeader& header,
                   const std::function<std::vector<float>(const Llama2cArray&)>& produce);

}  // namespace genai
