// What each stage reads of the run's options, as typed fields (issue 39: "no stage reads an
// option by string key"). The orchestrator resolves the option set once into these
// (orchestrator/stage_settings.h: resolve_stage_settings) and hands each stage its own struct in
// its input config (stage_configs.h); the strategies turn them into the types of the layers above
// (graph::DecoderGraphOptions, quant::CalibrationOptions, ...: orchestrator/option_readers.h).
//
// The fields are plain values, as given or defaulted by the option table: no rule is checked
// here. Each check stays where the stage has always made it (so a bad value fails the same stage
// with the same message). Setting<T> keeps "given by the user" apart from the table's default
// where a stage decides by it (e.g. --max_seq_len given, else the programs' own bound).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "options/spec_from_options.h"

namespace genai::pipeline {

// A value and whether the user gave it (config file or command line) rather than the table.
template <typename T>
struct Setting {
  T value{};
  bool given = false;
};

// The decoder graphs' shape: --model_mode, the context lengths, the lookahead sizes.
struct GraphShapeSettings {
  Setting<std::string> model_mode{"hybrid"};  // kv | hybrid | lookahead
  Setting<int64_t> max_seq_len{512};
  std::optional<int64_t> max_context_len;  // --max_context_len; default: max_seq_len
  int64_t prefill_ar_len = 32;
  Setting<int64_t> ngram{5}, window{8}, gcap{8};
  // --max_context_len, defaulting to --max_seq_len as upstream does.
  int64_t effective_max_context_len() const { return max_context_len.value_or(max_seq_len.value); }
};

// The calibration text: --calib_len tokens per window (at most the context), --calib_max_windows,
// --calib_range, --calib_samples files (else the built-in text), --seed.
struct CalibrationSettings {
  int64_t calib_len = 128;
  int64_t max_windows = 4;
  std::string range_method = "minmax";
  std::vector<std::string> sample_files;
  std::optional<int64_t> seed;
  int64_t max_context_len = 512;  // the graphs' context: windows are no longer
};

// Each modality's files by its option name (--image_path, --audio_path); a modality whose option
// the table does not have gets none.
using MediaFiles = std::map<std::string, std::vector<std::string>, std::less<>>;

struct PreparationSettings {
  std::optional<std::string> checkpoint;     // --checkpoint
  std::optional<std::string> decoder_model;  // --decoder_model
  std::optional<std::string> tokenizer_file;  // --tokenizer / --tokenizer_model / --tokenizer_bin
  std::string rotation = "none";              // --rotation
  bool embedding_quantize = false;            // -E given: the token table is quantized on its own
  CalibrationSettings calibration;
  std::vector<std::string> lora_adapters;     // --lora_adapter NAME=DIR, as given
  std::vector<std::string> lora_calib_samples;  // --lora_calib_samples NAME=FILE, as given
};

struct QuantizationSettings {
  GraphShapeSettings graphs;
  CalibrationSettings calibration;
  std::optional<std::string> decoder_model;  // the model's own recipe when no --quant_recipe
  // --quant_recipe and --quant_block_size as given (options::resolve_quant_recipe checks them).
  std::optional<std::string> quant_recipe;
  std::optional<int64_t> quant_block_size;
  // The recipe's refinements: --quant_recipe_file, --quant_override, --seq_mse_candidates, --gptq, -E.
  std::optional<std::string> quant_recipe_file;
  std::vector<std::string> quant_overrides;
  int64_t seq_mse_candidates = 0;
  bool gptq = false;
  std::optional<std::string> embedding_quantize;
  bool compile_only = false;             // no decode_qdq.json: only what a device needs
  std::optional<std::string> eval_text;  // --eval_text: the SQNR check's text
  MediaFiles media;                      // the encoders' calibration media
};

struct CompilationSettings {
  GraphShapeSettings graphs;
  // The compile spec's options (soc, backend, x86, fp16, profiling, ...): their only copy here.
  // The compilation stage sets spec.use_fp16 for a float program on HTP.
  options::SpecOptions spec;
  bool shared_buffer = false;
  bool backend_fuse_kv = false;
  std::optional<std::string> lowering;  // --lowering; default: options::effective_lowering
  // What manifest.json records as "options" (orchestrator::recorded_options).
  nlohmann::json recorded_options = nlohmann::json::object();
};

// --eval_methods tasks_eval / sqnr_eval and their options, as given (eval/eval_request.h checks them).
struct EvalRequestSettings {
  std::vector<std::string> methods;  // --eval_methods
  std::optional<std::vector<std::string>> tasks;  // --eval_tasks
  bool tasks_given = false;
  Setting<int64_t> limit{1};  // --eval_limit
};

struct InferenceSettings {
  GraphShapeSettings graphs;
  std::optional<std::string> lone_program;  // --pte FILE
  std::optional<std::string> pre_gen_pte;   // --pre_gen_pte DIR
  bool interactive = false;                 // --chat: prompts from the strategy's prompt source
  std::optional<std::string> tokenizer_file;
  std::optional<std::string> decoder_model;  // its chat format, when nothing else names one
  // --use_attention_sink SINK,EVICTION as given (the manifest's applies otherwise).
  std::optional<std::pair<int64_t, int64_t>> attention_sink;
  std::optional<int64_t> max_new_tokens;
  std::string system_prompt;
  double temperature = 0.8;
  double top_p = 0.9;
  std::optional<int64_t> seed;
  MediaFiles media;
  EvalRequestSettings eval;
  std::optional<std::string> lora;  // --lora: the compiled adapter to start with
};

}  // namespace genai::pipeline
