#include "quant/quantize.h"

#include <chrono>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "pipeline/adapter_graphs.h"

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

graph::DecoderGraphOptions decoder_graph_options(const QuantizeOptions& o) {
  graph::DecoderGraphOptions go;
  go.mode = o.mode;
  go.max_context_len = o.max_context_len;
  go.prefill_ar_len = o.prefill_ar_len;
  go.decode_ar_len = o.decode_ar_len;
  go.separate_embedding = o.separate_embedding;
  return go;
}

// One graph's bundle: its program metadata and, quantized, its I/O types and the logits' (and
// embeddings') encodings as constants.
pipeline::GraphBundle decoder_bundle(const Model& model, const QuantizeOptions& o, const Recipe& recipe,
                                     const std::shared_ptr<const graph::Graph>& graph,
                                     const std::shared_ptr<const EncodingSet>& encodings, pipeline::Metadata md = {}) {
  const auto& g = *graph;
  const EncodingSet& set = *encodings;
  md.insert({{"get_max_seq_len", o.max_context_len},
             {"get_n_layers", model.config.n_layers},
             {"get_vocab_size", model.config.vocab_size},
             {"quant_recipe", recipe.name}});
  std::optional<pipeline::QuantIoDtypes> io;
  if (!recipe.is_float()) {
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
  return pipeline::GraphBundle(graph, example_inputs(g), md, io, {}, {}, encodings);
}

// The adapter's decoder graphs, calibrated through their own calibration graph on the adapter's
// windows (or the base's). What the program's methods share stays the base's: every base weight keeps the base's
// encoding (the same object, so the lowering stores its data once), and the logits and the
// embeddings their encodings (the program's get_logits_scale and get_inputs_embeds_scale are
// one for all methods). The KV cache's encodings are the adapter's own: a switch of adapters
// clears the cache.
void add_adapter(QuantizedModel& q, const std::shared_ptr<const Model>& model, const LoraAdapter& adapter,
                 const QuantizeOptions& o, const CalibrationOptions& co, const std::vector<std::vector<int32_t>>& windows,
                 const EncodingSet& base) {
  const std::shared_ptr<const Model> adapted = model_with_adapter(*model, adapter);
  const graph::GraphMap graphs = graph::build_decoder_graphs(adapted, decoder_graph_options(o));
  std::shared_ptr<const Weights> weights(adapted, &adapted->weights);
  const auto calib = graph::build_decoder_graph(
      adapted->config, weights, fmt::format("{}{}{}", graph::kCalibration, pipeline::kLoraInfix, adapter.name),
      co.context_len, co.context_len);
  RangeMap ranges;
  if (!q.recipe.is_float()) {
    // Its own text's windows (--lora_calib_samples), else the base's; both cut to the same length.
    const auto& own = adapter.calibration_windows.empty() ? windows : adapter.calibration_windows;
    log::info("calibrating LoRA adapter {} on {} window(s){}", adapter.name, own.size(),
              adapter.calibration_windows.empty() ? "" : " of its own text");
    ranges = calibrate(*calib, own, co.range_method, q.recipe.gptq);
  }
  EncodingSet derived = derive_encodings(*calib, ranges, q.recipe);
  for (auto& [name, encoding] : derived.weights)
    if (const auto it = base.weights.find(name); it != base.weights.end()) encoding = it->second;
  std::vector<std::string> pinned{"embed.out", std::string(graph::kInputsEmbeds)};
  if (const auto* logits = calib->find_output("logits")) pinned.push_back(calib->value(logits->value).name);
  for (const auto& name : pinned)
    if (const auto it = base.activations.find(name); it != base.activations.end() && derived.activations.count(name))
      derived.activations[name] = it->second;
  // The base's order: kv_forward from the calibration graph, each next graph from the one before.
  std::shared_ptr<const EncodingSet> prev = std::make_shared<const EncodingSet>(std::move(derived));
  for (const std::string_view base_name : {graph::kKvForward, graph::kPrefillForward, graph::kKvForwardAr1}) {
    const auto g = graphs.find(std::string(base_name));
    if (g == graphs.end()) continue;
    const pipeline::GraphName graph_name = pipeline::adapter_graph(bundle_name(g->first), adapter.name);
    auto set = std::make_shared<const EncodingSet>(reconcile_encodings(*g->second, *prev));
    const std::string method(pipeline::graph_name_str(graph_name));
    q.graphs[method] = g->second;
    q.encodings[method] = set;
    // The program describes each adapter by a constant of its decode method (genai inspect lists them).
    pipeline::Metadata md;
    if (base_name == graph::kKvForward) md[lora_adapter_constant(adapter.name)] = lora_adapter_description(adapter);
    q.bundles.emplace(graph_name, decoder_bundle(*model, o, q.recipe, g->second, set, std::move(md)));
    prev = std::move(set);
  }
}

}  // namespace

QuantizedModel quantize_model(std::shared_ptr<const Model> model, const QuantizeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  QuantizedModel q;
  q.recipe = fit_recipe_to_model(o.recipe, model->config);
  q.graphs = graph::build_decoder_graphs(model, decoder_graph_options(o));

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
  std::vector<std::vector<int32_t>> windows;
  if (!q.recipe.is_float()) {
    windows = o.windows.empty() ? calibration_windows(*model, co) : o.windows;
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
  for (const auto& name : order)
    q.bundles.emplace(bundle_name(name), decoder_bundle(*model, o, q.recipe, q.graphs.at(name), q.encodings.at(name)));
  for (const auto& adapter : o.adapters) add_adapter(q, model, *adapter, o, co, windows, *source);
  q.calibration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return q;
}

std::filesystem::path write_decode_qdq(const QuantizedModel& q, const std::filesystem::path& dir) {
  const std::string kv(graph::kKvForward);
  return save_encodings(*q.encodings.at(kv), *q.graphs.at(kv), dir, "decode_qdq");
}

}  // namespace genai::quant
