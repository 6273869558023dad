#include "compile/constant_methods.h"

#include <set>

#include "compile/decoder_metadata.h"
#include "core/error.h"
#include "graph/graph.h"
#include "quant/encoding_set.h"

namespace genai::compile {
namespace {

pte::Method constant_method(const std::string& name, const pipeline::MetadataValue& v) {
  return std::visit(
      [&name](const auto& x) -> pte::Method {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) return pte::make_constant_method(name, pte::Int{x});
        else if constexpr (std::is_same_v<T, double>) return pte::make_constant_method(name, pte::Double{x});
        else if constexpr (std::is_same_v<T, bool>) return pte::make_constant_method(name, pte::Bool{x});
        else if constexpr (std::is_same_v<T, std::string>) return pte::make_constant_method(name, pte::String{x});
        else {
          std::vector<pte::Value> items;
          for (double d : x) items.push_back(pte::Double{d});
          return pte::make_constant_list_method(name, std::move(items));
        }
      },
      v);
}

std::string torch_dtype_name(quant::QDType t) {
  switch (t) {
    case quant::QDType::kU8: return "torch.uint8";
    case quant::QDType::kU16: return "torch.uint16";
    case quant::QDType::kI8: return "torch.int8";
    case quant::QDType::kI16: return "torch.int16";
    default: break;
  }
  throw_failure("constant methods: a KV output encoded as {} has no torch dtype", quant::qdtype_name(t));
}

}  // namespace

std::vector<pte::Method> metadata_constant_methods(const pipeline::GraphBundle& bundle) {
  std::vector<pte::Method> methods;
  for (const auto& [name, value] : bundle.metadata())
    if (name.rfind("get_", 0) == 0) methods.push_back(constant_method(name, value));
  return methods;
}

std::vector<pte::Method> decoder_constant_methods(const pipeline::GraphBundle& decode) {
  const pipeline::Metadata& md = decode.metadata();
  const std::string& graph_name = decode.graph()->name();
  std::vector<pte::Method> methods;
  std::set<std::string> emitted;
  for (const std::string& name : decoder_constant_names()) {
    const bool quant_only = name == "get_logits_scale" || name == "get_logits_zero_point";
    auto it = md.find(name);
    if (it == md.end()) {
      if (quant_only && !decode.quantized()) continue;
      throw_failure("constant methods: graph {} metadata lacks {} (complete it with compile::with_decoder_metadata)",
                    graph_name, name);
    }
    methods.push_back(constant_method(name, it->second));
    emitted.insert(name);
  }
  // Further getters the bundle carries (model-specific ones such as get_sliding_window).
  for (const auto& [name, value] : md) {
    if (name.rfind("get_", 0) == 0 && !emitted.count(name)) {
      methods.push_back(constant_method(name, value));
      emitted.insert(name);
    }
  }
  if (decode.quantized()) {
    if (!decode.encodings()) throw_failure("constant methods: quantized graph {} carries no encodings", graph_name);
    const graph::Graph& g = *decode.graph();
    int index = 0;
    for (const graph::GraphOutput& out : g.outputs()) {
      if (out.name.rfind("k_out_", 0) != 0 && out.name.rfind("v_out_", 0) != 0) continue;
      const std::string& tensor = g.value(out.value).name;
      auto enc = decode.encodings()->activations.find(tensor);
      if (enc == decode.encodings()->activations.end()) {
        throw_failure("constant methods: graph {}: KV output {} ({}) has no encoding", graph_name, out.name, tensor);
      }
      const quant::Encoding& e = enc->second;
      std::vector<pte::Value> attr{pte::Double{static_cast<double>(e.scale)}, pte::Int{e.zero_point}, pte::Int{e.qmin},
                                   pte::Int{e.qmax}, pte::String{torch_dtype_name(e.dtype)}};
      methods.push_back(pte::make_constant_list_method(fmt::format("get_kv_output_{}_quant_attr", index), std::move(attr)));
      ++index;
    }
  }
  return methods;
}

}  // namespace genai::compile
