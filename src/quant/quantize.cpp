#include "quant/quantize.h"

#include <chrono>

#include "core/error.h"
#include "core/log.h"

namespace genai::quant {

pipeline::QuantIoDtypes quant_io_dtypes(const graph::Graph& g, const EncodingSet& set) {
  pipeline::QuantIoDtypes io;
  auto dtype_of = [&](const graph::Value& v) {
    if (v.type.dtype != DType::kF32) return v.type.dtype;
    auto it = set.activations.find(v.name);
    if (it == set.activations.end()) throw_failure("quant: graph {}: I/O tensor {} has no encoding", g.name(), v.name);
    return qdtype_storage(it->second.dtype);
  };
  for (auto id : g.inputs()) io.inputs[g.value(id).name] = dtype_of(g.value(id));
  for (const auto& o : g.outputs()) {
    const auto& v = g.value(o.value);
    DType d = dtype_of(v);
    // The output shares the encoding of its value (k_out_l is attn.k.new, logits is lm_head.out).
    io.outputs[o.name] = d;
  }
  return io;
}

namespace {

pipeline::GraphName bundle_name(const std::string& name) { return pipeline::parse_graph_name(name); }

std::vector<pipeline::InputSpec> example_inputs(const graph::Graph& g) {
  std::vector<pipeline::InputSpec> specs;
  for (auto id : g.inputs()) specs.push_back({g.value(id).name, g.value(id).type.dtype, g.value(id).type.shape});
  return specs;
}

}  // namespace

QuantizedModel quantize_model(std::shared_ptr<const Model> model, const QuantizeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  graph::DecoderGraphOptions go;
  go.mode = o.mode;
  go.max_context_len = o.max_context_len;
  go.prefill_ar_len = o.prefill_ar_len;
  go.decode_ar_len = o.decode_ar_len;
  go.separate_embedding = o.separate_embedding;
  QuantizedModel q;
  q.recipe = fit_recipe_to_model(o.recipe, model->config);
  q.graphs = graph::build_decoder_graphs(model, go);

  // The calibration graph: full-autoregressive over a calibration window, which may be shorter
  // than the deployed context (encodings are per tensor name, not per shape).
  CalibrationOptions co = o.calibration;
  co.context_len = std::min(co.context_len, o.max_context_len);
  if (!o.windows.empty()) {
    co.context_len = static_cast<int64_t>(o.windows.front().size());
    for (const auto& w : o.windows) {
      if (static_cast<int64_t>(w.size()) != co.context_len || co.context_len < 1 || co.context_len > o.max_context_len)
        throw_input_error("quant: calibration windows must all have one length in [1, {}] (got {} and {} tokens)",
                          o.max_context_len, co.context_len, w.size());
    }
  }
  std::shared_ptr<const Weights> weights(model, &model->weights);
  const auto calib =
      graph::build_decoder_graph(model->config, weights, std::string(graph::kCalibration), co.context_len, co.context_len);
  {
    std::vector<std::string> names;
    for (const auto& op : calib->ops()) names.push_back(calib->value(op.result).name);
    check_overrides_match(q.recipe, names);
  }
  if (!q.recipe.is_float()) {
    const auto windows = o.windows.empty() ? calibration_windows(*model, co) : o.windows;
    log::info("calibrating {} on {} window(s) of {} tokens", q.recipe.name, windows.size(), co.context_len);
    q.ranges = calibrate(*calib, windows, co.range_method, q.recipe.gptq);
  }
  const auto source = std::make_shared<const EncodingSet>(derive_encodings(*calib, q.ranges, q.recipe));
  // kv_forward from the calibration graph, prefill_forward from kv_forward (as upstream).
  std::vector<std::string> order{std::string(graph::kKvForward)};
  if (q.graphs.count(std::string(graph::kPrefillForward))) order.emplace_back(graph::kPrefillForward);
  if (q.graphs.count(std::string(graph::kKvForwardAr1))) order.emplace_back(graph::kKvForwardAr1);
  std::shared_ptr<const EncodingSet> prev = source;
  for (const auto& name : order) {
    auto set = std::make_shared<const EncodingSet>(reconcile_encodings(*q.graphs.at(name), *prev));
    q.encodings[name] = set;
    prev = set;
  }
  // The embedding lookups, each beside its decoder graph: embed.out as calibrated.
  for (const auto& [name, g] : q.graphs)
    if (name.rfind(graph::kTokEmbeddingPrefix, 0) == 0) {
      q.encodings[name] = std::make_shared<const EncodingSet>(reconcile_encodings(*g, *source));
      order.push_back(name);
    }
  for (const auto& name : order) {
    const auto& g = *q.graphs.at(name);
    const EncodingSet& set = *q.encodings.at(name);
    pipeline::Metadata md{{"get_max_seq_len", o.max_context_len},
                          {"get_n_layers", model->config.n_layers},
                          {"get_vocab_size", model->config.vocab_size},
                          {"quant_recipe", q.recipe.name}};
    std::optional<pipeline::QuantIoDtypes> io;
    if (!q.recipe.is_float()) {
      io = quant_io_dtypes(g, set);
      if (const auto* logits_out = g.find_output("logits")) {
        const Encoding& logits = set.activations.at(g.value(logits_out->value).name);
        md["get_logits_scale"] = static_cast<double>(logits.scale);
        md["get_logits_zero_point"] = static_cast<int64_t>(logits.zero_point);
      }
      if (g.find_input(std::string(graph::kInputsEmbeds))) {
        const Encoding& e = set.activations.at(std::string(graph::kInputsEmbeds));
        md["get_inputs_embeds_scale"] = static_cast<double>(e.scale);
        md["get_inputs_embeds_zero_point"] = static_cast<int64_t>(e.zero_point);
      }
    }
    q.bundles.emplace(bundle_name(name), pipeline::GraphBundle(q.graphs.at(name), example_inputs(g), md, io, {}, {},
                                                                        q.encodings.at(name)));
  }
  q.calibration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return q;
}

std::filesystem::path write_decode_qdq(const QuantizedModel& q, const std::filesystem::path& dir) {
  const std::string kv(graph::kKvForward);
  return save_encodings(*q.encodings.at(kv), *q.graphs.at(kv), dir, "decode_qdq");
}

}  // namespace genai::quant
