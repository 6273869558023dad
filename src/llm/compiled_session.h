// A DecoderSession over compiled programs (the text_decoder .pte of an artifact dir) on the host
// runtime: smart-mask KV cache holding the integer codes the program exchanges (uint8/uint16 as
// compiled; float for fp16 programs), prompt in AR-N chunks through prefill_forward, generation
// through kv_forward, logits dequantized with get_logits_scale/get_logits_zero_point. Layout comes
// from the constant methods (get_max_context_len, get_n_layers, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "llm/decoder_session.h"
#include "llm/smart_mask_kv_cache.h"
#include "runtime/artifact_dir.h"
#include "runtime/program_instance.h"

namespace genai {

struct CompiledSessionInfo {
  double load_ms = 0.0;
  int64_t max_context_len = 0;
  int64_t prefill_ar_len = 0;  // 0 in kv mode
  std::string kv_io_dtype;     // "uint8", "uint16", "float32"
  int64_t max_seq_len = 0;     // get_max_seq_len (0 when the program has none)
};

// The session proper, over one loaded text_decoder program. Every buffer a call exchanges with the
// program (tokens, positions, mask, logits, new K/V, the cache itself) is allocated once here and
// bound by pointer, so a decode step costs the program's own work plus a few copies of new cache
// entries and the dequantization of one logits row.
class CompiledDecoderSession : public DecoderSession {
 public:
  // Reads the layout from the signatures of kv_forward (and prefill_forward when present) as
  // upstream's runner does, and checks it against the constant methods that are present
  // (get_max_context_len, get_n_layers, get_vocab_size, get_kv_io_bit_width). Quantized logits
  // need get_logits_scale / get_logits_zero_point. InputError naming the program otherwise.
  explicit CompiledDecoderSession(std::unique_ptr<runtime::ProgramInstance> program);
  ~CompiledDecoderSession() override;

  std::span<const float> forward(std::span<const int32_t> tokens) override;
  // The same, returning every token's (dequantized) logits, row-major [n, vocab] (tests).
  std::vector<float> forward_all(std::span<const int32_t> tokens);
  int64_t position() const override { return position_; }
  int64_t max_context() const override { return context_len_; }
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_); }
  void reset() override;

  const runtime::ProgramInstance& program() const { return *program_; }
  int64_t prefill_ar_len() const { return prefill_ar_; }  // 0 without prefill_forward
  DType kv_dtype() const { return kv_dtype_; }
  int64_t kv_calls() const { return kv_calls_; }
  int64_t prefill_calls() const { return prefill_calls_; }

 private:
  struct Binding;  // one method's buffers and their places in its signature
  void run_chunk(Binding& b, std::span<const int32_t> tokens, std::vector<float>* all);
  void process(std::span<const int32_t> tokens, std::vector<float>* all);
  void dequantize_row(const Binding& b, int64_t row, float* out) const;

  std::unique_ptr<runtime::ProgramInstance> program_;
  int64_t n_layers_ = 0, n_kv_heads_ = 0, head_dim_ = 0, context_len_ = 0, vocab_ = 0, prefill_ar_ = 0;
  DType kv_dtype_ = DType::kF32, mask_dtype_ = DType::kF32, logits_dtype_ = DType::kF32;
  float logits_scale_ = 1.0f;
  int32_t logits_zero_point_ = 0;
  std::unique_ptr<SmartMaskKvCache> cache_;
  std::unique_ptr<Binding> kv_, prefill_;
  int64_t position_ = 0, kv_calls_ = 0, prefill_calls_ = 0;
  std::vector<float> logits_;
};

// InputError for a dir without text_decoder, or a program whose constants/signatures disagree.
std::unique_ptr<DecoderSession> make_compiled_session(const runtime::ArtifactDir& artifacts,
                                                      CompiledSessionInfo* info = nullptr);

}  // namespace genai
