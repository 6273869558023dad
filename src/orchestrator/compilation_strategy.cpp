// compilation: {graph_name: GraphBundle} -> .pte files + manifest.json through
// compile::compile_artifacts. When quantization did not run (fp16 HTP, GPU, or skipped) the
// prepared float model's graphs are compiled instead (compile::float_bundles), as a float program.
#include <filesystem>

#include <fmt/format.h>

#include "backends/register_builtin.h"
#include "compile/compiler.h"
#include "compile/decoder_metadata.h"
#include "compile/float_bundles.h"
#include "modality/modality_registry.h"
#include "model/model.h"
#include "options/spec_from_options.h"
#include "options/validate.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/option_readers.h"
#include "pipeline/exceptions.h"
#include "target/soc.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;

class Compilation final : public CompilationStrategy {
 public:
  CompilationOutputConfig invoke(const PipelineContext&, const CompilationInputConfig& in,
                                 StageNotes& notes) override {
    CompilationInputConfig input = in;
    CompilationSettings& o = input.settings;
    const bool float_program = input.graphs.empty();
    compile::DecoderMetadataOptions mo;
    mo.max_seq_len = o.graphs.max_seq_len.value;
    if (float_program) {
      if (!input.model)
        throw ConfigValidationError(fmt::format("[{}] missing required inputs: graphs (quantization output) or the "
                                                "prepared model (model_preparation output)",
                                                kStageCompilation));
      graph::DecoderGraphOptions go = decoder_graph_options(o.graphs);
      // Image or audio features replace token embeddings.
      go.separate_embedding = modality::takes_media(*input.model);
      input.graphs = compile::float_bundles(input.model, go, mo.max_seq_len);
      for (const modality::Modality* m : modality::modalities_of(*input.model))
        input.graphs.emplace(m->program().graph, m->float_bundle(*input.model));
      // A float program on HTP is an fp16 program; its compile spec says so.
      if (input.backend_type == target::BackendType::kHtpBackend && !o.spec.use_fp16) {
        o.spec.use_fp16 = true;
        o.recorded_options["use_fp16"] = true;  // the manifest records the program's precision
      }
    } else if (input.model) {
      input.graphs = compile::with_decoder_metadata(input.model->config, input.graphs, mo);
    }
    if (!input.compile_specs) input.compile_specs = options::spec_builder(o.spec).build();
    input.check_ready();

    compile::CompileRequest req;
    req.soc = &target::soc_info(input.soc_model);
    req.backend_type = input.backend_type;
    req.graphs = input.graphs;
    req.compile_specs = *input.compile_specs;
    // fp16 precision is an HTP compile spec; a GPU program is float by itself.
    req.use_fp16 = o.spec.use_fp16 && input.backend_type == target::BackendType::kHtpBackend;
    req.shared_buffer = o.shared_buffer && !o.spec.enable_x86_64;
    req.kv_fusion = o.backend_fuse_kv ? compile::KvFusion::kAll : compile::KvFusion::kEightBit;
    req.num_sharding = o.spec.num_sharding;
    req.lowering = options::effective_lowering(o.lowering, o.spec.backend, o.spec.enable_x86_64, !req.use_fp16 && !float_program);
    req.artifact_dir = input.artifact_dir;
    req.tokenizer_path = input.tokenizer_path;
    req.checkpoint_path = input.checkpoint_path;
    // Each encoder program's processor settings travel with it.
    if (input.model)
      for (const modality::Modality* m : modality::modalities_of(*input.model))
        if (input.graphs.contains(m->program().graph))
          req.processor_paths.emplace(m->program().key, m->processor_config(*input.model));
    req.options = o.recorded_options;
    if (input.model)
      for (const auto& [name, t] : input.model->weights.all()) req.params += static_cast<uint64_t>(t.numel());
    const compile::CompileResult r = compile::compile_artifacts(req);

    notes["program"] = float_program ? "float" : "quantized";
    notes["planned_bytes"] = r.planned_bytes;
    notes["lower_bound_bytes"] = r.lower_bound_bytes;
    notes["manifest"] = r.manifest_path.string();
    nlohmann::json methods = nlohmann::json::object();
    for (const auto& [key, names] : r.methods) methods[std::string(artifact_key_name(key))] = names;
    notes["methods"] = std::move(methods);
    std::string files;
    for (const auto& [key, path] : r.artifacts) files += (files.empty() ? "" : ", ") + path.filename().string();
    notes["summary"] = fmt::format("{} program{} for {} {}: {}", float_program ? "float" : "quantized",
                                   r.artifacts.size() == 1 ? "" : "s", req.soc->name,
                                   target::backend_type_name(req.backend_type), files);

    CompilationOutputConfig out;
    out.artifact_paths = r.artifacts;
    return out;
  }
};

}  // namespace

std::unique_ptr<CompilationStrategy> make_compilation_strategy() {
  backends::register_builtin_backends();  // idempotent: the stage also works when run alone
  return std::make_unique<Compilation>();
}

}  // namespace genai::orchestrator
