#include "orchestrator/stage_settings.h"

#include "modality/modality_registry.h"
#include "options/option_table.h"
#include "options/validate.h"
#include "orchestrator/context_from_options.h"

namespace genai::orchestrator {
namespace {

using options::OptionValues;

template <typename T>
pipeline::Setting<T> setting(T value, const OptionValues& v, const char* name) {
  return pipeline::Setting<T>{std::move(value), v.was_set(name)};
}

std::vector<std::string> list_or_empty(const OptionValues& v, const char* name) {
  return v.has_value(name) ? v.get_list(name) : std::vector<std::string>{};
}

// Each registered modality's files, by its option (none when the table has no such option).
pipeline::MediaFiles media_files(const OptionValues& v) {
  pipeline::MediaFiles files;
  for (const modality::Modality* m : modality::modalities()) {
    const std::string name(m->option_name());
    if (options::find_option(name)) files[name] = v.get_list(name);
  }
  return files;
}

}  // namespace

pipeline::GraphShapeSettings graph_shape_settings(const OptionValues& v) {
  pipeline::GraphShapeSettings g;
  g.model_mode = setting(v.get_string("model_mode"), v, "model_mode");
  g.max_seq_len = setting(v.get_int("max_seq_len"), v, "max_seq_len");
  g.max_context_len = v.get_optional_int("max_context_len");
  g.prefill_ar_len = v.get_int("prefill_ar_len");
  g.ngram = setting(v.get_int("ngram"), v, "ngram");
  g.window = setting(v.get_int("window"), v, "window");
  g.gcap = setting(v.get_int("gcap"), v, "gcap");
  return g;
}

pipeline::CalibrationSettings calibration_settings(const OptionValues& v) {
  pipeline::CalibrationSettings c;
  c.calib_len = v.get_int("calib_len");
  c.max_windows = v.get_int("calib_max_windows");
  c.range_method = v.get_string("calib_range");
  c.sample_files = list_or_empty(v, "calib_samples");
  c.seed = v.get_optional_int("seed");
  c.max_context_len = options::effective_max_context_len(v);
  return c;
}

pipeline::EvalRequestSettings eval_request_settings(const OptionValues& v) {
  pipeline::EvalRequestSettings e;
  e.methods = list_or_empty(v, "eval_methods");
  if (v.has_value("eval_tasks")) e.tasks = v.get_list("eval_tasks");
  e.tasks_given = v.was_set("eval_tasks");
  e.limit = setting(v.get_int("eval_limit"), v, "eval_limit");
  return e;
}

StageSettings resolve_stage_settings(const OptionValues& v) {
  StageSettings s;
  const pipeline::GraphShapeSettings graphs = graph_shape_settings(v);
  const pipeline::CalibrationSettings calibration = calibration_settings(v);
  const std::optional<std::string> decoder_model = v.get_optional_string("decoder_model");
  const std::optional<std::string> tokenizer_file = options::tokenizer_file_option(v);
  const pipeline::MediaFiles media = media_files(v);

  pipeline::PreparationSettings& p = s.preparation;
  p.checkpoint = v.get_optional_string("checkpoint");
  p.decoder_model = decoder_model;
  p.tokenizer_file = tokenizer_file;
  p.rotation = v.get_optional_string("rotation").value_or("none");
  p.embedding_quantize = v.has_value("embedding_quantize");
  p.lora_adapters = list_or_empty(v, "lora_adapter");
  p.lora_calib_samples = list_or_empty(v, "lora_calib_samples");
  p.calibration = calibration;

  pipeline::QuantizationSettings& q = s.quantization;
  q.graphs = graphs;
  q.calibration = calibration;
  q.decoder_model = decoder_model;
  q.quant_recipe = v.get_optional_string("quant_recipe");
  q.quant_block_size = v.get_optional_int("quant_block_size");
  q.quant_recipe_file = v.get_optional_string("quant_recipe_file");
  q.quant_overrides = list_or_empty(v, "quant_override");
  q.seq_mse_candidates = v.get_int("seq_mse_candidates");
  q.gptq = v.get_flag("gptq");
  q.embedding_quantize = v.get_optional_string("embedding_quantize");
  q.compile_only = v.get_flag("compile_only");
  q.eval_text = v.get_optional_string("eval_text");
  q.media = media;

  pipeline::CompilationSettings& c = s.compilation;
  c.graphs = graphs;
  c.spec = options::spec_options(v);
  c.shared_buffer = v.get_flag("shared_buffer");
  c.backend_fuse_kv = v.get_flag("backend_fuse_kv");
  c.lowering = v.get_optional_string("lowering");
  c.recorded_options = recorded_options(v);

  pipeline::InferenceSettings& i = s.inference;
  i.graphs = graphs;
  i.lone_program = v.get_optional_string("pte");
  i.pre_gen_pte = v.get_optional_string("pre_gen_pte");
  i.interactive = v.get_flag("chat");
  i.lora = v.get_optional_string("lora");
  i.tokenizer_file = tokenizer_file;
  i.decoder_model = decoder_model;
  i.attention_sink = options::attention_sink_values(v);
  i.max_new_tokens = v.get_optional_int("max_new_tokens");
  i.system_prompt = v.get_string("system_prompt");
  i.temperature = v.get_float("temperature");
  i.top_p = v.get_float("top_p");
  i.seed = v.get_optional_int("seed");
  i.media = media;
  i.eval = eval_request_settings(v);
  return s;
}

RecipeEvalOptions recipe_eval_options(const OptionValues& v) {
  const auto text = [&v](const char* name) { return v.get_optional_string(name).value_or(""); };
  RecipeEvalOptions e;
  e.checkpoint = text("checkpoint");
  e.tokenizer_model = text("tokenizer_model");
  e.artifact = text("artifact");
  e.report = text("report");
  e.qdq = text("qdq");
  e.quant_recipe = text("quant_recipe");
  e.quant_recipe_file = text("quant_recipe_file");
  e.embedding_quantize = text("embedding_quantize");
  e.use_fp16 = v.get_flag("use_fp16");
  e.quant_overrides = list_or_empty(v, "quant_override");
  e.seq_mse_candidates = v.get_int("seq_mse_candidates");
  e.gptq = v.get_flag("gptq");
  e.rotation = v.get_string("rotation");
  e.eval_text = text("eval_text");
  e.eval_methods = v.get_list("eval_methods");
  e.max_context_len = v.get_int("max_context_len");
  e.gen_tokens = v.get_int("gen_tokens");
  e.eval_max_tokens = v.get_int("eval_max_tokens");
  e.eval_on = v.get_string("eval_on");
  e.per_layer = v.get_flag("per_layer");
  e.calib_len = v.get_int("calib_len");
  e.calib_max_windows = v.get_int("calib_max_windows");
  e.calib_range = v.get_string("calib_range");
  e.calib_samples = list_or_empty(v, "calib_samples");
  e.lora_adapters = list_or_empty(v, "lora_adapter");
  e.lora_calib_samples = list_or_empty(v, "lora_calib_samples");
  e.lora = text("lora");
  return e;
}

OptionValues recipe_eval_stage_options(const RecipeEvalOptions& e) {
  OptionValues values;
  values.set("checkpoint", e.checkpoint);
  if (!e.tokenizer_model.empty()) values.set("tokenizer_model", e.tokenizer_model);
  if (!e.artifact.empty()) values.set("artifact", e.artifact);
  if (!e.quant_recipe_file.empty()) values.set("quant_recipe_file", e.quant_recipe_file);
  if (!e.embedding_quantize.empty()) values.set("embedding_quantize", e.embedding_quantize);
  values.set("rotation", e.rotation);
  if (!e.quant_overrides.empty()) values.set("quant_override", e.quant_overrides);
  values.set("seq_mse_candidates", e.seq_mse_candidates);
  values.set("gptq", e.gptq);
  if (!e.lora_adapters.empty()) values.set("lora_adapter", e.lora_adapters);
  if (!e.lora_calib_samples.empty()) values.set("lora_calib_samples", e.lora_calib_samples);
  return values;
}

}  // namespace genai::orchestrator
