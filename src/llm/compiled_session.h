// The decoder session over compiled programs (the text_decoder .pte of an artifact dir) on the
// host runtime: the DecoderScheduler over a ProgramMethodRunner. The smart-mask KV cache holds
// the codes the program exchanges (uint8/uint16 as compiled; float for fp16 programs); logits
// are dequantized with get_logits_scale / get_logits_zero_point.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llm/decoder_scheduler.h"
#include "llm/program_method_runner.h"
#include "runtime/artifact_dir.h"

namespace genai {

struct CompiledSessionInfo {
  double load_ms = 0.0;
  int64_t max_context_len = 0;
  int64_t prefill_ar_len = 0;  // 0 in kv mode
  std::string kv_io_dtype;     // "uint8", "uint16", "float32"
  int64_t max_seq_len = 0;     // get_max_seq_len (0 when the program has none)
  std::vector<std::string> delegate_ids;  // the program's delegates, sorted, e.g. {"QnnBackend"}
};

// The scheduler over one loaded program; InputError naming the program when its constants and
// signatures disagree.
std::unique_ptr<DecoderScheduler> make_program_session(std::unique_ptr<runtime::ProgramInstance> program);

// InputError for a dir without text_decoder, or a program whose constants/signatures disagree.
std::unique_ptr<DecoderSession> make_compiled_session(const runtime::ArtifactDir& artifacts,
                                                      CompiledSessionInfo* info = nullptr);

}  // namespace genai
