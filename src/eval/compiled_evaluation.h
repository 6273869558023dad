// The quantized side of `genai eval` run as a compiled program: the quantization stage's bundles
// lowered by our HTP backend for the host, written to a private temporary directory, loaded by
// the runtime and run once per window through prefill_forward; or a text decoder program that is
// already on disk (the pipeline's check runs the program it deploys). The program equals the QDQ
// reference (the parity tests hold it to that), and runs 20-30 times faster, so a 20,000-token
// evaluation text takes seconds where the QDQ reference takes minutes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "eval/quant_evaluation.h"
#include "pipeline/graph_bundle.h"

namespace genai {
struct Model;
class DecoderScheduler;
}  // namespace genai

namespace genai::eval {

// The graph shape the program needs for windows of `window` tokens: prefill_forward of AR =
// window over a context of window + 1 (one prefill call per window, from position 0).
struct EvalProgramShape {
  int64_t prefill_ar_len = 0;
  int64_t max_context_len = 0;
};
EvalProgramShape eval_program_shape(int64_t window);

class CompiledWindows {
 public:
  // `bundles`: the quantized decoder graphs, e.g. of eval_program_shape(window) (`genai eval`:
  // one prefill call per window, exactly the QDQ reference's full-autoregressive window) or the
  // pipeline's own shape (a window longer than the prefill AR runs as consecutive prefill calls
  // over the cache, as the deployed program runs a long prompt).
  // `adapter`: run that LoRA adapter's methods (its graphs among the bundles), not the base's.
  CompiledWindows(const Model& model, const pipeline::GraphBundles& bundles, const std::string& adapter = "");
  // `text_decoder`: a text decoder program of our lowering (any SoC: the program runs on the host
  // either way). The file must outlive this object.
  explicit CompiledWindows(const std::filesystem::path& text_decoder);
  ~CompiledWindows();
  CompiledWindows(const CompiledWindows&) = delete;
  CompiledWindows& operator=(const CompiledWindows&) = delete;

  // Logits of a window (at most the program's context), teacher-forced from position 0. Valid
  // while this object lives.
  WindowLogits window_logits();
  // The longest window the program takes: its context, less a lookahead kv_forward's tree
  // (DecoderScheduler::max_context).
  int64_t max_window() const;

 private:
  std::filesystem::path dir_;  // the private program's directory; empty for a given program
  std::unique_ptr<DecoderScheduler> session_;
};

}  // namespace genai::eval
