// The compile side of --lowering qnn (backends/qnn/qnn_backend.h).
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "backends/qnn/htp_context_limit.h"
#include "backends/qnn/onnx_export.h"
#include "backends/qnn/qnn_backend.h"
#include "backends/qnn/qnn_bridge.h"
#include "backends/qnn/qnn_graph_rename.h"
#include "backends/qnn/qnn_payload.h"
#include "backends/qnn/qnn_provider_options.h"
#include "core/error.h"
#include "core/log.h"
#include "graph/graph.h"
#include "target/compile_spec.h"

namespace genai::backends::qnn {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

class QnnLoweringBackend final : public compile::Backend {
 public:
  std::string_view name() const override { return "qnn"; }
  std::string_view delegate_id() const override { return kQnnDelegateId; }
  target::BackendType backend_type() const override { return target::BackendType::kHtpBackend; }

  std::optional<std::string> check_support(const pipeline::GraphBundle& bundle,
                                           const compile::LoweringTarget& target) const override {
    if (target.use_fp16 || !bundle.quantized())
      return fmt::format("--lowering qnn compiles quantized graphs; graph {} is a float (fp16) program on {} (use a "
                         "quantized --quant_recipe, or --lowering genai)",
                         bundle.graph()->name(), target.soc->name);
    return std::nullopt;
  }

  compile::LoweredMethod lower(std::string_view method_name, const pipeline::GraphBundle& bundle,
                               const compile::LoweringTarget& target) const override {
    const compile::GraphToLower g{std::string(method_name), &bundle};
    return std::move(lower_group(std::span(&g, 1), target).front());
  }

  std::vector<compile::LoweredMethod> lower_group(std::span<const compile::GraphToLower> graphs,
                                                  const compile::LoweringTarget& target) const override {
    const QnnTarget t = qnn_target_from_specs(target.compile_specs, "--lowering qnn");
    // One shared context when the specs share weights (a device build); ONNX Runtime turns on
    // weight sharing for any shared context, so without it each graph gets its own.
    const bool share = t.provider.enable_htp_weight_sharing && graphs.size() > 1;
    std::vector<OnnxModel> onnx;
    for (size_t i = 0; i < graphs.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      OnnxExportOptions eo;
      // The graphs of a shared context need distinct I/O names: all but the first get a suffix.
      if (share && i > 0) eo.io_name_suffix = "_" + graphs[i].method_name;
      eo.elementwise_one_type = t.elementwise_one_type;
      onnx.push_back(export_onnx_qdq(*graphs[i].bundle, eo));
      log::info("qnn: exported {} as ONNX QDQ ({} bytes{}, {:.2f} s)", graphs[i].method_name, onnx.back().bytes.size(),
                onnx.back().external_data.empty() ? std::string()
                                                  : fmt::format(" + {} bytes of external data", onnx.back().external_data.size()),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    // A shared context holds one copy of the weights its graphs share (the largest graph's
    // initializers stand for it); otherwise each graph is a context of its own.
    uint64_t shared_bytes = 0;
    for (size_t i = 0; i < graphs.size(); ++i) {
      const uint64_t bytes = onnx[i].bytes.size() + onnx[i].external_data.size();
      if (!share) check_htp_context_size(bytes, graphs[i].method_name, graphs[i].shard);
      shared_bytes = std::max(shared_bytes, bytes);
    }
    if (share) check_htp_context_size(shared_bytes, graphs.front().method_name, graphs.front().shard);
    std::vector<QnnModel> models;
    for (size_t i = 0; i < graphs.size(); ++i)
      models.push_back({graphs[i].method_name, bytes_of(onnx[i].bytes), bytes_of(onnx[i].external_data),
                        std::string(kOnnxExternalDataFile)});
    QnnBridge bridge;
    bridge.require_available();
    const auto start = std::chrono::steady_clock::now();
    const QnnCompileResult compiled = bridge.compile(models, t.provider, share);
    log::info("qnn: compiled {} graph{} into {} context binar{} for {} V{} (QNN {}, {:.2f} s)", graphs.size(),
              graphs.size() == 1 ? "" : "s", compiled.binaries.size(), compiled.binaries.size() == 1 ? "y" : "ies",
              t.soc, t.arch, compiled.ep_sdk_version,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

    // ExecuTorch's QnnBackend runs the graph named after the method (qnn_graph_rename.h).
    std::vector<std::vector<uint8_t>> payloads;
    for (size_t b = 0; b < compiled.binaries.size(); ++b) {
      std::vector<QnnGraphRename> renames;
      for (size_t i = 0; i < graphs.size(); ++i)
        if (compiled.graphs.at(i).binary == b) renames.push_back({compiled.graphs[i].graph, graphs[i].method_name});
      const std::string& raw = compiled.binaries[b];
      const std::vector<uint8_t> bin =
          rename_qnn_graphs(std::span(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()), renames);
      check_qnn_binary_target(bin, t.binary_soc, t.arch, "--lowering qnn");
      payloads.push_back(make_qnn_payload(bin));
    }
    std::vector<compile::LoweredMethod> out;
    for (size_t i = 0; i < graphs.size(); ++i)
      out.push_back(lowered_method(graphs[i].method_name, graphs[i].shard, onnx[i], compiled, i, share, t, payloads));
    return out;
  }

 private:
  static compile::LoweredMethod lowered_method(const std::string& method, int64_t shard, const OnnxModel& onnx,
                                               const QnnCompileResult& compiled, size_t index, bool share,
                                               const QnnTarget& t, const std::vector<std::vector<uint8_t>>& payloads) {
    const QnnGraphInfo& info = compiled.graphs.at(index);
    QnnMethodGraph record;
    record.method = method;
    record.graph = method;  // renamed in the binary by lower_group
    record.weight_shared = share || t.provider.enable_htp_weight_sharing;
    record.target_soc = t.soc;
    record.target_arch = t.arch;
    record.qnn_sdk = compiled.ep_sdk_version;
    compile::LoweredMethod m;
    // The method's I/O in signature order = the ONNX model's declaration order = the QNN graph's.
    auto bind = [&](const std::vector<OnnxIo>& side, const std::vector<QnnTensorInfo>& qnn, const char* what,
                    std::vector<QnnMethodIo>& rec, std::vector<compile::MethodIo>& io) {
      if (side.size() != qnn.size())
        throw_failure("--lowering qnn: graph {} of method {} has {} {}s, the ONNX model {}", info.graph, method,
                      qnn.size(), what, side.size());
      for (size_t k = 0; k < side.size(); ++k) {
        if (qnn[k].name != side[k].onnx_name || qnn[k].dtype != side[k].dtype ||
            qnn[k].shape != Shape(side[k].shape.begin(), side[k].shape.end()))
          throw_failure("--lowering qnn: {} {} of graph {} (method {}) is {} {} {}, the ONNX model's is {} {} {}", what,
                        k, info.graph, method, qnn[k].name, dtype_name(qnn[k].dtype), shape_to_string(qnn[k].shape),
                        side[k].onnx_name, dtype_name(side[k].dtype),
                        shape_to_string(Shape(side[k].shape.begin(), side[k].shape.end())));
        rec.push_back({side[k].graph_name, qnn[k]});
        io.push_back({side[k].graph_name, side[k].dtype, qnn[k].shape});
      }
    };
    bind(onnx.inputs, info.inputs, "input", record.inputs, m.inputs);
    bind(onnx.outputs, info.outputs, "output", record.outputs, m.outputs);
    m.delegate_id = std::string(kQnnDelegateId);
    m.payload = pte::Blob(payloads.at(info.binary));
    const std::string json = qnn_method_graph_json(record);
    m.named_data.push_back(
        pte::NamedData{qnn_method_graph_key(method, shard), pte::Blob(std::vector<uint8_t>(json.begin(), json.end()))});
    return m;
  }
};

}  // namespace

}  // namespace genai::backends::qnn

namespace genai::backends {

std::unique_ptr<compile::Backend> make_qnn_lowering_backend() { return std::make_unique<qnn::QnnLoweringBackend>(); }

}  // namespace genai::backends
