#include "options/option_table.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "model/lora_adapter.h"
#include "options/quant_recipe_option.h"
#include "target/soc.h"

namespace genai::options {
namespace {

constexpr unsigned P = kPipelineScope, C = kCompileScope, R = kRunScope, E = kEvalScope;
constexpr unsigned ALL = P | C | R;

using Strings = std::vector<std::string>;

// Checks of formatted values; each names its option.
void check_soc(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) target::resolve_soc_model(*s);
}
void check_quant_recipe(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) parse_quant_recipe(*s);
}
// "a,b" with two positive integers (--use_attention_sink sink,evict; -E bits,group).
bool two_positive_ints(const std::string& s) {
  auto comma = s.find(',');
  if (comma == std::string::npos || s.find(',', comma + 1) != std::string::npos) return false;
  auto positive = [](const std::string& t) {
    return !t.empty() && t.size() < 10 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
           std::stol(t) > 0;
  };
  return positive(s.substr(0, comma)) && positive(s.substr(comma + 1));
}
void check_attention_sink(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v); s && !two_positive_ints(*s)) {
    throw_input_error("--use_attention_sink '{}' must be 'sink_size,eviction_batch_size' (two positive integers)", *s);
  }
}
void check_rotation(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v); s && *s != "none" && *s != "hadamard")
    throw_input_error("--rotation '{}' is not a valid choice; valid choices: none, hadamard", *s);
}
// Each item NAME=VALUE with NAME an adapter's name (letters, digits and '_': it names methods).
void check_adapter_pairs(const OptionValue& v, std::string_view option, std::string_view expected) {
  const auto* list = std::get_if<std::vector<std::string>>(&v);
  if (!list) return;
  for (const std::string& s : *list) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw_input_error("{} '{}': expected {}", option, s, expected);
    check_lora_adapter_name(std::string_view(s).substr(0, eq), option);
  }
}
void check_lora_adapter(const OptionValue& v) { check_adapter_pairs(v, "--lora_adapter", "NAME=DIR (a PEFT adapter folder)"); }
void check_lora_calib_samples(const OptionValue& v) {
  check_adapter_pairs(v, "--lora_calib_samples", "NAME=FILE (an adapter's calibration text)");
}
void check_lora(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) check_lora_adapter_name(*s, "--lora");
}
void check_num_sharding(const OptionValue& v) {
  if (const auto* n = std::get_if<int64_t>(&v); n && *n < 1)
    throw_input_error("--num_sharding {}: must be at least 1 (1: one delegate per method)", *n);
}

void check_embedding_quantize(const OptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    const auto comma = s->find(',');
    const bool ok = comma != std::string::npos && (two_positive_ints(*s) || s->substr(comma + 1) == "0");
    if (!ok) throw_input_error("--embedding_quantize (-E) '{}' must be 'bits,group_size' (e.g. 4,32; group 0: per row)", *s);
  }
}

const Strings kDecoderModels = {
    "stories260k",      "stories110m",  "llama3_2-1b_instruct",   "llama3_2-3b_instruct", "codegen2_1b",
    "gemma-2b",         "gemma2-2b",    "gemma3-1b",              "granite_3_3-2b_instruct",
    "granite_speech_3_3-2b",            "phi_4_mini",             "qwen2_5-0_5b",         "qwen2_5-1_5b",
    "qwen3-0_6b",       "qwen3-1_7b",   "smollm2_135m",           "smollm3-3b",           "glm-1_5b",
    "smolvlm_500m_instruct",            "internvl3_1b",           "gemma4-e2b"};

// Upstream's layer-shard count of each --decoder_model that has more than one (its model configs'
// num_sharding: a few layers per HTP context keeps each under the per-context size limit).
struct UpstreamShards {
  std::string_view model;
  int64_t num_sharding;
};
constexpr UpstreamShards kUpstreamShards[] = {
    {"llama3_2-3b_instruct", 4}, {"gemma-2b", 4},   {"gemma2-2b", 4},  {"granite_speech_3_3-2b", 4},
    {"phi_4_mini", 8},           {"smollm3-3b", 4}, {"gemma4-e2b", 4}};

OptionSpec opt(std::string name, OptionType type, OptionValue def, std::string help, unsigned scopes) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = type;
  s.default_value = std::move(def);
  s.help = std::move(help);
  s.scopes = scopes;
  return s;
}
OptionSpec&& ignored(OptionSpec&& s, std::string why) {
  s.native = false;
  s.native_note = std::move(why);
  return std::move(s);
}
OptionSpec&& note(OptionSpec&& s, std::string meaning) {
  s.native_note = std::move(meaning);
  return std::move(s);
}
OptionSpec&& choices(OptionSpec&& s, Strings c) {
  s.choices = std::move(c);
  return std::move(s);
}
OptionSpec&& alias(OptionSpec&& s, std::string short_alias, std::string upstream_spelling = "") {
  s.short_alias = std::move(short_alias);
  s.upstream_spelling = std::move(upstream_spelling);
  return std::move(s);
}
OptionSpec&& ours(OptionSpec&& s) {
  s.upstream = false;
  return std::move(s);
}
OptionSpec&& checked(OptionSpec&& s, void (*check)(const OptionValue&)) {
  s.check = check;
  return std::move(s);
}

const OptionValue None{};
using T = OptionType;

OptionSpec& named(std::vector<OptionSpec>& t, std::string_view name) {
  for (auto& s : t)
    if (s.name == name) return s;
  throw_failure("internal: no option '{}' in the table", name);
}

// `genai eval` (orchestrator/recipe_evaluation.h): the quantization options of the pipeline, with
// a default or help of its own where it reads them otherwise, and its evaluation's own options.
void add_eval_options(std::vector<OptionSpec>& t) {
  for (std::string_view name : {"checkpoint", "tokenizer_model", "quant_recipe", "quant_override", "seq_mse_candidates",
                                "quant_recipe_file", "rotation", "embedding_quantize", "gptq", "use_fp16", "eval_text",
                                "eval_methods", "max_context_len", "calib_samples", "artifact", "threads", "json",
                                "verbose"})
    named(t, name).scopes |= E;
  auto own = [&](std::string_view name, std::optional<OptionValue> def, std::string help, Strings only = {}) {
    named(t, name).scoped.push_back({kEvalScope, std::move(def), std::move(help), std::move(only)});
  };
  own("max_context_len", int64_t{256}, "Evaluation window and decode graph context");
  own("eval_methods", Strings{"sqnr_eval", "prompt_eval"}, "sqnr_eval and/or prompt_eval",
      {"sqnr_eval", "prompt_eval"});
  own("eval_text", std::nullopt,
      "Text file to evaluate on (default: Newton's Opticks from Debian's golang-1.19-src, public domain)");
  own("artifact", None, "Write decode_qdq.json/.bin into this directory");
  own("embedding_quantize", std::nullopt,
      "The embedding table at 'bits,group' (bits 4 or 8; group 0: per row), e.g. 4,32");
  own("calib_samples", std::nullopt,
      "Calibration text: JSON lists of strings or plain text files (default: a built-in English text)");
  // The calibration windows, which the pipeline's quantization reads too (pipeline::CalibrationSettings).
  t.push_back(ours(note(opt("calib_len", T::kInt, int64_t{128}, "Tokens per calibration window", P | C | E),
                        "calibration window length (at most the context length)")));
  t.push_back(ours(note(opt("calib_max_windows", T::kInt, int64_t{4}, "Most calibration windows", P | C | E),
                        "calibration windows")));
  t.push_back(ours(note(choices(opt("calib_range", T::kChoice, std::string("minmax"), "Activation range setting", P | C | E),
                                {"minmax", "mse"}),
                        "activation range method")));
  // Only `genai eval` reads these.
  t.push_back(ours(note(opt("eval_max_tokens", T::kInt, int64_t{20480},
                            "Tokens of the text evaluated, in whole windows of --max_context_len (0: all)", E),
                        "genai eval: evaluation length")));
  t.push_back(ours(note(choices(opt("eval_on", T::kChoice, std::string("program"),
                                    "What computes the quantized logits: program (a compiled program, equal to the QDQ "
                                    "reference and fast) or qdq (the QDQ reference)",
                                    E),
                                {"program", "qdq"}),
                        "genai eval: quantized side")));
  t.push_back(ours(note(opt("gen_tokens", T::kInt, int64_t{32}, "Tokens generated for the greedy agreement", E),
                        "genai eval: greedy agreement length")));
  t.push_back(ours(note(opt("qdq", T::kString, None, "Read encodings from a decode_qdq.json instead of quantizing", E),
                        "genai eval: encodings of an earlier quantization")));
  t.push_back(ours(note(opt("per_layer", T::kFlag, false,
                            "Layer sensitivity: quantize one layer's weights at a time, rank the layers by the logits "
                            "SQNR they cost and propose --quant_override entries for the worst",
                            E),
                        "genai eval: layer sensitivity analysis")));
  t.push_back(ours(note(opt("report", T::kString, None,
                            "Write a self-contained HTML report (charts as inline SVG) to this file", E),
                        "genai eval: HTML report")));
}

std::vector<OptionSpec> make_table() {
  std::vector<OptionSpec> t;
  // ---- export_utils.setup_common_args_and_variables (23) ----
  t.push_back(note(opt("config_file", T::kString, None, "JSON file of option values (keys = option names); command-line values override it", ALL),
                   "read natively"));
  t.push_back(checked(note(opt("soc_model", T::kString, None, "Target SoC, e.g. SM8650 (see `genai targets`)", ALL),
                           "selects chipset, HTP arch and VTCM of the compile spec"),
                      check_soc));
  t.push_back(ignored(opt("build_folder", T::kString, None, "CMake build folder of the ExecuTorch runner", C | R),
                      "no CMake runner build: the runtime is built into genai"));
  t.push_back(note(opt("host", T::kString, None, "adb host", R), "adb -H of the device runner (genai run -a --device)"));
  // Upstream sets the shard count per model (its model configs' num_sharding); here it is an option
  // whose default is that count (effective_num_sharding).
  t.push_back(ours(checked(note(opt("num_sharding", T::kInt, None,
                                    "Split the decoder's layers into N parts, one delegate (QNN context) each in every method "
                                    "(default: --decoder_model's upstream count, else 1)",
                                    P | C),
                                "layer shards of the text decoder; above 1 the compile spec says use_multi_contexts"),
                           check_num_sharding)));
  t.push_back(note(opt("online_prepare", T::kFlag, false, "Compose the QNN graph on device (DLC) instead of a context binary", P | C),
                   "online_prepare field of the compile spec"));
  t.push_back(ignored(opt("ip", T::kString, std::string(), "IPC result channel host", R), "no IPC result channel"));
  t.push_back(ignored(opt("port", T::kInt, int64_t{-1}, "IPC result channel port", R), "no IPC result channel"));
  t.push_back(ignored(opt("skip_delegate_node_ids", T::kString, None, "Comma list of node ids kept off the delegate", P | C),
                      "graphs are delegated whole"));
  t.push_back(ignored(opt("skip_delegate_node_ops", T::kString, None, "Comma list of ops kept off the delegate (e.g. aten.add.Tensor)", P | C),
                      "graphs are delegated whole"));
  t.push_back(note(opt("compile_only", T::kFlag, false, "Stop after writing the .pte files", P | C), "skip the inference stage"));
  t.push_back(note(opt("device", T::kString, None, "adb device serial", R), "runs the artifact dir on this phone via adb"));
  t.push_back(note(choices(opt("backend", T::kChoice, std::string("htp"), "QNN backend", ALL), {"htp", "gpu", "lpai"}),
                   "backend_type of the compile spec"));
  t.push_back(note(opt("shared_buffer", T::kFlag, false, "Zero-copy shared (RPC) buffers for graph I/O", ALL),
                   "shared_buffer of the compile spec; always off under x86 emulation"));
  t.push_back(note(opt("skip_push", T::kFlag, false, "Do not push files to the device", R), "device runner: reuse the pushed workspace"));
  t.push_back(note(opt("dump_intermediate_outputs", T::kFlag, false, "Dump intermediate outputs of the delegate", P | C | R),
                   "dump_intermediate_outputs of the compile spec"));
  t.push_back(note(choices(opt("profile_level", T::kInt, int64_t{0}, "QNN profiling: 0 off, 2 detailed, 3 optrace", P | C | R), {"0", "2", "3"}),
                   "profile_level of the compile spec"));
  t.push_back(note(opt("enable_x86_64", T::kFlag, false, "Target the x86 emulator", ALL),
                   "x86 emulation: weight sharing and shared buffers off"));
  t.push_back(ignored(opt("ci", T::kFlag, false, "CI mode: random inputs", P | R), "no CI random-input mode"));
  t.push_back(note(opt("seed", T::kInt, None, "Random seed", ALL), "seeds sampling and calibration-text generation"));
  t.push_back(ignored(choices(opt("target", T::kChoice, std::string("aarch64-android"), "Cross-compile toolchain of the runner", C | R),
                              {"aarch64-android", "aarch64-oe-linux-gcc9.3", "aarch64-oe-linux-gcc11.2"}),
                      "no runner cross-compilation"));
  t.push_back(note(opt("pre_gen_pte", T::kString, None, "Folder of prebuilt .pte files: inference only", P | R),
                   "load these .pte files instead of compiling"));
  t.push_back(ignored(opt("direct_build_folder", T::kString, None, "Direct-mode (fastrpc) runner build folder", C | R),
                      "no direct-mode runner"));
  t.push_back(note(choices(opt("htp_performance_mode", T::kInt, int64_t{2}, "HTP performance vote 0..8 (2 = burst)", ALL),
                           {"0", "1", "2", "3", "4", "5", "6", "7", "8"}),
                   "performance_mode of the HTP compile spec"));
  // ---- llama.py (44) ----
  t.push_back(note(alias(opt("artifact", T::kString, std::string("./llama_qnn"), "Output folder of the artifacts", ALL), "a"),
                   "folder of .pte files, manifest and outputs"));
  t.push_back(note(choices(opt("decoder_model", T::kChoice, None, "Upstream model name (selects recipe and chat template)", ALL), kDecoderModels),
                   "optional natively: the checkpoint identifies the architecture"));
  t.push_back(note(opt("checkpoint", T::kString, None, "Checkpoint: GGUF file, Hugging Face folder or llama2.c .bin", ALL),
                   "GGUF / HF folder / llama2.c"));
  t.push_back(ignored(opt("params", T::kString, None, "params.json of a Meta-format checkpoint", P | C),
                      "checkpoints carry their own hyper-parameters"));
  t.push_back(note(opt("tokenizer_bin", T::kString, None, "llama2.c tokenizer .bin", ALL), "llama2.c tokenizer"));
  t.push_back(note(opt("tokenizer_model", T::kString, None, "Tokenizer file (tokenizer.model / tokenizer.json)", ALL),
                   "overrides the checkpoint's tokenizer"));
  t.push_back(note(opt("prompt", T::kStringList, None, "Prompt(s); several = multi-turn", P | R), "runtime prompts"));
  t.push_back(note(opt("system_prompt", T::kString, std::string(), "System prompt", P | R), "chat template system turn"));
  t.push_back(note(opt("temperature", T::kFloat, 0.8, "Sampling temperature (0 = greedy)", P | R), "sampling"));
  t.push_back(note(alias(choices(opt("dtype_override", T::kChoice, std::string("fp32"), "Float dtype of the source model", P | C), {"fp32", "fp16"}),
                         "d", "dtype-override"),
                   "float reference dtype"));
  t.push_back(note(choices(opt("model_mode", T::kChoice, std::string("hybrid"), "kv (AR-1 only), hybrid (AR-N prefill + AR-1) or lookahead", ALL),
                           {"kv", "hybrid", "lookahead"}),
                   "graphs built"));
  t.push_back(note(opt("max_context_len", T::kInt, None, "Context length CL (default: max_seq_len)", ALL), "KV cache length"));
  t.push_back(note(opt("max_seq_len", T::kInt, int64_t{512}, "Maximum tokens (prompt + generated)", ALL), "generation limit"));
  t.push_back(note(opt("prefill_ar_len", T::kInt, int64_t{32}, "AR length of the prefill graph", ALL), "prefill graph width"));
  t.push_back(checked(note(alias(opt("embedding_quantize", T::kString, None, "'bits,group': CPU embedding fallback (int64 tokens)", P | C), "E",
                                 "embedding-quantize"),
                           "the embedding table at bits 4 or 8 per group (0: per row), in the delegated graph"),
                      check_embedding_quantize));
  t.push_back(note(opt("ngram", T::kInt, int64_t{5}, "Lookahead n-gram size", ALL), "lookahead decoding"));
  t.push_back(note(opt("window", T::kInt, int64_t{8}, "Lookahead window", ALL), "lookahead decoding"));
  t.push_back(note(opt("gcap", T::kInt, int64_t{8}, "Lookahead guess capacity", ALL), "lookahead decoding"));
  t.push_back(checked(note(opt("use_attention_sink", T::kString, None, "'sink_size,eviction_batch_size'", ALL),
                           "attention-sink eviction"),
                      check_attention_sink));
  t.push_back(note(opt("audio_path", T::kStringList, Strings{}, "Audio inputs of a speech model", P | R),
                   "WAV files (mono, at the model's rate) for a speech model (Granite Speech): each turned into the "
                   "feature extractor's log-mel rows, encoded by the audio encoder, and placed ahead of the first prompt"));
  t.push_back(note(opt("image_path", T::kStringList, Strings{}, "Image inputs of a vision model", P | R),
                   "PNG or JPEG files for a vision-language model (SmolVLM, InternVL3): each split into tiles as its image "
                   "processor does, encoded by the vision encoder, and placed ahead of the first prompt"));
  t.push_back(note(choices(opt("eval_methods", T::kStringList, Strings{"prompt_eval"}, "Evaluations to run", P | R),
                           {"prompt_eval", "tasks_eval", "sqnr_eval"}),
                   "prompt_eval: the generation; tasks_eval: perplexity of float, QDQ and program over local "
                   "texts; sqnr_eval: logits SQNR of the prompt tokens against float"));
  t.push_back(note(opt("eval_tasks", T::kStringList, None,
                       "tasks_eval texts: text files or built-in names (opticks: Newton's Opticks, installed by "
                       "scripts/install_deps.sh; the default)",
                       P | R),
                   "tasks_eval texts: files or built-in names (opticks, the default: Newton's Opticks); local, not "
                   "lm-eval tasks from the hub"));
  t.push_back(note(opt("eval_limit", T::kInt, int64_t{1},
                       "tasks_eval: windows per task, each as long as the programs' context (--max_context_len)", P | R),
                   "tasks_eval windows per task, each as long as the programs' context (upstream: documents)"));
  t.push_back(ignored(opt("eval_num_fewshot", T::kInt, None, "lm-eval few-shot count", P | R), "no lm-eval harness"));
  t.push_back(ignored(opt("calib_tasks", T::kStringList, None, "lm-eval calibration tasks", P | C), "no lm-eval harness"));
  t.push_back(ignored(opt("calib_limit", T::kInt, int64_t{1}, "lm-eval calibration limit", P | C), "no lm-eval harness"));
  t.push_back(ignored(opt("calib_num_fewshot", T::kInt, None, "lm-eval calibration few-shot count", P | C), "no lm-eval harness"));
  t.push_back(note(opt("calib_samples", T::kStringList, None, "JSON files of calibration samples", P | C), "calibration text"));
  t.push_back(ignored(opt("calib_hf_dataset", T::kString, None, "Hugging Face calibration dataset", P | C), "no dataset downloads"));
  t.push_back(ignored(opt("calib_hf_limit", T::kInt, int64_t{1}, "Hugging Face calibration sample limit", P | C), "no dataset downloads"));
  t.push_back(note(opt("batch_size", T::kInt, int64_t{1}, "Batch of the calibration graph", P | C), "calibration batch"));
  t.push_back(ignored(opt("qat", T::kFlag, false, "Quantization-aware training", P | C), "no training natively"));
  t.push_back(ignored(opt("train_config", T::kString, std::string("train/config/qad.yaml"), "QAT config", P | C), "no training natively"));
  t.push_back(ignored(opt("lr_config", T::kString, std::string("train/config/lr_config.yaml"), "QAT learning-rate config", P | C),
                      "no training natively"));
  t.push_back(ignored(opt("train_tasks", T::kStringList, None, "lm-eval training tasks", P | C), "no training natively"));
  t.push_back(ignored(opt("train_limit", T::kInt, int64_t{1}, "Training task limit", P | C), "no training natively"));
  t.push_back(ignored(opt("train_hf_dataset", T::kString, None, "Hugging Face training dataset", P | C), "no training natively"));
  t.push_back(ignored(opt("train_hf_limit", T::kInt, int64_t{1000}, "Hugging Face training sample limit", P | C), "no training natively"));
  t.push_back(ignored(opt("train_val_ratio", T::kFloat, 1.0, "Train/validation split", P | C), "no training natively"));
  t.push_back(note(alias(opt("use_fp16", T::kFlag, false, "fp16 model, no quantization", ALL), "F"), "HTP fp16 precision, PTQ skipped"));
  t.push_back(note(alias(opt("verbose", T::kFlag, false, "Verbose logging", ALL), "v"), "debug logging; QNN log level debug"));
  t.push_back(ignored(opt("freeze_all_params", T::kFlag, false, "QAT CI: freeze parameters", P | C), "no training natively"));
  t.push_back(ignored(opt("quant_recipe_suggestion", T::kFlag, false, "Suggest a quantization recipe", P | C), "no recipe search"));
  // ---- ours ----
  t.push_back(checked(ours(note(choices(opt("quant_recipe", T::kString, None,
                                             "Quantization recipe (default: the model's own); 16a4w_block:G sets the block size", ALL),
                                         quant_scheme_names()),
                                 "quantization recipe")),
                      check_quant_recipe));
  t.push_back(ours(note(choices(opt("quant_block_size", T::kInt, None, "Block size of 16a4w_block", ALL), quant_block_sizes()),
                        "block size")));
  t.push_back(ours(note(opt("quant_override", T::kStringList, None,
                            "Per-layer override REGEX=RECIPE on tensor names, e.g. 'lm_head\\.out=16a8w' (repeatable)", P | C),
                        "mixed precision")));
  t.push_back(ours(note(opt("quant_recipe_file", T::kString, None,
                            "Recipe file (JSON: recipe, overrides, seq_mse_candidates); command-line overrides come first", P | C),
                        "mixed precision")));
  t.push_back(ours(note(opt("seq_mse_candidates", T::kInt, int64_t{0},
                            "Weight range search: scale factors tried per channel/block against the output error (0: off)", P | C),
                        "weight range search")));
  t.push_back(ours(note(opt("gptq", T::kFlag, false,
                            "Quantize linear weights by GPTQ on the calibration inputs (error compensation across columns)", P | C),
                        "GPTQ weight rounding")));
  t.push_back(checked(ours(note(choices(opt("rotation", T::kString, std::string("none"),
                                            "Offline Hadamard rotation of the residual stream, merged into the weights", P | C),
                                        {"none", "hadamard"}),
                                "residual rotation")),
                      check_rotation));
  t.push_back(checked(ours(note(opt("lora_adapter", T::kStringList, None,
                                    "LoRA adapter NAME=DIR (a PEFT folder), kept beside the frozen weights as its own "
                                    "methods of the decoder program (repeatable; `genai eval` quantizes the one --lora names)",
                                    P | C | E),
                                "run-time LoRA adapters")),
                      check_lora_adapter));
  t.push_back(checked(ours(note(opt("lora_calib_samples", T::kStringList, None,
                                    "An adapter's own calibration text NAME=FILE (as --calib_samples; default: the "
                                    "base model's), repeatable",
                                    P | C | E),
                                "run-time LoRA adapters")),
                      check_lora_calib_samples));
  t.push_back(checked(ours(note(opt("lora", T::kString, None,
                                    "The LoRA adapter to run (a compiled one) or, in `genai eval`, to measure (one of "
                                    "--lora_adapter) (default: none, the base model)",
                                    P | R | E),
                                "run-time LoRA adapters")),
                      check_lora));
  t.push_back(ours(note(opt("json", T::kFlag, false, "Print one JSON object on stdout", ALL), "machine-readable output")));
  t.push_back(ours(note(opt("threads", T::kInt, int64_t{0}, "Worker threads (0 = all cores)", ALL), "thread pool size")));
  t.push_back(ours(note(opt("no_verify", T::kFlag, false,
                            "Skip checking compiled programs and the tokenizer against their recorded checksums at load", P | R),
                        "load-time verification")));
  t.push_back(ours(note(opt("top_p", T::kFloat, 0.9, "Nucleus sampling probability mass", P | R), "sampling")));
  t.push_back(ours(note(opt("max_new_tokens", T::kInt, None, "Stop after this many generated tokens (default: up to max_seq_len)", P | R),
                        "generation limit")));
  t.push_back(ours(note(opt("chat", T::kFlag, false,
                            "Interactive chat: read each prompt as a line from stdin (after any --prompt turns), stream "
                            "the answer, keep the KV cache between turns; end of input (Ctrl-D) ends it", R),
                        "interactive conversation")));
  t.push_back(ours(note(opt("eval_text", T::kString, None, "Text file for perplexity / SQNR evaluation", P | R), "evaluation text")));
  t.push_back(ours(note(choices(opt("skip_stages", T::kStringList, None,
                                    "Pipeline stages to skip (a skipped stage hands on an empty output)", P),
                                {"model_preparation", "quantization", "compilation", "inference"}),
                        "orchestrator stage selection")));
  t.push_back(ours(note(choices(opt("lowering", T::kChoice, None,
                                    "How htp graphs are lowered: genai = our payload (genai's runtime emulates the HTP's "
                                    "quantized arithmetic; no other runtime loads it), qnn = QNN HTP context binaries "
                                    "with graphs named after their methods: programs a stock ExecuTorch runtime "
                                    "(QnnBackend) loads, on a phone or, with --enable_x86_64, on the HTP simulator "
                                    "(needs onnxruntime-qnn). Default: qnn for a quantized --backend htp program "
                                    "without --enable_x86_64 (a phone program), genai otherwise", ALL),
                                {"genai", "qnn"}),
                        "payload kind; unset: qnn for a quantized htp phone build, genai otherwise")));
  t.push_back(ours(note(opt("scalar_kernels", T::kFlag, false, "Run the scalar kernels (the reference build) instead of the SIMD ones", P | C | R),
                        "kernel build")));
  t.push_back(ours(note(opt("backend_profile", T::kFlag, false, "Log per-step-kind milliseconds of compiled programs (htp/gpu payloads)", P | R),
                        "payload executor profile")));
  t.push_back(ours(note(opt("backend_fuse_kv", T::kFlag, false,
                            "Lower decode attention over 16-bit KV caches to read concat(cache, new) in place too (8-bit caches always are; exact)", P | C),
                        "KV-concat fusion of 16-bit caches at lowering")));
  t.push_back(ours(note(opt("pte", T::kString, None,
                            "A lone compiled .pte to run without its artifact dir or manifest (needs --tokenizer; excludes -a)", P | R),
                        "manifest-less run: configuration from the program's constant methods and signatures")));
  t.push_back(ours(note(opt("tokenizer", T::kString, None,
                            "Tokenizer file for the run: tokenizer.json, tokenizer.model or tokenizer.bin (upstream runner's "
                            "--tokenizer_path)", P | R),
                        "runtime tokenizer")));
  add_eval_options(t);
  for (auto& s : t) s.scopes |= P;  // `genai pipeline` shows every option
  return t;
}

std::string kebab(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

}  // namespace

std::string_view option_type_name(OptionType type) {
  switch (type) {
    case OptionType::kFlag: return "flag";
    case OptionType::kInt: return "int";
    case OptionType::kFloat: return "float";
    case OptionType::kString: return "string";
    case OptionType::kStringList: return "string-list";
    case OptionType::kChoice: return "choice";
  }
  return "?";
}

const OptionValue& default_for(const OptionSpec& spec, OptionScope scope) {
  for (const auto& m : spec.scoped)
    if (m.scope == scope && m.default_value) return *m.default_value;
  return spec.default_value;
}

const std::string& help_for(const OptionSpec& spec, OptionScope scope) {
  for (const auto& m : spec.scoped)
    if (m.scope == scope && !m.help.empty()) return m.help;
  return spec.help;
}

const std::vector<std::string>& choices_for(const OptionSpec& spec, OptionScope scope) {
  for (const auto& m : spec.scoped)
    if (m.scope == scope && !m.choices.empty()) return m.choices;
  return spec.choices;
}

std::span<const OptionSpec> option_table() {
  static const std::vector<OptionSpec> table = make_table();
  return table;
}

const OptionSpec* find_option(std::string_view name) {
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  for (const auto& s : option_table()) {
    if (s.name == name || kebab(s.name) == name || (!s.upstream_spelling.empty() && s.upstream_spelling == name)) return &s;
  }
  return nullptr;
}

std::span<const std::string> supported_decoder_models() { return kDecoderModels; }

int64_t upstream_num_sharding(std::string_view decoder_model) {
  for (const UpstreamShards& u : kUpstreamShards)
    if (u.model == decoder_model) return u.num_sharding;
  return 1;
}

}  // namespace genai::options
