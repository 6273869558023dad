#include "quant/encoder_quantization.h"

#include <cmath>

#include "core/error.h"
#include "core/log.h"
#include "quant/calibration.h"
#include "quant/qdq_executor.h"
#include "quant/quantize.h"

namespace genai::quant {

QuantizedEncoder quantize_encoder(std::shared_ptr<const graph::Graph> g,
                                  const std::vector<graph::TensorMap>& samples, const Recipe& recipe,
                                  pipeline::Metadata metadata, RangeMethod method) {
  if (samples.empty()) throw_input_error("quant: graph {}: no calibration samples", g->name());
  std::vector<std::string> names;
  for (const auto& op : g->ops()) names.push_back(g->value(op.result).name);
  check_overrides_match(recipe, names);
  RangeMap ranges;
  if (!recipe.is_float()) {
    log::info("calibrating {} with {} on {} sample(s)", g->name(), recipe.name, samples.size());
    ranges = calibrate_samples(*g, samples, method, recipe.gptq, "calibrating " + g->name());
  }
  auto encodings = std::make_shared<const EncodingSet>(derive_encodings(*g, ranges, recipe));
  std::vector<pipeline::InputSpec> inputs;
  for (graph::ValueId id : g->inputs()) inputs.push_back({g->value(id).name, g->value(id).type.dtype, g->value(id).type.shape});
  metadata["quant_recipe"] = recipe.name;
  std::optional<pipeline::QuantIoDtypes> io;
  if (!recipe.is_float()) {
    io = quant_io_dtypes(*g, *encodings);
    auto publish = [&](const std::string& io_name, const std::string& tensor) {
      const Encoding& e = encodings->activations.at(tensor);
      metadata["get_" + io_name + "_scale"] = static_cast<double>(e.scale);
      metadata["get_" + io_name + "_zero_point"] = static_cast<int64_t>(e.zero_point);
    };
    for (graph::ValueId id : g->inputs())
      if (g->value(id).type.dtype == DType::kF32) publish(g->value(id).name, g->value(id).name);
    for (const auto& o : g->outputs())
      if (g->value(o.value).type.dtype == DType::kF32) publish(o.name, g->value(o.value).name);
  }
  return {encodings, pipeline::GraphBundle(g, std::move(inputs), std::move(metadata), io, {}, {}, encodings)};
}

double qdq_output_sqnr_db(const std::shared_ptr<const graph::Graph>& g, const std::shared_ptr<const EncodingSet>& encodings,
                          const std::vector<graph::TensorMap>& samples, const std::string& output) {
  QdqExecutor qdq({{g->name(), g}}, {{g->name(), encodings}});
  double signal = 0.0, noise = 0.0;
  for (const auto& sample : samples) {
    graph::InputMap in;
    for (const auto& [name, t] : sample) in[name] = &t;
    const Tensor want = graph::interpret(*g, in).at(output), got = qdq.run(g->name(), in).at(output);
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double w = want.data<float>()[i], d = w - got.data<float>()[i];
      signal += w * w;
      noise += d * d;
    }
  }
  return noise == 0.0 ? INFINITY : 10.0 * std::log10(signal / noise);
}

}  // namespace genai::quant
