// `genai inspect FILE [--json]`: what a .pte program contains — header, methods (kind, I/O,
// operators, delegates with their QNN options, planned buffers, constant values), segments and
// named data. The file is fully verified first, so a corrupt file is a clean exit 2.
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/qnn/qnn_graph_rename.h"
#include "backends/qnn/qnn_payload.h"
#include "cli/command.h"
#include "core/error.h"
#include "model/lora_adapter.h"
#include "pte/program_reader.h"
#include "target/compile_spec.h"

namespace genai::cli {
namespace {

using nlohmann::json;
using namespace genai::pte;

const char* value_type_name(const Value& v) {
  static constexpr const char* kNames[] = {"null",        "int",       "bool",       "double",
                                           "tensor",      "string",    "int_list",   "double_list",
                                           "bool_list",   "tensor_list", "optional_tensor_list"};
  return kNames[v.index()];
}

json shape_json(const TensorValue& t) {
  json shape = json::array();
  for (int32_t s : t.sizes) shape.push_back(s);
  return shape;
}

// One method input or output: dtype + shape for tensors; other values name their type.
json io_json(const Value& v) {
  if (const auto* t = std::get_if<TensorValue>(&v))
    return {{"type", "tensor"}, {"dtype", std::string(scalar_type_name(t->scalar_type))}, {"shape", shape_json(*t)}};
  return {{"type", value_type_name(v)}, {"dtype", nullptr}, {"shape", nullptr}};
}

// A constant method's output as plain JSON (numbers, booleans, strings, lists of them).
json constant_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Null>) return nullptr;
        else if constexpr (std::is_same_v<T, Int> || std::is_same_v<T, Bool> || std::is_same_v<T, Double> ||
                           std::is_same_v<T, String>)
          return x.value;
        else if constexpr (std::is_same_v<T, TensorValue>)
          return {{"dtype", std::string(scalar_type_name(x.scalar_type))}, {"shape", shape_json(x)},
                  {"bytes", x.data ? x.data->size() : 0}};
        else if constexpr (std::is_same_v<T, BoolList>) {
          json a = json::array();
          for (bool b : x.items) a.push_back(b);
          return a;
        } else
          return x.items;
      },
      v);
}

std::string tensor_text(const Value& v) {
  if (const auto* t = std::get_if<TensorValue>(&v)) {
    std::string dims;
    for (size_t i = 0; i < t->sizes.size(); ++i) dims += (i ? "," : "") + std::to_string(t->sizes[i]);
    return fmt::format("{}[{}]", scalar_type_name(t->scalar_type), dims);
  }
  return value_type_name(v);
}

std::optional<json> qnn_options(const std::string& file, const Method& m, const Delegate& d) {
  try {
    return qnn_options_json_from_specs(d.compile_specs);
  } catch (const InputError& e) {
    throw_input_error("{}: method '{}' delegate '{}': {}", file, m.name, d.id, e.what());
  }
}

// A QnnBackend payload: the custom-protocol header as read (magic, signature, size, each judged),
// the target its context binary records, and whether the binary holds a graph named after the
// method (what ExecuTorch's QnnBackend looks the method's tensors up by).
json qnn_payload_json(const Delegate& d, std::string_view method) {
  namespace q = backends::qnn;
  const auto bytes = d.processed.bytes();
  const auto h = q::read_qnn_payload_header(bytes);
  if (!h) return {{"valid", false}, {"problem", "shorter than the header"}};
  json j;
  j["magic"] = fmt::format("{:#010x}", h->magic);
  j["magic_ok"] = h->magic == q::kQnnPayloadMagic;
  j["signature"] = h->signature;
  j["header_size"] = q::kQnnPayloadHeaderBytes;
  j["context_binary_size"] = h->binary_size;
  j["size_ok"] = bytes.size() >= q::kQnnPayloadHeaderBytes && h->binary_size == bytes.size() - q::kQnnPayloadHeaderBytes;
  j["valid"] = j["magic_ok"].get<bool>() && j["size_ok"].get<bool>();
  j["binary_target"] = nullptr;
  j["graph_named_after_method"] = false;
  if (j["valid"].get<bool>()) {
    const auto binary = bytes.subspan(q::kQnnPayloadHeaderBytes);
    if (auto t = q::qnn_binary_target(binary))
      j["binary_target"] = {{"soc_model", t->soc}, {"htp_arch", fmt::format("V{}", t->arch)}};
    j["graph_named_after_method"] = q::count_qnn_name_records(binary, method) > 0;
  }
  return j;
}

// Delegates whose payloads are the same bytes in the file (one segment) get one number.
using PayloadIds = std::map<const uint8_t*, size_t>;

size_t payload_id(PayloadIds& ids, const Delegate& d) {
  return ids.emplace(d.processed.data(), ids.size()).first->second;
}

json method_json(const std::string& file, const Method& m, PayloadIds& ids) {
  json j;
  j["name"] = m.name;
  const MethodKind kind = method_kind(m);
  j["kind"] = std::string(method_kind_name(kind));
  json inputs = json::array(), outputs = json::array();
  for (int32_t i : m.inputs) inputs.push_back(io_json(m.values[static_cast<size_t>(i)]));
  for (int32_t o : m.outputs) outputs.push_back(io_json(m.values[static_cast<size_t>(o)]));
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  if (kind == MethodKind::kConstant) {
    json values = json::array();
    for (int32_t o : m.outputs) values.push_back(constant_json(m.values[static_cast<size_t>(o)]));
    j["values"] = values;
  }
  j["instructions"] = instruction_count(m);
  json ops = json::array();
  for (const auto& op : m.operators) ops.push_back(operator_full_name(op));
  j["operators"] = ops;
  json delegates = json::array();
  for (const auto& d : m.delegates) {
    json specs = json::array();
    for (const auto& s : d.compile_specs) specs.push_back({{"key", s.key}, {"size", s.value.size()}});
    auto qnn = qnn_options(file, m, d);
    delegates.push_back({{"id", d.id},
                         {"compile_specs", specs},
                         {"processed_size", d.processed.size()},
                         {"payload", d.processed.empty() ? json(nullptr) : json(payload_id(ids, d))},
                         {"qnn_options", qnn ? *qnn : json(nullptr)}});
    if (d.id == backends::qnn::kQnnDelegateId) delegates.back()["qnn_payload"] = qnn_payload_json(d, m.name);
  }
  j["delegates"] = delegates;
  j["non_const_buffer_sizes"] = m.non_const_buffer_sizes;
  // Tensors whose bytes the program carries, and how many tensors memory planning placed.
  json constants = json::array();
  size_t planned = 0;
  for (size_t i = 0; i < m.values.size(); ++i)
    if (const auto* t = std::get_if<TensorValue>(&m.values[i])) {
      if (t->allocation) ++planned;
      if (t->data && !t->allocation)
        constants.push_back({{"value", i},
                             {"dtype", std::string(scalar_type_name(t->scalar_type))},
                             {"shape", shape_json(*t)},
                             {"size", t->data->size()}});
    }
  j["constant_tensors"] = constants;
  j["planned_tensors"] = planned;
  return j;
}

// Bytes the named data entries hold, and bytes the file stores for them: the reader's blobs view
// the mapped file, so entries sharing one stored copy (deduplicated weights) share an address.
std::pair<uint64_t, uint64_t> named_data_bytes(const Program& program) {
  uint64_t total = 0, stored = 0;
  std::set<std::pair<const uint8_t*, size_t>> seen;
  for (const auto& n : program.named_data) {
    total += n.data.size();
    if (seen.insert({n.data.data(), n.data.size()}).second) stored += n.data.size();
  }
  return {total, stored};
}

json program_json(const std::string& file, const LoadedProgram& p) {
  json j;
  j["file_size"] = p.layout.file_size;
  if (p.layout.header)
    j["header"] = {{"program_size", p.layout.header->program_size},
                   {"segment_base_offset", p.layout.header->segment_base_offset},
                   {"segment_data_size", p.layout.header->segment_data_size}};
  else
    j["header"] = nullptr;
  json methods = json::array();
  PayloadIds ids;
  for (const auto& m : p.program.methods) methods.push_back(method_json(file, m, ids));
  j["methods"] = methods;
  // LoRA adapters compiled beside the base (--lora_adapter): each described by a constant method.
  json adapters = json::array();
  for (const auto& m : p.program.methods)
    if (m.name.rfind(kLoraAdapterConstantPrefix, 0) == 0 && m.outputs.size() == 1) {
      const json value = constant_json(m.values[static_cast<size_t>(m.outputs[0])]);
      json a = value.is_string() ? json::parse(value.get<std::string>(), nullptr, false) : json();
      if (!a.is_object()) a = json::object();  // a foreign program's constant: the name alone
      a["name"] = m.name.substr(kLoraAdapterConstantPrefix.size());
      adapters.push_back(std::move(a));
    }
  j["lora_adapters"] = adapters;
  json segments = json::array();
  for (const auto& s : p.layout.segments) segments.push_back({{"offset", s.offset}, {"size", s.size}});
  j["segments"] = segments;
  json named = json::array();
  for (const auto& n : p.program.named_data) named.push_back({{"key", n.key}, {"size", n.data.size()}});
  j["named_data"] = named;
  const auto [named_bytes, stored_bytes] = named_data_bytes(p.program);
  j["named_data_bytes"] = named_bytes;
  j["named_data_stored_bytes"] = stored_bytes;
  return j;
}

std::string program_text(const std::string& file, const LoadedProgram& p) {
  std::string t = fmt::format("{}: {} bytes, ", file, p.layout.file_size);
  if (p.layout.header)
    t += fmt::format("extended header: program_size {}, segment_base_offset {}, segment_data_size {}\n",
                     p.layout.header->program_size, p.layout.header->segment_base_offset,
                     p.layout.header->segment_data_size);
  else
    t += "plain flatbuffer (no extended header)\n";
  for (const auto& m : p.program.methods) {
    const MethodKind kind = method_kind(m);
    t += fmt::format("\nmethod {} ({}, {} instructions, {} values)\n", m.name, method_kind_name(kind),
                     instruction_count(m), m.values.size());
    std::string ins, outs;
    for (int32_t i : m.inputs) ins += (ins.empty() ? "" : ", ") + tensor_text(m.values[static_cast<size_t>(i)]);
    for (int32_t o : m.outputs) outs += (outs.empty() ? "" : ", ") + tensor_text(m.values[static_cast<size_t>(o)]);
    t += fmt::format("  inputs:  {}\n  outputs: {}\n", ins.empty() ? "-" : ins, outs.empty() ? "-" : outs);
    if (kind == MethodKind::kConstant) {
      std::string vals;
      for (int32_t o : m.outputs)
        vals += (vals.empty() ? "" : ", ") +
                constant_json(m.values[static_cast<size_t>(o)]).dump(-1, ' ', false, json::error_handler_t::replace);
      t += fmt::format("  values:  {}\n", vals.empty() ? "-" : vals);
    }
    if (!m.operators.empty()) {
      std::string ops;
      for (const auto& op : m.operators) ops += (ops.empty() ? "" : ", ") + operator_full_name(op);
      t += fmt::format("  operators: {}\n", ops);
    }
    size_t constants = 0, planned = 0;
    uint64_t constant_bytes = 0;
    for (const auto& v : m.values)
      if (const auto* tv = std::get_if<TensorValue>(&v)) {
        if (tv->allocation) ++planned;
        if (tv->data && !tv->allocation) {
          ++constants;
          constant_bytes += tv->data->size();
        }
      }
    if (constants) t += fmt::format("  constant tensors: {} ({} bytes)\n", constants, constant_bytes);
    if (m.non_const_buffer_sizes.size() > 1) {
      std::string sizes;
      for (size_t i = 1; i < m.non_const_buffer_sizes.size(); ++i)
        sizes += (i > 1 ? ", " : "") + std::to_string(m.non_const_buffer_sizes[i]);
      t += fmt::format("  planned buffers: [{}] bytes, {} planned tensors\n", sizes, planned);
    }
    for (const auto& d : m.delegates) {
      t += fmt::format("  delegate {}: payload {} bytes\n", d.id, d.processed.size());
      if (d.id == backends::qnn::kQnnDelegateId)
        t += fmt::format("    qnn payload: {}\n", qnn_payload_json(d, m.name).dump());
      for (const auto& s : d.compile_specs) t += fmt::format("    compile spec {}: {} bytes\n", s.key, s.value.size());
      if (auto qnn = qnn_options(file, m, d))
        t += fmt::format("    qnn options: {}\n", qnn->dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  t += fmt::format("\nsegments: {}\n", p.layout.segments.size());
  for (size_t i = 0; i < p.layout.segments.size(); ++i)
    t += fmt::format("  {}: offset {}, {} bytes\n", i, p.layout.segments[i].offset, p.layout.segments[i].size);
  if (!p.program.named_data.empty()) {
    const auto [named_bytes, stored_bytes] = named_data_bytes(p.program);
    t += fmt::format("named data: {} ({} bytes, {} stored)\n", p.program.named_data.size(), named_bytes, stored_bytes);
    for (const auto& n : p.program.named_data) t += fmt::format("  {}: {} bytes\n", n.key, n.data.size());
  }
  return t;
}

const CommandRegistration kInspect{
    "inspect", "Show what a .pte program contains (methods, operators, delegates, segments, named data)",
    [](CLI::App& sub) -> CommandAction {
      auto file = std::make_shared<std::string>();
      auto json_output = std::make_shared<bool>(false);
      sub.add_option("file", *file, "The .pte file")->required();
      sub.add_flag("--json", *json_output, "Print one JSON object on stdout");
      return [file, json_output] {
        const LoadedProgram p = read_program(*file);
        if (*json_output)
          std::printf("%s\n", program_json(*file, p).dump(2, ' ', false, json::error_handler_t::replace).c_str());
        else
          std::printf("%s", program_text(*file, p).c_str());
        return 0;
      };
    }};

}  // namespace
}  // namespace genai::cli
