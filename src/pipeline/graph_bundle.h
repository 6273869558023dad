// GraphBundle: the immutable per-graph unit quantization hands to compilation (one per graph
// name). The graph IR lives in src/graph; only a forward declaration is needed here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "pipeline/artifact_keys.h"
#include "pipeline/graph_names.h"

namespace genai::graph {
class Graph;
}  // namespace genai::graph
namespace genai::quant {
struct EncodingSet;  // src/quant/encoding_set.h: per-tensor activation and weight encodings
}  // namespace genai::quant

namespace genai::pipeline {

// One example input of a graph, in export order (tokens, atten_mask, input_pos, k_cache_0, ...).
struct InputSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  bool operator==(const InputSpec&) const = default;
};

// Bundle metadata, e.g. constant-method values (get_max_seq_len -> 512, get_logits_scale -> 0.1,
// get_rope_inv_freq_0 -> a list).
using MetadataValue = std::variant<int64_t, double, bool, std::string, std::vector<double>>;
using Metadata = std::map<std::string, MetadataValue>;

// Element types of the quantized graph I/O by tensor name (KV uint8/uint16, logits and mask
// uint16, tokens/positions int32). Both sides are required when present.
struct QuantIoDtypes {
  std::map<std::string, DType> inputs;
  std::map<std::string, DType> outputs;
  bool operator==(const QuantIoDtypes&) const = default;
};

// Inputs of other modalities feeding this graph: encoder artifact -> files (e.g. vision_encoder ->
// image paths), as upstream's MODALITY_INPUT_FLAG_MAP.
using ModalityInputs = std::map<ArtifactKey, std::vector<std::filesystem::path>>;

// How the program is planned: graph inputs/outputs are not allocated by the memory planner (the
// runner owns those buffers, as upstream's MemoryPlanningPass(alloc_graph_input/output=False)).
struct ProgramOptions {
  bool alloc_graph_input = false;
  bool alloc_graph_output = false;
  bool operator==(const ProgramOptions&) const = default;
};

class GraphBundle {
 public:
  // Checks: graph non-null; example inputs named, unique, non-negative dims; quant_io_dtypes,
  // when present, has both input and output entries and names only example inputs. Failure
  // otherwise (a bundle is built by code, not read from the user).
  GraphBundle(std::shared_ptr<const graph::Graph> graph, std::vector<InputSpec> example_inputs, Metadata metadata,
              std::optional<QuantIoDtypes> quant_io_dtypes, ModalityInputs modality_inputs = {},
              ProgramOptions program_options = {}, std::shared_ptr<const quant::EncodingSet> encodings = nullptr);

  const std::shared_ptr<const graph::Graph>& graph() const { return graph_; }
  const std::vector<InputSpec>& example_inputs() const { return example_inputs_; }
  const Metadata& metadata() const { return metadata_; }
  // Absent when quantization was skipped (fp16 / GPU float path).
  const std::optional<QuantIoDtypes>& quant_io_dtypes() const { return quant_io_dtypes_; }
  bool quantized() const { return quant_io_dtypes_.has_value(); }
  // The encodings of every tensor of the graph (reconciled across graphs of one model); present
  // whenever quant_io_dtypes is, null for the float path.
  const std::shared_ptr<const quant::EncodingSet>& encodings() const { return encodings_; }
  const ModalityInputs& modality_inputs() const { return modality_inputs_; }
  const ProgramOptions& program_options() const { return program_options_; }

 private:
  std::shared_ptr<const graph::Graph> graph_;
  std::vector<InputSpec> example_inputs_;
  Metadata metadata_;
  std::optional<QuantIoDtypes> quant_io_dtypes_;
  ModalityInputs modality_inputs_;
  ProgramOptions program_options_;
  std::shared_ptr<const quant::EncodingSet> encodings_;
};

// What compilation receives: one bundle per graph (method) name.
using GraphBundles = std::map<GraphName, GraphBundle>;

}  // namespace genai::pipeline
