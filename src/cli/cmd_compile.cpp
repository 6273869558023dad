// `genai compile`: checkpoint -> quantized (or fp16), compiled .pte programs for a Qualcomm target
// in an artifact dir with manifest.json. The CLI is derived from the option table (src/options):
// prepare (load the model) -> quantize (quant::quantize_model; skipped for fp16 programs: --use_fp16,
// --quant_recipe fp16 or --backend gpu) -> compile (compile::compile_artifacts).
#include <chrono>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "backends/execution_options.h"
#include "backends/register_builtin.h"
#include "cli/command.h"
#include "compile/compiler.h"
#include "compile/decoder_metadata.h"
#include "compile/float_bundles.h"
#include "core/error.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "model/model.h"
#include "options/cli_options.h"
#include "options/quant_recipe_option.h"
#include "options/spec_from_options.h"
#include "options/summary.h"
#include "orchestrator/model_lookup.h"
#include "orchestrator/option_readers.h"
#include "quant/quantize.h"
#include "target/soc.h"

namespace genai::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What the manifest records as "options": the option set minus presentation-only switches and the
// artifact dir (the manifest sits in it), so `--json`, `--threads` or compiling into another folder
// do not change the artifact bytes.
nlohmann::json recorded_options(const options::OptionValues& values) {
  nlohmann::json j = values.to_json();
  for (const char* key : {"json", "verbose", "threads", "artifact"}) j.erase(key);
  return j;
}

int compile_action(const options::OptionValues& given) {
  options::OptionValues values = given;
  if (values.get_flag("verbose")) log::set_level(log::Level::kDebug);
  if (!values.has_value("soc_model")) {
    throw_input_error("genai compile needs --soc_model (valid: {}; see `genai targets`)", target::valid_soc_names());
  }
  if (!values.has_value("checkpoint")) {
    throw_input_error("genai compile needs --checkpoint (GGUF file, Hugging Face folder or llama2.c .bin)");
  }
  if (const auto threads = values.get_optional_int("threads"); threads && *threads > 0) {
    ThreadPool::set_global_threads(static_cast<int>(*threads));
  }
  backends::apply_execution_options(values);
  const bool json = values.get_flag("json");
  // Validates the cross-option rules, the SoC and the backend (InputErrors naming them).
  const nlohmann::json summary = options::resolved_summary(values);

  // Float or quantized program: GPU programs and --use_fp16 are fp16; --quant_recipe fp16 too.
  const target::SocInfo& soc = target::resolve_soc(values.get_string("soc_model"));
  const target::BackendType backend = target::resolve_backend_type(values.get_string("backend"));
  const auto recipe_choice = options::resolve_quant_recipe(values);
  const bool recipe_fp16 = recipe_choice && recipe_choice->scheme == options::QuantScheme::kFp16;
  if (backend == target::BackendType::kGpuBackend && recipe_choice && !recipe_fp16) {
    throw_input_error("--backend gpu compiles fp16 programs; --quant_recipe {} does not apply to it (drop it)",
                      options::quant_scheme_name(recipe_choice->scheme));
  }
  if (values.get_flag("use_fp16") && recipe_choice && !recipe_fp16) {
    throw_input_error("-F/--use_fp16 compiles an fp16 program; it contradicts --quant_recipe {}",
                      options::quant_scheme_name(recipe_choice->scheme));
  }
  const bool float_program = backend == target::BackendType::kGpuBackend || values.get_flag("use_fp16") || recipe_fp16;
  if (float_program && backend == target::BackendType::kHtpBackend && !values.get_flag("use_fp16")) {
    values.set("use_fp16", true, options::OptionSource::kCommandLine);  // the spec says fp16 precision
  }
  const graph::DecoderGraphOptions graph_options = orchestrator::decoder_graph_options(values);

  // Target checks that need no model: the spec builder's rejected combinations (LPAI on a SoC
  // without LPAI, online prepare with multiple contexts, ...) and a backend this build has.
  const std::vector<CompileSpec> specs = options::spec_builder_from_options(values).build();
  backends::register_builtin_backends();
  if (!compile::find_backend(backend)) {
    std::string names;
    for (const auto& n : compile::backend_names()) names += (names.empty() ? "" : ", ") + n;
    throw_input_error("--backend {}: this build cannot compile for it on {} (available backends: {})",
                      target::backend_type_name(backend), soc.name, names);
  }

  // prepare
  auto t0 = Clock::now();
  LoadOptions load;
  if (const auto tok = values.get_optional_string("tokenizer_model")) load.tokenizer_path = *tok;
  else if (const auto bin = values.get_optional_string("tokenizer_bin")) load.tokenizer_path = *bin;
  const std::string checkpoint = values.get_string("checkpoint");
  auto model = std::make_shared<const Model>(load_model(checkpoint, load));
  const double prepare_seconds = seconds_since(t0);

  // quantize
  t0 = Clock::now();
  compile::DecoderMetadataOptions metadata;
  metadata.max_seq_len = values.get_int("max_seq_len");
  pipeline::GraphBundles bundles;
  std::string program_kind;
  if (float_program) {
    bundles = compile::float_bundles(model, graph_options, metadata.max_seq_len);
    program_kind = "fp16";
  } else {
    quant::QuantizeOptions qo;
    qo.mode = graph_options.mode;
    qo.max_context_len = graph_options.max_context_len;
    qo.prefill_ar_len = graph_options.prefill_ar_len;
    if (recipe_choice) {
      qo.recipe = quant::recipe_from_choice(*recipe_choice);
    } else {
      const orchestrator::ResolvedModel rm =
          orchestrator::resolve_model(values.get_optional_string("decoder_model").value_or(""), model->config,
                                      checkpoint, model->chat_format, model->tokenizer ? model->tokenizer->kind() : "");
      qo.recipe = quant::default_recipe(rm.recipe_name, model->config.n_layers, model->config.dim);
    }
    qo.calibration = orchestrator::calibration_options(values);
    const quant::QuantizedModel q = quant::quantize_model(model, qo);
    bundles = compile::with_decoder_metadata(model->config, q.bundles, metadata);
    program_kind = q.recipe.name;
  }
  const double quantize_seconds = seconds_since(t0);

  // compile
  compile::CompileRequest request;
  request.soc = &soc;
  request.backend_type = backend;
  request.graphs = std::move(bundles);
  request.compile_specs = specs;
  request.use_fp16 = float_program && backend == target::BackendType::kHtpBackend;
  request.shared_buffer = values.get_flag("shared_buffer") && !values.get_flag("enable_x86_64");
  request.artifact_dir = values.get_string("artifact");
  if (!model->tokenizer_path.empty()) request.tokenizer_path = model->tokenizer_path;
  request.checkpoint_path = checkpoint;
  request.options = recorded_options(values);
  for (const auto& [name, t] : model->weights.all()) request.params += static_cast<uint64_t>(t.numel());
  const compile::CompileResult result = compile::compile_artifacts(request);
  const double compile_seconds = result.seconds;

  const double ratio = result.lower_bound_bytes > 0
                           ? static_cast<double>(result.planned_bytes) / static_cast<double>(result.lower_bound_bytes)
                           : 1.0;
  if (json) {
    nlohmann::json j;
    j["artifacts"] = pipeline::artifact_map_to_json(result.artifacts);
    nlohmann::json methods = nlohmann::json::object();
    for (const auto& [key, names] : result.methods) methods[std::string(pipeline::artifact_key_name(key))] = names;
    j["methods"] = methods;
    j["planned_bytes"] = result.planned_bytes;
    j["lower_bound_bytes"] = result.lower_bound_bytes;
    j["planned_ratio"] = ratio;
    j["stage_seconds"] = {{"prepare", prepare_seconds}, {"quantize", quantize_seconds}, {"compile", compile_seconds}};
    j["manifest"] = result.manifest_path.string();
    j["program"] = program_kind;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s", options::summary_text(summary).c_str());
  std::printf("program: %s, %s on %s\n", program_kind.c_str(), target::backend_type_name(backend).c_str(),
              std::string(soc.name).c_str());
  for (const auto& [key, path] : result.artifacts) {
    std::printf("%s: %s\n", std::string(pipeline::artifact_key_name(key)).c_str(), path.string().c_str());
    std::string names;
    for (const auto& n : result.methods.at(key)) names += (names.empty() ? "" : ", ") + n;
    std::printf("  methods: %s\n", names.c_str());
  }
  std::printf("planned scratch: %llu bytes, lower bound %llu bytes (ratio %.3f)\n",
              static_cast<unsigned long long>(result.planned_bytes),
              static_cast<unsigned long long>(result.lower_bound_bytes), ratio);
  std::printf("stage seconds: prepare %.2f, quantize %.2f, compile %.2f\n", prepare_seconds, quantize_seconds,
              compile_seconds);
  std::printf("manifest: %s\n", result.manifest_path.string().c_str());
  return 0;
}

const CommandRegistration kCompile{
    "compile", "Quantize and compile a checkpoint into .pte programs for a Qualcomm SoC",
    [](CLI::App& sub) -> CommandAction {
      auto values = std::make_shared<options::OptionValues>(options::kCompileScope);
      options::add_options_to(sub, *values, options::kCompileScope);
      return [values] { return compile_action(*values); };
    }};

}  // namespace
}  // namespace genai::cli
