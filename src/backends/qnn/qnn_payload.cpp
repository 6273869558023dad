#include "backends/qnn/qnn_payload.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"

namespace genai::backends::qnn {
namespace {

using nlohmann::json;

template <typename T>
void store_le_bytes(std::vector<uint8_t>& out, size_t at, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out[at + i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
}

template <typename T>
T load_le_bytes(std::span<const uint8_t> in, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(in[at + i]) << (8 * i);
  return static_cast<T>(v);
}

json method_io_json(const QnnMethodIo& io) {
  json j = {{"name", io.name}, {"qnn_name", io.qnn.name}, {"dtype", std::string(dtype_name(io.qnn.dtype))},
            {"shape", io.qnn.shape}};
  if (io.qnn.scale) j["scale"] = *io.qnn.scale;
  if (io.qnn.offset) j["offset"] = *io.qnn.offset;
  return j;
}

QnnMethodIo method_io_from_json(const json& j, std::string_view label) {
  QnnMethodIo io;
  io.name = j.at("name").get<std::string>();
  io.qnn.name = j.at("qnn_name").get<std::string>();
  const std::string dt = j.at("dtype").get<std::string>();
  if (!dtype_from_name(dt, &io.qnn.dtype))
    throw_input_error("{}: QNN graph record: tensor {} has an unknown dtype {}", label, io.name, dt);
  for (const auto& d : j.at("shape")) io.qnn.shape.push_back(d.get<int64_t>());
  if (j.contains("scale")) io.qnn.scale = j["scale"].get<double>();
  if (j.contains("offset")) io.qnn.offset = j["offset"].get<int64_t>();
  return io;
}

}  // namespace

std::vector<uint8_t> make_qnn_payload(std::span<const uint8_t> context_binary) {
  std::vector<uint8_t> out(kQnnPayloadHeaderBytes + context_binary.size(), 0);
  store_le_bytes<uint32_t>(out, 0, kQnnPayloadMagic);
  // A content-derived signature: methods with the same context share one handle, as upstream's
  // clock value does, and the bytes stay reproducible.
  const std::string digest = sha256_hex(context_binary);
  store_le_bytes<int64_t>(out, 4, static_cast<int64_t>(std::stoull(digest.substr(0, 15), nullptr, 16)));
  store_le_bytes<uint64_t>(out, 12, context_binary.size());
  std::copy(context_binary.begin(), context_binary.end(), out.begin() + kQnnPayloadHeaderBytes);
  return out;
}

std::optional<QnnPayloadHeader> read_qnn_payload_header(std::span<const uint8_t> payload) {
  if (payload.size() < 20) return std::nullopt;
  return QnnPayloadHeader{load_le_bytes<uint32_t>(payload, 0), load_le_bytes<int64_t>(payload, 4), load_le_bytes<uint64_t>(payload, 12)};
}

std::span<const uint8_t> qnn_context_binary(std::span<const uint8_t> payload, std::string_view label) {
  const auto h = read_qnn_payload_header(payload);
  if (!h || payload.size() < kQnnPayloadHeaderBytes)
    throw_input_error("{}: the QnnBackend payload ({} bytes) is shorter than its {}-byte header", label, payload.size(),
                      kQnnPayloadHeaderBytes);
  if (h->magic != kQnnPayloadMagic)
    throw_input_error("{}: the QnnBackend payload starts with {:#010x}, not the context header's magic {:#010x} (an "
                      "online-prepare DLC payload, which this runtime does not run)",
                      label, h->magic, kQnnPayloadMagic);
  if (h->binary_size != payload.size() - kQnnPayloadHeaderBytes)
    throw_input_error("{}: the QnnBackend header says the context binary has {} bytes, the payload holds {}", label,
                      h->binary_size, payload.size() - kQnnPayloadHeaderBytes);
  return payload.subspan(kQnnPayloadHeaderBytes);
}

std::optional<QnnBinaryTarget> qnn_binary_target(std::span<const uint8_t> context_binary) {
  static constexpr std::string_view kSoc = "soc_type=";
  const std::string_view text(reinterpret_cast<const char*>(context_binary.data()), context_binary.size());
  const size_t at = text.find(kSoc);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + kSoc.size();
  QnnBinaryTarget t;
  while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) t.soc += text[i++];
  static constexpr std::string_view kArch = ";arch=";
  if (text.compare(i, kArch.size(), kArch) != 0) return std::nullopt;
  i += kArch.size();
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && t.arch < 10000) t.arch = t.arch * 10 + (text[i++] - '0');
  if (t.soc.empty() || t.arch == 0) return std::nullopt;
  return t;
}

void check_qnn_binary_target(std::span<const uint8_t> context_binary, std::string_view soc, int arch,
                             std::string_view what) {
  const auto t = qnn_binary_target(context_binary);
  if (!t) throw_failure("{}: the QNN context binary records no target (no soc_type=...;arch=...)", what);
  if (t->soc != soc || t->arch != arch)
    throw_input_error("{}: the QNN context binary was built for {} (HTP V{}) but the compile specs ask for {} (HTP V{})",
                      what, t->soc, t->arch, soc, arch);
}

std::string qnn_method_graph_key(std::string_view method, int64_t shard) {
  return shard < 0 ? fmt::format("qnn_graph_{}", method) : fmt::format("qnn_graph_{}_shard{}", method, shard);
}

std::string qnn_method_graph_json(const QnnMethodGraph& g) {
  json ins = json::array(), outs = json::array();
  for (const auto& io : g.inputs) ins.push_back(method_io_json(io));
  for (const auto& io : g.outputs) outs.push_back(method_io_json(io));
  const json j = {{"format", "genai-qnn-graph"}, {"version", 1},
                  {"method", g.method},           {"graph", g.graph},
                  {"weight_shared", g.weight_shared}, {"target", {{"soc", g.target_soc}, {"arch", g.target_arch}}},
                  {"qnn_sdk", g.qnn_sdk},         {"inputs", ins},
                  {"outputs", outs}};
  return j.dump();
}

QnnMethodGraph parse_qnn_method_graph(std::span<const uint8_t> json_bytes, std::string_view label) {
  try {
    const json j = json::parse(json_bytes.begin(), json_bytes.end());
    if (j.value("format", std::string()) != "genai-qnn-graph" || j.value("version", 0) != 1)
      throw_input_error("{}: the QNN graph record is not format genai-qnn-graph version 1", label);
    QnnMethodGraph g;
    g.method = j.at("method").get<std::string>();
    g.graph = j.at("graph").get<std::string>();
    g.weight_shared = j.at("weight_shared").get<bool>();
    g.target_soc = j.at("target").at("soc").get<std::string>();
    g.target_arch = j.at("target").at("arch").get<int>();
    g.qnn_sdk = j.value("qnn_sdk", std::string());
    for (const auto& t : j.at("inputs")) g.inputs.push_back(method_io_from_json(t, label));
    for (const auto& t : j.at("outputs")) g.outputs.push_back(method_io_from_json(t, label));
    return g;
  } catch (const json::exception& e) {
    throw_input_error("{}: the QNN graph record does not read: {}", label, e.what());
  }
}

}  // namespace genai::backends::qnn
