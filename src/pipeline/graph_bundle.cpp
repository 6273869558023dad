#include "pipeline/graph_bundle.h"

#include <algorithm>
#include <set>

#include "core/error.h"

namespace genai::pipeline {

GraphBundle::GraphBundle(std::shared_ptr<const graph::Graph> graph, std::vector<InputSpec> example_inputs,
                         Metadata metadata, std::optional<QuantIoDtypes> quant_io_dtypes,
                         ModalityInputs modality_inputs, ProgramOptions program_options,
                         std::shared_ptr<const quant::EncodingSet> encodings)
    : graph_(std::move(graph)),
      example_inputs_(std::move(example_inputs)),
      metadata_(std::move(metadata)),
      quant_io_dtypes_(std::move(quant_io_dtypes)),
      modality_inputs_(std::move(modality_inputs)),
      program_options_(program_options),
      encodings_(std::move(encodings)) {
  if (!graph_) throw_failure("GraphBundle: graph is null");
  std::set<std::string> names;
  for (const auto& in : example_inputs_) {
    if (in.name.empty()) throw_failure("GraphBundle: an example input has no name");
    if (!names.insert(in.name).second) throw_failure("GraphBundle: example input '{}' appears twice", in.name);
    if (std::any_of(in.shape.begin(), in.shape.end(), [](int64_t d) { return d < 0; })) {
      throw_failure("GraphBundle: example input '{}' has a negative dimension", in.name);
    }
  }
  if (quant_io_dtypes_) {
    if (!encodings_) throw_failure("GraphBundle: a quantized bundle (quant_io_dtypes present) needs its encodings");
    if (quant_io_dtypes_->inputs.empty() || quant_io_dtypes_->outputs.empty()) {
      throw_failure("GraphBundle: quant_io_dtypes needs both the input and the output entry (got {} inputs, {} outputs)",
                    quant_io_dtypes_->inputs.size(), quant_io_dtypes_->outputs.size());
    }
    for (const auto& [name, dtype] : quant_io_dtypes_->inputs) {
      if (!names.contains(name)) throw_failure("GraphBundle: quant_io_dtypes names input '{}' that the graph does not have", name);
    }
  }
}

}  // namespace genai::pipeline
