// Upstream's cross-option rules (llama.py export_llama), as InputErrors naming the options.
//
// Deliberate difference: upstream also requires calibration data (--calib_tasks, --calib_samples
// or --calib_hf_dataset) when compiling. Natively, calibration falls back to a built-in English
// text (quant/calibration_text.h), so that rule is not enforced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "options/option_values.h"

namespace genai::options {

// Throws InputError on the first violated rule.
void validate(const OptionValues& values);

// --max_context_len, defaulting to --max_seq_len as upstream does.
int64_t effective_max_context_len(const OptionValues& values);

// --num_sharding, defaulting to --decoder_model's upstream count (phi_4_mini 8, ...), else 1.
int64_t effective_num_sharding(const OptionValues& values);

// --lowering, or its default: a quantized htp program compiled without --enable_x86_64 is for a
// phone, so it gets QNN context binaries (what a stock ExecuTorch runtime loads); x86 builds,
// float programs and other backends get our payload.
std::string effective_lowering(const OptionValues& values, bool quantized_program);
// The same before compilation knows the graphs: quantized unless --use_fp16 or --quant_recipe fp16.
std::string effective_lowering(const OptionValues& values);
// The same from the values it reads: --lowering, --backend, --enable_x86_64.
std::string effective_lowering(const std::optional<std::string>& lowering, const std::string& backend, bool x86_64,
                               bool quantized_program);

// The tokenizer file the options name: --tokenizer, --tokenizer_model or --tokenizer_bin (at most
// one: validate() rejects more), or nullopt.
std::optional<std::string> tokenizer_file_option(const OptionValues& values);

// --use_attention_sink SINK,EVICTION as numbers (the option table checked the form), or nullopt.
std::optional<std::pair<int64_t, int64_t>> attention_sink_values(const OptionValues& values);
// A --use_attention_sink text read from elsewhere (a manifest's "options"), through the option
// table's checks as a config file value of `scope` would be (InputError naming the option).
std::optional<std::pair<int64_t, int64_t>> attention_sink_from_text(const std::string& text, OptionScope scope);

// Decode-graph AR length of lookahead decoding: next_pow2((window + gcap) * (ngram - 1)).
int64_t lookahead_ar_len(int64_t window, int64_t gcap, int64_t ngram);

}  // namespace genai::options
