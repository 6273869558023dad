// The compilation stage: {graph_name: GraphBundle} -> one multi-method .pte per artifact key in an
// artifact dir, plus manifest.json. Upstream's DefaultCompilerAdapter (one graph -> one method,
// target check, memory plan) and the strategy around it (grouping, shared weights, constant
// methods, scratch size per group). Every file is written atomically; identical requests give
// byte-identical files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/backend.h"
#include "pipeline/artifact_keys.h"
#include "pipeline/graph_bundle.h"

namespace genai::compile {

struct CompileRequest {
  const target::SocInfo* soc = nullptr;
  target::BackendType backend_type = target::BackendType::kHtpBackend;
  pipeline::GraphBundles graphs;                // kv_forward (+ prefill_forward) (+ tok_embedding_*)
  std::vector<CompileSpec> compile_specs;  // options::spec_builder_from_options(...).build()
  bool use_fp16 = false;
  bool shared_buffer = false;
  KvFusion kv_fusion = KvFusion::kEightBit;  // --backend_fuse_kv: kAll
  // "genai": the backend of `backend_type` (our payloads); "qnn": QNN HTP context binaries
  // (backend "qnn", delegate QnnBackend; htp only).
  std::string lowering = "genai";
  // --num_sharding: the text decoder's layers in this many parts, each its own delegate (QNN
  // context) in every method (compile/layer_sharding.h); 1: one delegate per method.
  int64_t num_sharding = 1;
  std::filesystem::path artifact_dir;
  // false: the programs are not flushed to disk before their rename (a private temporary dir,
  // e.g. the pipeline's post-quantization check, which nobody reads after a crash).
  bool sync_programs = true;
  // Recorded in manifest.json: the tokenizer file is copied next to the programs, the checkpoint
  // is recorded with its checksum, `options` is the option set used (JSON object).
  std::optional<std::filesystem::path> tokenizer_path;
  std::optional<std::filesystem::path> checkpoint_path;
  // Each encoder program's processor settings (preprocessor_config.json: an image processor's, a
  // feature extractor's), by the encoder's artifact key: copied next to the programs as
  // processor_file_name(key) and recorded in the manifest's "processors".
  std::map<pipeline::ArtifactKey, std::filesystem::path> processor_paths;
  nlohmann::json options = nlohmann::json::object();
  uint64_t params = 0;  // parameters of the source model (manifest "params"; 0: not recorded)
};

struct MethodReport {
  std::string delegate_id;
  uint64_t planned_bytes = 0;
  uint64_t lower_bound_bytes = 0;
};

struct CompileResult {
  pipeline::ArtifactMap artifacts;  // key -> .pte path
  std::map<pipeline::ArtifactKey, std::vector<std::string>> methods;  // key -> method names (all)
  std::map<std::string, MethodReport> method_reports;                 // by graph name
  uint64_t planned_bytes = 0;      // sum over groups of the group's scratch (largest method)
  uint64_t lower_bound_bytes = 0;  // the same sum of lower bounds
  std::filesystem::path manifest_path;
  double seconds = 0.0;
};

// text_decoder for kv_forward / prefill_forward, tok_embedding for tok_embedding_<graph>, an
// encoder's own key for an encoder graph (pipeline/encoder_programs.h).
pipeline::ArtifactKey artifact_key_of(pipeline::GraphName graph);
// "<artifact_key>.pte", e.g. "text_decoder.pte".
std::string artifact_file_name(pipeline::ArtifactKey key);
// "<artifact_key>_preprocessor_config.json": an encoder's processor settings in the artifact dir.
std::string processor_file_name(pipeline::ArtifactKey key);

// The group's compile specs: the QNN entry re-encoded with htp_options.max_sf_buf_size = `scratch`
// (the spill-fill buffer shared across the contexts of one program); specs without a QNN entry or
// without HTP options are returned unchanged. Failure when `scratch` exceeds the int32 field.
std::vector<CompileSpec> specs_with_spill_fill_size(const std::vector<CompileSpec>& specs, uint64_t scratch);

// Runs the stage. InputError (exit 2) for unsupported combinations and target/spec disagreement,
// naming the SoC, option or op; nothing is left half-written on any error.
CompileResult compile_artifacts(const CompileRequest& request);

// manifest.json: {"format": "genai-artifacts", "version": 1, "artifacts": {key: file name},
// "methods": {key: [names]}, "tokenizer": file name, "soc_model", "backend", "options": {...},
// "source": {"path", "sha256"}, "processors": {encoder key: file name} (models with encoders;
// older manifests have one "processor": file name), "planned_bytes", "lower_bound_bytes", "params" (when known),
// "checksums": {file name: {"size", "chunked_xxh3_128" (core/chunked_digest.h)}} for every artifact
// and the tokenizer}.
inline constexpr std::string_view kManifestFileName = "manifest.json";
inline constexpr std::string_view kProcessorFileName = "preprocessor_config.json";

}  // namespace genai::compile
