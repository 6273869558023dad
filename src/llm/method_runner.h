// What the decoder scheduler needs from whatever executes a decoder's methods (kv_forward,
// prefill_forward, tok_embedding_*): their signatures, and "run method M on these buffers". The
// float interpreter and the QDQ reference (graph_method_runner.h) and compiled programs on the
// host runtime (program_method_runner.h) implement it; another executor is one more adapter, and
// the scheduling itself (decoder_scheduler.h) exists once.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend_executor.h"

namespace genai {

class MethodRunner {
 public:
  virtual ~MethodRunner() = default;

  // What error messages name: the program file, or where the graphs came from.
  virtual std::string origin() const = 0;
  // What sets the context length, for the "exceeds the context" error: an option or a constant.
  virtual std::string context_source() const = 0;

  virtual std::vector<std::string> method_names() const = 0;
  virtual bool has_method(std::string_view method) const = 0;
  // Signatures (name, dtype, shape) in order; InputError naming the valid methods when absent.
  virtual const std::vector<runtime::IoDesc>& inputs(std::string_view method) const = 0;
  virtual const std::vector<runtime::IoDesc>& outputs(std::string_view method) const = 0;
  // Runs `method`; buffers in signature order, each exactly numel * dtype size bytes. The caller
  // binds its buffers once and reuses them, so an adapter may use them in place.
  virtual void run(std::string_view method, std::span<const runtime::BufferRef> inputs,
                   std::span<const runtime::BufferRef> outputs) = 0;

  // Constant methods (get_max_context_len, get_logits_scale ...): nullopt when there are none.
  virtual std::optional<int64_t> constant_int(std::string_view /*name*/) const { return std::nullopt; }
  virtual std::optional<double> constant_double(std::string_view /*name*/) const { return std::nullopt; }
  // A list constant's numbers (get_kv_output_0_quant_attr, get_rope_inv_freq_0 ...), its strings
  // left out: nullopt when there is no such method.
  virtual std::optional<std::vector<double>> constant_numbers(std::string_view /*name*/) const { return std::nullopt; }
};

}  // namespace genai
