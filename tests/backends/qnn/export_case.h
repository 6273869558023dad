// Helpers for the ONNX export tests: a quantized case (bundle + float reference inputs), its
// exported model written with quantized inputs for tests/python/onnx_qdq_run.py, and the
// comparison of the model's output codes with the QDQ reference's on the same inputs.
#pragma once

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/qnn/onnx_export.h"
#include "core/error.h"
#include "graph/interpreter.h"
#include "quant/encoding_set.h"
#include "quant/qdq_executor.h"
#include "quant/quantize.h"

namespace genai::qnn_export_testing {

struct ExportCase {
  std::string name;
  std::shared_ptr<const graph::Graph> graph;
  std::shared_ptr<const quant::EncodingSet> encodings;
  std::map<std::string, Tensor> inputs;  // float (values on their encodings) / int32 reference inputs
};

inline pipeline::GraphBundle bundle_of(const ExportCase& c) {
  const graph::Graph& g = *c.graph;
  std::vector<pipeline::InputSpec> specs;
  for (auto id : g.inputs()) specs.push_back({g.value(id).name, g.value(id).type.dtype, g.value(id).type.shape});
  return pipeline::GraphBundle(c.graph, specs, {}, quant::quant_io_dtypes(g, *c.encodings), {}, {}, c.encodings);
}

// Float inputs snapped onto their encodings, so the model's integer inputs and the reference's
// float inputs hold the same values.
inline void snap_inputs(ExportCase& c) {
  for (auto& [name, t] : c.inputs) {
    if (t.dtype() != DType::kF32) continue;
    quant::fake_quantize(t.mutable_data<float>(), t.numel(), c.encodings->activations.at(name));
  }
}

inline void write_bytes(const std::string& path, const void* data, size_t n) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!out) throw_failure("cannot write {}", path);
}

// dir/model.onnx, dir/io.json and one raw file per input.
inline void write_case(const ExportCase& c, const backends::qnn::OnnxModel& m, const std::string& dir) {
  std::filesystem::create_directories(dir);
  write_bytes(dir + "/model.onnx", m.bytes.data(), m.bytes.size());
  if (!m.external_data.empty())
    write_bytes(dir + "/" + std::string(backends::qnn::kOnnxExternalDataFile), m.external_data.data(), m.external_data.size());
  nlohmann::json io;
  io["inputs"] = nlohmann::json::array();
  io["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const auto& in = m.inputs[i];
    const Tensor& t = c.inputs.at(in.graph_name);
    const std::string file = fmt::format("in_{}.bin", i);
    if (in.dtype == DType::kI32) {
      write_bytes(dir + "/" + file, t.raw(), t.nbytes());
    } else {
      const quant::Encoding& e = c.encodings->activations.at(in.graph_name);
      std::vector<uint8_t> bytes(static_cast<size_t>(t.numel()) * dtype_size(in.dtype));
      for (int64_t k = 0; k < t.numel(); ++k) {
        const int64_t q = quant::quantize_value(t.data<float>()[k], e);
        if (in.dtype == DType::kU8) bytes[static_cast<size_t>(k)] = static_cast<uint8_t>(q);
        else reinterpret_cast<uint16_t*>(bytes.data())[k] = static_cast<uint16_t>(q);
      }
      write_bytes(dir + "/" + file, bytes.data(), bytes.size());
    }
    io["inputs"].push_back({{"name", in.onnx_name}, {"dtype", std::string(dtype_name(in.dtype))}, {"shape", in.shape}, {"file", file}});
  }
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const auto& o = m.outputs[i];
    io["outputs"].push_back(
        {{"name", o.onnx_name}, {"dtype", std::string(dtype_name(o.dtype))}, {"shape", o.shape}, {"file", fmt::format("out_{}.bin", i)}});
  }
  std::ofstream(dir + "/io.json") << io.dump(1);
}

struct StepDifference {
  int64_t max_steps = 0;
  int64_t differing = 0, compared = 0;
  double signal = 0.0, noise = 0.0;  // sums of squares of the reference and of the difference, in steps
  double signed_sum = 0.0;           // sum of (got - want): a rounding bias shows as a mean far from 0
  double mean_signed() const { return compared ? signed_sum / static_cast<double>(compared) : 0.0; }
  double sqnr_db() const { return noise > 0.0 ? 10.0 * std::log10(signal / noise) : 999.0; }
  double share() const { return compared ? static_cast<double>(differing) / static_cast<double>(compared) : 0.0; }
  void add(const StepDifference& o) {
    max_steps = std::max(max_steps, o.max_steps);
    differing += o.differing;
    compared += o.compared;
    signal += o.signal;
    noise += o.noise;
    signed_sum += o.signed_sum;
  }
};

// The model's output codes (read from dir) against the QDQ reference's on the case's inputs.
inline std::map<std::string, StepDifference> compare_outputs(const ExportCase& c, const backends::qnn::OnnxModel& m,
                                                             const std::string& dir) {
  graph::GraphMap graphs{{c.graph->name(), c.graph}};
  quant::QdqExecutor qdq(graphs, {{c.graph->name(), c.encodings}});
  graph::InputMap in;
  for (const auto& [k, t] : c.inputs) in[k] = &t;
  const graph::TensorMap ref = qdq.run(c.graph->name(), in);
  std::map<std::string, StepDifference> result;
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const auto& o = m.outputs[i];
    const Tensor& r = ref.at(o.graph_name);
    const quant::Encoding& e = c.encodings->activations.at(c.graph->value(c.graph->find_output(o.graph_name)->value).name);
    std::ifstream f(dir + "/" + fmt::format("out_{}.bin", i), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t want = static_cast<size_t>(r.numel()) * dtype_size(o.dtype);
    if (bytes.size() != want) throw_failure("{}: output {} has {} bytes, expected {}", dir, o.onnx_name, bytes.size(), want);
    StepDifference d;
    for (int64_t k = 0; k < r.numel(); ++k) {
      const int64_t got = o.dtype == DType::kU8 ? static_cast<uint8_t>(bytes[static_cast<size_t>(k)])
                                                : reinterpret_cast<const uint16_t*>(bytes.data())[k];
      const int64_t want = quant::quantize_value(r.data<float>()[k], e);
      const int64_t diff = std::abs(got - want);
      d.signal += static_cast<double>(want - e.zero_point) * static_cast<double>(want - e.zero_point);
      d.noise += static_cast<double>(diff) * static_cast<double>(diff);
      d.max_steps = std::max(d.max_steps, diff);
      d.signed_sum += static_cast<double>(got - want);
      d.differing += diff != 0;
      ++d.compared;
    }
    result[o.graph_name] = d;
  }
  return result;
}

// Passthrough results (reshape, transpose, slice, concat) take their first operand's encoding.
inline void propagate_passthrough(const graph::Graph& g, quant::EncodingSet& set) {
  for (const auto& op : g.ops())
    if (quant::is_passthrough(op.kind))
      set.activations[g.value(op.result).name] = set.activations.at(g.value(op.operands[0]).name);
}

// Encodings of a hand-built graph from the float ranges of one interpreter run (activation type
// `act`), passthrough results sharing their operand's, `fixed` ones as given; weights of
// linears (weight type / block) and gathered tables (per row) quantized.
inline std::shared_ptr<quant::EncodingSet> encodings_from_run(const graph::Graph& g,
                                                              const std::map<std::string, Tensor>& inputs,
                                                              quant::QDType act, quant::QDType weight, int64_t block,
                                                              const std::map<std::string, quant::Encoding>& fixed = {}) {
  auto set = std::make_shared<quant::EncodingSet>();
  set->recipe = "test";
  auto range_of = [](const Tensor& t) {
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < t.numel(); ++i) lo = std::min(lo, t.data<float>()[i]), hi = std::max(hi, t.data<float>()[i]);
    return std::pair{lo, hi};
  };
  graph::InputMap in;
  for (const auto& [k, t] : inputs) in[k] = &t;
  graph::InterpreterOptions io;
  io.observer = [&](const graph::Value& v, const Tensor& t) {
    if (t.dtype() != DType::kF32) return;
    const auto [lo, hi] = range_of(t);
    set->activations[v.name] = quant::asymmetric_encoding(act, lo, hi);
  };
  graph::interpret(g, in, io);
  for (auto id : g.inputs()) {
    const auto& v = g.value(id);
    if (v.type.dtype != DType::kF32) continue;
    const auto [lo, hi] = range_of(inputs.at(v.name));
    set->activations[v.name] = quant::asymmetric_encoding(act, lo, hi);
  }
  for (const auto& [k, e] : fixed) set->activations[k] = e;
  propagate_passthrough(g, *set);
  for (const auto& op : g.ops()) {
    const bool linear = op.kind == graph::OpKind::kLinear;
    const bool table = op.kind == graph::OpKind::kGather && g.value(op.operands[0]).kind == graph::ValueKind::kWeight;
    if (!linear && !table) continue;
    const auto& wv = g.value(op.operands[linear ? 1 : 0]);
    const Tensor w = g.weights()->get(wv.name).to_f32();
    set->weights[wv.name] = std::make_shared<quant::WeightEncoding>(
        quant::quantize_weight(wv.name, w.data<float>(), w.dim(0), w.dim(1), linear ? weight : quant::QDType::kI8,
                               linear ? block : 0));
  }
  return set;
}

}  // namespace genai::qnn_export_testing
