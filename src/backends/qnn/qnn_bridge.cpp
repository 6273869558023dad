#include "backends/qnn/qnn_bridge.h"

#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/qnn/qnn_bridge_source.h"
#include "core/error.h"
#include "formats/byte_reader.h"
#include "runtime/subprocess.h"
#include "runtime/worker_process.h"

namespace genai::backends::qnn {
namespace {

using nlohmann::json;
using runtime::MessagePart;

constexpr std::string_view kPackageHint = "pip install onnxruntime-qnn==2.7.0";

void put_le(uint8_t* p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// One request: uint32 LE header length, the JSON header, uint32 LE blob count, then per blob a
// uint64 LE length and its bytes (qnn_bridge.py). The blobs are sent from where they are.
class Request {
 public:
  Request(const json& header, std::span<const std::span<const uint8_t>> blobs)
      : head_(header.dump()), lengths_(8 * blobs.size()) {
    prefix_.resize(4);
    put_le(prefix_.data(), head_.size(), 4);
    put_le(count_, blobs.size(), 4);
    parts_.push_back(prefix_);
    parts_.push_back({reinterpret_cast<const uint8_t*>(head_.data()), head_.size()});
    parts_.push_back({count_, 4});
    for (size_t i = 0; i < blobs.size(); ++i) {
      put_le(lengths_.data() + 8 * i, blobs[i].size(), 8);
      parts_.push_back({lengths_.data() + 8 * i, 8});
      parts_.push_back(blobs[i]);
    }
  }
  std::span<const MessagePart> parts() const { return parts_; }

 private:
  std::string head_;
  std::vector<uint8_t> prefix_, lengths_;
  uint8_t count_[4];
  std::vector<MessagePart> parts_;
};

struct Reply {
  json header;
  std::string body;
  std::vector<std::string_view> blobs;
};

// Reads the reply's frame with ByteReader; its InputError (a file's bad input) becomes the Failure
// a garbled reply is: the bridge process, not the user, is wrong.
void read_reply_frame(Reply& r, std::string_view what) {
  const auto garbage = [&](std::string_view why) { throw_failure("the QNN bridge answered garbage to {}: {}", what, why); };
  try {
    ByteReader in({reinterpret_cast<const uint8_t*>(r.body.data()), r.body.size()}, "the reply");
    const std::string_view head = in.read_bytes(in.read<uint32_t>("the header length"), "the JSON header");
    r.header = json::parse(head, nullptr, false);
    if (!r.header.is_object()) garbage("a header that is not a JSON object");
    const uint32_t blobs = in.read<uint32_t>("the blob count");
    for (uint32_t i = 0; i < blobs; ++i) {
      const std::string what_blob = fmt::format("blob {}", i);
      r.blobs.push_back(in.read_bytes(in.read<uint64_t>(what_blob + "'s length"), what_blob));
    }
    if (in.remaining() != 0) garbage(fmt::format("{} trailing bytes", in.remaining()));
  } catch (const InputError& e) {
    garbage(e.what());
  }
}

Reply decode_reply(std::string body, std::string_view what) {
  Reply r;
  r.body = std::move(body);
  read_reply_frame(r, what);
  if (r.header.contains("error")) {
    const json& e = r.header["error"];
    const std::string message = e.is_object() ? e.value("message", std::string("(no message)")) : e.dump();
    if (e.is_object() && e.value("kind", std::string()) == "bad_input") throw InputError(message);
    throw Failure(message);
  }
  return r;
}

json provider_options_json(const QnnProviderOptions& o) {
  if (o.htp_arch <= 0)
    throw_input_error("QNN provider option htp_arch is not set (the target's HTP arch, e.g. 75 for SM8650)");
  json j = json::object();
  j["htp_arch"] = std::to_string(o.htp_arch);
  if (o.soc_model > 0) j["soc_model"] = std::to_string(o.soc_model);
  if (o.vtcm_mb > 0) j["vtcm_mb"] = std::to_string(o.vtcm_mb);
  if (!o.htp_performance_mode.empty()) j["htp_performance_mode"] = o.htp_performance_mode;
  if (o.enable_htp_fp16_precision) j["enable_htp_fp16_precision"] = "1";
  if (o.enable_htp_weight_sharing) j["enable_htp_weight_sharing"] = "1";
  for (const auto& [k, v] : o.extra) j[k] = v;
  return j;
}

json tensor_json(const QnnTensorInfo& t) {
  return {{"name", t.name}, {"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}};
}

QnnTensorInfo tensor_from_json(const json& j, std::string_view what) {
  QnnTensorInfo t;
  t.name = j.value("name", std::string());
  const std::string dt = j.value("dtype", std::string());
  if (!dtype_from_name(dt, &t.dtype)) throw_failure("{}: tensor '{}' has a type genai does not know ({})", what, t.name, dt);
  for (const auto& d : j.value("shape", json::array())) t.shape.push_back(d.get<int64_t>());
  if (j.contains("scale") && j["scale"].is_number()) t.scale = j["scale"].get<double>();
  if (j.contains("offset") && j["offset"].is_number()) t.offset = j["offset"].get<int64_t>();
  return t;
}

size_t tensor_bytes(const QnnTensorInfo& t) { return static_cast<size_t>(shape_numel(t.shape)) * dtype_size(t.dtype); }

std::vector<std::string> bridge_argv() {
  return {runtime::python_interpreter(), "-c", std::string(qnn_bridge_source())};
}

}  // namespace

void throw_onnxruntime_qnn_missing(std::string_view detail) {
  throw_input_error("--lowering qnn and QnnBackend programs need the Python package onnxruntime-qnn ({}): {}",
                    kPackageHint, detail);
}

QnnBridge::QnnBridge(QnnBridgeTimeouts timeouts) : timeouts_(timeouts) { start_worker(); }

void QnnBridge::start_worker() {
  sessions_.clear();
  compiled_ = false;
  worker_.reset();
  auto argv = bridge_argv();
  const std::string python = argv[0];
  try {
    worker_ = std::make_unique<runtime::WorkerProcess>(std::move(argv), "the QNN bridge");
  } catch (const Failure& e) {
    throw_onnxruntime_qnn_missing(fmt::format("cannot start Python '{}' (set GENAI_PYTHON): {}", python, e.what()));
  }
}

QnnBridge::~QnnBridge() = default;

bool QnnBridge::running() const { return worker_ && worker_->running(); }

QnnProbe QnnBridge::probe() {
  const Request req({{"op", "probe"}}, {});
  const Reply r = decode_reply(worker_->call("probe", req.parts(), timeouts_.probe), "probe");
  QnnProbe p;
  auto str = [&](const char* k) { return r.header.contains(k) && r.header[k].is_string() ? r.header[k].get<std::string>() : ""; };
  p.python = str("python");
  p.onnxruntime = str("onnxruntime");
  p.onnxruntime_qnn = str("onnxruntime_qnn");
  p.qnn_sdk = str("qnn_sdk");
  for (const auto& m : r.header.value("missing", json::array())) {
    if (!p.missing.empty()) p.missing += "; ";
    p.missing += fmt::format("{} ({})", m.value("package", std::string("?")), m.value("detail", std::string()));
  }
  p.available = p.missing.empty();
  return p;
}

void QnnBridge::require_available() {
  QnnProbe p;
  try {
    p = probe();
  } catch (const Failure& e) {
    // A bridge killed or hung during the probe is a failure of this run (exit 1), not a sign
    // that the package is missing.
    if (worker_->died_of_a_signal_or_hung()) throw;
    throw_onnxruntime_qnn_missing(fmt::format("the Python in GENAI_PYTHON or on PATH cannot run the bridge: {}", e.what()));
  }
  if (!p.available) throw_onnxruntime_qnn_missing(fmt::format("Python {} cannot import {}", p.python, p.missing));
}

QnnCompileResult QnnBridge::compile(std::span<const QnnModel> models, const QnnProviderOptions& options,
                                    bool share_context) {
  json descs = json::array();
  std::vector<std::span<const uint8_t>> blobs;
  std::string names;
  // The models' blobs first, in order; their external data after them, each named by index.
  for (const auto& m : models) {
    descs.push_back({{"name", m.name}});
    blobs.push_back(m.onnx);
    names += (names.empty() ? "" : ", ") + m.name;
  }
  for (size_t i = 0; i < models.size(); ++i) {
    if (models[i].external_data.empty()) continue;
    descs[i]["external_data"] = {{"blob", blobs.size()}, {"location", models[i].external_data_file}};
    blobs.push_back(models[i].external_data);
  }
  const std::string what = fmt::format("compile of {} model{} ({})", models.size(), models.size() == 1 ? "" : "s", names);
  const Request req({{"op", "compile"}, {"models", descs}, {"provider_options", provider_options_json(options)},
                     {"share_context", share_context}},
                    blobs);
  // ONNX Runtime numbers the tensors of a process's contexts on from the previous compile, so
  // only the first compile of a process gives the same bytes for the same models: each compile
  // gets a fresh bridge.
  if (compiled_) start_worker();
  compiled_ = true;
  std::optional<Reply> reply;
  try {
    reply.emplace(decode_reply(worker_->call(what, req.parts(), timeouts_.compile), what));
  } catch (const Error&) {
    // ONNX Runtime keeps a shared context open across sessions until the last model closes it;
    // after a failure in between, only a new process starts clean.
    if (share_context && models.size() > 1) start_worker();
    throw;
  }
  const Reply& r = *reply;
  QnnCompileResult out;
  for (auto b : r.blobs) out.binaries.emplace_back(b);
  for (const auto& g : r.header.value("graphs", json::array())) {
    QnnGraphInfo info;
    info.model_name = g.value("name", std::string());
    info.graph = g.value("graph", std::string());
    info.binary = g.value("binary", size_t{0});
    for (const auto& t : g.value("inputs", json::array())) info.inputs.push_back(tensor_from_json(t, what));
    for (const auto& t : g.value("outputs", json::array())) info.outputs.push_back(tensor_from_json(t, what));
    if (info.binary >= out.binaries.size()) throw_failure("the QNN bridge answered {} with a graph in no binary", what);
    out.ep_sdk_version = g.value("ep_sdk_version", std::string());
    out.graphs.push_back(std::move(info));
  }
  if (out.graphs.size() != models.size())
    throw_failure("the QNN bridge answered {} with {} graphs", what, out.graphs.size());
  return out;
}

QnnSessionId QnnBridge::load(std::span<const std::span<const uint8_t>> binaries,
                             std::span<const QnnMethodBinding> methods, const QnnProviderOptions& options) {
  json descs = json::array();
  std::string names;
  std::map<std::string, QnnMethodBinding, std::less<>> bound;
  for (const auto& m : methods) {
    json ins = json::array(), outs = json::array();
    for (const auto& t : m.inputs) ins.push_back(tensor_json(t));
    for (const auto& t : m.outputs) outs.push_back(tensor_json(t));
    descs.push_back({{"method", m.method}, {"graph", m.graph}, {"binary", m.binary},
                     {"bind", m.bind == QnnMethodBinding::Bind::kByName ? "name" : "position"},
                     {"inputs", ins}, {"outputs", outs}});
    names += (names.empty() ? "" : ", ") + m.method;
    if (!bound.emplace(m.method, m).second) throw_input_error("QNN load: method '{}' is listed twice", m.method);
  }
  const std::string what = fmt::format("load of method{} {}", methods.size() == 1 ? "" : "s", names);
  const Request req({{"op", "load"}, {"methods", descs}, {"provider_options", provider_options_json(options)}}, binaries);
  const Reply r = decode_reply(worker_->call(what, req.parts(), timeouts_.load), what);
  if (!r.header.contains("session") || !r.header["session"].is_number_integer())
    throw_failure("the QNN bridge answered {} without a session", what);
  const QnnSessionId id = r.header["session"].get<QnnSessionId>();
  sessions_[id] = std::move(bound);
  return id;
}

void QnnBridge::run(QnnSessionId session, std::string_view method, std::span<const std::span<const uint8_t>> inputs,
                    std::span<const std::span<uint8_t>> outputs) {
  const auto s = sessions_.find(session);
  if (s == sessions_.end()) throw_failure("QNN run of method '{}': no session {}", method, session);
  const auto m = s->second.find(method);
  if (m == s->second.end()) throw_input_error("QNN run: the loaded context has no method '{}'", method);
  const QnnMethodBinding& b = m->second;
  const std::string what = fmt::format("run of method '{}'", method);
  if (inputs.size() != b.inputs.size() || outputs.size() != b.outputs.size())
    throw_input_error("QNN {}: {} inputs and {} outputs given, the graph has {} and {}", what, inputs.size(),
                      outputs.size(), b.inputs.size(), b.outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].size() != tensor_bytes(b.inputs[i]))
      throw_input_error("QNN {}: input '{}' has {} bytes, {} {} needs {}", what, b.inputs[i].name, inputs[i].size(),
                        dtype_name(b.inputs[i].dtype), shape_to_string(b.inputs[i].shape), tensor_bytes(b.inputs[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].size() != tensor_bytes(b.outputs[i]))
      throw_input_error("QNN {}: output '{}' has room for {} bytes, {} {} needs {}", what, b.outputs[i].name,
                        outputs[i].size(), dtype_name(b.outputs[i].dtype), shape_to_string(b.outputs[i].shape),
                        tensor_bytes(b.outputs[i]));
  const Request req({{"op", "run"}, {"session", session}, {"method", std::string(method)}}, inputs);
  const Reply r = decode_reply(worker_->call(what, req.parts(), timeouts_.run), what);
  if (r.blobs.size() != outputs.size())
    throw_failure("the QNN bridge answered {} with {} outputs, expected {}", what, r.blobs.size(), outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (r.blobs[i].size() != outputs[i].size())
      throw_failure("QNN {}: output '{}' came back with {} bytes, expected {}", what, b.outputs[i].name,
                    r.blobs[i].size(), outputs[i].size());
    std::memcpy(outputs[i].data(), r.blobs[i].data(), outputs[i].size());
  }
  last_run_seconds_ = r.header.value("seconds", 0.0);
}

void QnnBridge::close(QnnSessionId session) {
  if (sessions_.erase(session) == 0) return;
  const Request req({{"op", "close"}, {"session", session}}, {});
  decode_reply(worker_->call("close of a session", req.parts(), timeouts_.load), "close of a session");
}

}  // namespace genai::backends::qnn
