#include "compile/float_bundles.h"

#include "compile/decoder_metadata.h"
#include "pipeline/graph_names.h"

namespace genai::compile {

pipeline::GraphBundles float_bundles(std::shared_ptr<const Model> model, graph::DecoderGraphOptions options,
                                     std::optional<int64_t> max_seq_len) {
  options.calibration = false;
  const graph::GraphMap graphs = graph::build_decoder_graphs(model, options);
  pipeline::GraphBundles bundles;
  for (const auto& [name, g] : graphs) {
    std::vector<pipeline::InputSpec> inputs;
    for (graph::ValueId id : g->inputs()) {
      const graph::Value& v = g->value(id);
      inputs.push_back({v.name, v.type.dtype, v.type.shape});
    }
    pipeline::Metadata md{{"quant_recipe", std::string("float")}};
    bundles.emplace(pipeline::parse_graph_name(name), pipeline::GraphBundle(g, std::move(inputs), std::move(md), std::nullopt));
  }
  DecoderMetadataOptions mo;
  mo.max_seq_len = max_seq_len;
  return with_decoder_metadata(model->config, bundles, mo);
}

}  // namespace genai::compile
