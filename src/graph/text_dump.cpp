#include "graph/text_dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace genai::graph {
namespace {

std::string attrs_text(const Attrs& attrs) {
  if (attrs.empty()) return {};
  std::vector<std::string> parts;
  for (const auto& [k, v] : attrs) parts.push_back(fmt::format("{}={}", k, attr_to_string(v)));
  return fmt::format(" {{{}}}", fmt::join(parts, ", "));
}

nlohmann::json type_json(const TensorType& t) {
  return {{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}};
}

nlohmann::json attr_json(const Attr& a) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, a);
}

}  // namespace

std::string dump_graph_text(const Graph& g) {
  std::string out = fmt::format("graph {} ({} inputs, {} ops, {} outputs)\n", g.name(), g.inputs().size(), g.ops().size(),
                                g.outputs().size());
  for (ValueId id : g.inputs()) out += fmt::format("  input    %{} : {}\n", g.value(id).name, type_to_string(g.value(id).type));
  for (const Value& v : g.values()) {
    if (v.kind == ValueKind::kWeight) out += fmt::format("  weight   %{} : {}\n", v.name, type_to_string(v.type));
    if (v.kind == ValueKind::kConstant) out += fmt::format("  constant %{} : {}\n", v.name, type_to_string(v.type));
  }
  for (const Op& op : g.ops()) {
    std::vector<std::string> operands;
    for (ValueId v : op.operands) operands.push_back("%" + g.value(v).name);
    const Value& r = g.value(op.result);
    out += fmt::format("  %{} : {} = {}({}){}\n", r.name, type_to_string(r.type), op_kind_name(op.kind),
                       fmt::join(operands, ", "), attrs_text(op.attrs));
  }
  for (const auto& o : g.outputs()) out += fmt::format("  output   {} = %{}\n", o.name, g.value(o.value).name);
  return out;
}

nlohmann::json dump_graph_json(const Graph& g) {
  nlohmann::json j;
  j["name"] = g.name();
  j["inputs"] = nlohmann::json::array();
  for (ValueId id : g.inputs()) {
    auto e = type_json(g.value(id).type);
    e["name"] = g.value(id).name;
    j["inputs"].push_back(e);
  }
  j["weights"] = nlohmann::json::array();
  j["constants"] = nlohmann::json::array();
  for (const Value& v : g.values()) {
    if (v.kind != ValueKind::kWeight && v.kind != ValueKind::kConstant) continue;
    auto e = type_json(v.type);
    e["name"] = v.name;
    j[v.kind == ValueKind::kWeight ? "weights" : "constants"].push_back(e);
  }
  j["ops"] = nlohmann::json::array();
  for (const Op& op : g.ops()) {
    auto e = type_json(g.value(op.result).type);
    e["result"] = g.value(op.result).name;
    e["op"] = std::string(op_kind_name(op.kind));
    e["operands"] = nlohmann::json::array();
    for (ValueId v : op.operands) e["operands"].push_back(g.value(v).name);
    e["attrs"] = nlohmann::json::object();
    for (const auto& [k, a] : op.attrs) e["attrs"][k] = attr_json(a);
    j["ops"].push_back(e);
  }
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : g.outputs()) {
    auto e = type_json(g.value(o.value).type);
    e["name"] = o.name;
    e["value"] = g.value(o.value).name;
    j["outputs"].push_back(e);
  }
  return j;
}

}  // namespace genai::graph
