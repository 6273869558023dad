#include "options/validate.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "options/option_table.h"
#include "options/quant_recipe_option.h"
#include "target/backend_type.h"
#include "target/qnn_soc_support.h"
#include "target/soc.h"

namespace genai::options {
namespace {

void require_positive(const OptionValues& v, const char* name) {
  if (auto x = v.get_optional_int(name); x && *x <= 0) throw_input_error("--{} must be positive, got {}", name, *x);
}

}  // namespace

int64_t effective_max_context_len(const OptionValues& values) {
  if (auto cl = values.get_optional_int("max_context_len")) return *cl;
  return values.get_int("max_seq_len");
}

int64_t effective_num_sharding(const OptionValues& values) {
  if (auto n = values.get_optional_int("num_sharding")) return *n;
  if (auto model = values.get_optional_string("decoder_model")) return upstream_num_sharding(*model);
  return 1;
}

std::string effective_lowering(const OptionValues& values, bool quantized_program) {
  return effective_lowering(values.get_optional_string("lowering"), values.get_string("backend"),
                            values.get_flag("enable_x86_64"), quantized_program);
}

std::string effective_lowering(const std::optional<std::string>& lowering, const std::string& backend, bool x86_64,
                               bool quantized_program) {
  if (lowering) return *lowering;
  const bool device = backend == "htp" && !x86_64;
  return device && quantized_program ? "qnn" : "genai";
}

std::string effective_lowering(const OptionValues& values) {
  return effective_lowering(values, !values.get_flag("use_fp16") && values.get_optional_string("quant_recipe") != "fp16");
}

std::optional<std::string> tokenizer_file_option(const OptionValues& values) {
  for (const char* name : {"tokenizer", "tokenizer_model", "tokenizer_bin"})
    if (auto file = values.get_optional_string(name)) return file;
  return std::nullopt;
}

int64_t lookahead_ar_len(int64_t window, int64_t gcap, int64_t ngram) {
  const int64_t n = (window + gcap) * (ngram - 1);
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

std::optional<std::pair<int64_t, int64_t>> attention_sink_values(const OptionValues& values) {
  const auto text = values.get_optional_string("use_attention_sink");
  if (!text) return std::nullopt;
  const size_t comma = text->find(',');
  return std::pair<int64_t, int64_t>{std::stoll(text->substr(0, comma)), std::stoll(text->substr(comma + 1))};
}

std::optional<std::pair<int64_t, int64_t>> attention_sink_from_text(const std::string& text, OptionScope scope) {
  OptionValues values(scope);
  values.set_from_text("use_attention_sink", {text}, OptionSource::kConfigFile);
  return attention_sink_values(values);
}

void validate(const OptionValues& v) {
  // Names that must resolve to a table entry (already checked when set; config/programmatic paths
  // go through the same checks, this keeps validate() self-contained).
  if (auto soc = v.get_optional_string("soc_model")) target::resolve_soc_model(*soc);
  target::resolve_backend_type(v.get_string("backend"));
  if (v.get_optional_string("lowering") == "qnn" && v.get_string("backend") != "htp") {
    throw_input_error("--lowering qnn builds QNN HTP context binaries: it needs --backend htp, got --backend {}",
                      v.get_string("backend"));
  }
  // Before any work: a SoC QNN's compiler builds for another arch would fail only after quantizing.
  const bool compiles = v.scope() != kRunScope && !v.has_value("pre_gen_pte");
  if (auto soc = v.get_optional_string("soc_model"); soc && compiles && effective_lowering(v) == "qnn") {
    const auto& info = target::resolve_soc(*soc);
    if (auto why = target::qnn_lowering_refusal(info)) {
      const auto& near = target::nearest_qnn_lowering_soc(info);
      throw_input_error("--soc_model {} cannot be built with --lowering qnn{}: {}. The nearest SoC it builds is {} (HTP "
                        "{}, VTCM {} MB); or use --lowering genai for {}",
                        info.name, v.has_value("lowering") ? "" : " (the default for a quantized phone build)", *why,
                        near.name, target::htp_arch_name(near.htp_arch), near.vtcm_mb, info.name);
    }
  }

  if (v.get_flag("compile_only") && v.has_value("pre_gen_pte")) {
    throw_input_error("--compile_only and --pre_gen_pte cannot be used together: nothing would be compiled or run");
  }
  if (int(v.has_value("tokenizer")) + int(v.has_value("tokenizer_model")) + int(v.has_value("tokenizer_bin")) > 1)
    throw_input_error("--tokenizer, --tokenizer_model and --tokenizer_bin exclude each other (each names the tokenizer file)");
  if (v.has_value("pte") && v.has_value("pre_gen_pte"))
    throw_input_error("--pte FILE and --pre_gen_pte DIR exclude each other: give one program file or one artifact dir");
  if (v.get_flag("compile_only") && v.has_value("pte"))
    throw_input_error("--compile_only and --pte cannot be used together: --pte runs a compiled program");

  for (const char* name : {"max_seq_len", "prefill_ar_len", "max_context_len", "batch_size", "max_new_tokens"}) {
    require_positive(v, name);
  }
  if (v.get_int("threads") < 0) throw_input_error("--threads must be >= 0 (0 = all cores), got {}", v.get_int("threads"));
  if (v.get_float("temperature") < 0) throw_input_error("--temperature must be >= 0, got {}", v.get_float("temperature"));
  if (const double p = v.get_float("top_p"); !(p > 0.0 && p <= 1.0)) {
    throw_input_error("--top_p must be in (0, 1], got {}", p);
  }

  const int64_t max_seq_len = v.get_int("max_seq_len");
  const int64_t max_context_len = effective_max_context_len(v);
  const std::string& mode = v.get_string("model_mode");
  // The runner (genai run) clamps seq_len to the context as upstream's C++ runner does, so the
  // export-time rule binds only when the user set both lengths explicitly there.
  const bool runner_clamps = v.scope() == kRunScope && !v.was_set("max_seq_len");
  if (!v.has_value("use_attention_sink") && max_context_len < max_seq_len && !runner_clamps) {
    throw_input_error("--max_context_len ({}) must be >= --max_seq_len ({}) unless --use_attention_sink is set",
                      max_context_len, max_seq_len);
  }
  if ((mode == "hybrid" || mode == "lookahead") && max_context_len < v.get_int("prefill_ar_len")) {
    throw_input_error("--model_mode {} needs --max_context_len ({}) >= --prefill_ar_len ({})", mode, max_context_len,
                      v.get_int("prefill_ar_len"));
  }
  if (mode == "lookahead") {
    const int64_t window = v.get_int("window"), gcap = v.get_int("gcap"), ngram = v.get_int("ngram");
    if (window < 1 || gcap < 1 || ngram < 2) {
      throw_input_error("--model_mode lookahead needs --window >= 1, --gcap >= 1 and --ngram >= 2 (got {}, {}, {})",
                        window, gcap, ngram);
    }
    const int64_t ar = lookahead_ar_len(window, gcap, ngram);
    if (max_context_len <= ar) {
      throw_input_error(
          "--model_mode lookahead needs --max_context_len ({}) > next_pow2((--window + --gcap) * (--ngram - 1)) = {}",
          max_context_len, ar);
    }
  }
  // Prebuilt programs fix the shapes: the scheduler checks the sink against theirs.
  const bool programs_given = v.has_value("pre_gen_pte") || v.has_value("pte") ||
                              (v.scope() == kRunScope && v.was_set("artifact"));
  if (const auto sink = attention_sink_values(v); sink && !programs_given) {
    // Upstream's evictor rules (AttentionSinkEvictor): SINK + EVICTION within the context, one
    // eviction frees a whole call of each graph; ours: SINK and a call fit after evicting.
    const auto [size, eviction] = *sink;
    const std::string given = fmt::format("--use_attention_sink {},{}", size, eviction);
    if (size + eviction > max_context_len)
      throw_input_error("{}: SINK + EVICTION must be <= --max_context_len ({})", given, max_context_len);
    std::vector<std::pair<std::string, int64_t>> ars = {{"kv_forward", 1}};
    if (mode == "lookahead")
      ars[0] = {"kv_forward (--model_mode lookahead: next_pow2((--window + --gcap) * (--ngram - 1)))",
                lookahead_ar_len(v.get_int("window"), v.get_int("gcap"), v.get_int("ngram"))};
    if (mode != "kv") ars.emplace_back("--prefill_ar_len", v.get_int("prefill_ar_len"));
    for (const auto& [what, ar] : ars) {
      if (eviction < ar) throw_input_error("{}: EVICTION must be >= the AR length of {} ({})", given, what, ar);
      if (size + 2 * ar > max_context_len)
        throw_input_error("{}: SINK + 2 x the AR length of {} ({}) must be <= --max_context_len ({})", given, what, ar,
                          max_context_len);
    }
  }
  if (mode == "hybrid" && v.get_flag("online_prepare")) {
    throw_input_error("--model_mode hybrid cannot be used with --online_prepare; use --model_mode kv");
  }
  if (v.get_flag("qat") && !v.has_value("train_tasks") && !v.has_value("train_hf_dataset")) {
    throw_input_error("--qat needs --train_tasks or --train_hf_dataset");
  }
  if (auto model = v.get_optional_string("decoder_model"); model && *model == "gemma4-e2b" && !v.has_value("embedding_quantize")) {
    throw_input_error("--decoder_model gemma4-e2b needs --embedding_quantize (-E)");
  }
  resolve_quant_recipe(v);
  if (v.get_flag("use_fp16") && v.has_value("quant_recipe") && v.get_string("quant_recipe") != "fp16") {
    throw_input_error("--use_fp16 skips quantization; it conflicts with --quant_recipe {}", v.get_string("quant_recipe"));
  }
}

}  // namespace genai::options
