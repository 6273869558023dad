// The runtime side of --lowering qnn (backends/qnn/qnn_backend.h): a QnnBackend delegate runs its
// context binary on the HTP simulator through one QNN bridge process shared by every method
// loaded in this process. Our programs record each method's graph (named data qnn_graph_<method>)
// and bind by name; a program from another toolchain has no record, and its method runs the graph
// named after it, bound by position with the method's signature.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/qnn/qnn_backend.h"
#include "backends/qnn/qnn_bridge.h"
#include "backends/qnn/qnn_payload.h"
#include "backends/qnn/qnn_provider_options.h"
#include "core/error.h"

namespace genai::backends::qnn {
namespace {

// The bridge and the lock that serialises requests over its pipes.
struct SharedQnnRuntime {
  std::mutex mutex;
  QnnBridge bridge;
};

std::shared_ptr<SharedQnnRuntime> shared_qnn_runtime() {
  static std::mutex guard;
  static std::weak_ptr<SharedQnnRuntime> current;
  std::lock_guard lock(guard);
  if (auto live = current.lock(); live && live->bridge.running()) return live;
  auto fresh = std::make_shared<SharedQnnRuntime>();
  fresh->bridge.require_available();  // InputError naming onnxruntime-qnn
  current = fresh;
  return fresh;
}

// A program written by another toolchain records no method -> graph map: upstream names each
// method's graph after the method, and binds its tensors in the graph's order, which is the
// method's signature order.
QnnMethodGraph graph_named_after(const runtime::MethodDesc& method) {
  QnnMethodGraph g;
  g.method = method.name;
  g.graph = method.name;
  auto add = [](std::vector<QnnMethodIo>& to, const std::vector<runtime::IoDesc>& from, std::string_view kind) {
    for (size_t i = 0; i < from.size(); ++i) {
      QnnMethodIo io;
      io.name = from[i].name.empty() ? fmt::format("{}_{}", kind, i) : from[i].name;
      io.qnn.name = io.name;
      io.qnn.dtype = from[i].dtype;
      io.qnn.shape = from[i].shape;
      to.push_back(std::move(io));
    }
  };
  add(g.inputs, method.inputs, "input");
  add(g.outputs, method.outputs, "output");
  return g;
}

class QnnDelegateMethod final : public runtime::DelegateMethod {
 public:
  QnnDelegateMethod(std::shared_ptr<SharedQnnRuntime> runtime, QnnSessionId session, QnnMethodGraph graph,
                    std::string label)
      : runtime_(std::move(runtime)), session_(session), graph_(std::move(graph)), label_(std::move(label)) {
    for (const auto& io : graph_.inputs) inputs_.push_back({io.name, io.qnn.dtype, io.qnn.shape});
    for (const auto& io : graph_.outputs) outputs_.push_back({io.name, io.qnn.dtype, io.qnn.shape});
  }
  ~QnnDelegateMethod() override {
    try {
      std::lock_guard lock(runtime_->mutex);
      if (runtime_->bridge.running()) runtime_->bridge.close(session_);
    } catch (...) {
      // The bridge is gone with the process that ran it; nothing is left to release.
    }
  }
  const std::vector<runtime::IoDesc>& inputs() const override { return inputs_; }
  const std::vector<runtime::IoDesc>& outputs() const override { return outputs_; }
  uint64_t scratch_bytes() const override { return 0; }

  void execute(std::span<const runtime::BufferRef> inputs, std::span<const runtime::BufferRef> outputs,
               std::span<uint8_t>) override {
    std::vector<std::span<const uint8_t>> in;
    std::vector<std::span<uint8_t>> out;
    for (const auto& b : inputs) in.emplace_back(static_cast<const uint8_t*>(b.data), b.bytes);
    for (const auto& b : outputs) out.emplace_back(static_cast<uint8_t*>(b.data), b.bytes);
    std::lock_guard lock(runtime_->mutex);
    try {
      runtime_->bridge.run(session_, graph_.method, in, out);
    } catch (const InputError& e) {
      throw_input_error("{}: the HTP simulator refused graph {}: {}", label_, graph_.graph, e.what());
    } catch (const Failure& e) {
      throw_failure("{}: the HTP simulator failed on graph {}: {}", label_, graph_.graph, e.what());
    }
  }

 private:
  std::shared_ptr<SharedQnnRuntime> runtime_;
  QnnSessionId session_;
  QnnMethodGraph graph_;
  std::string label_;
  std::vector<runtime::IoDesc> inputs_, outputs_;
};

class QnnExecutor final : public runtime::BackendExecutor {
 public:
  std::string_view delegate_id() const override { return kQnnDelegateId; }

  std::unique_ptr<runtime::DelegateMethod> init(const pte::Blob& payload, const std::vector<CompileSpec>& specs,
                                                const runtime::NamedDataLookup& named_data,
                                                const runtime::MethodDesc& method) const override {
    const std::string& label = method.label;
    const std::span<const uint8_t> binary = qnn_context_binary(payload.bytes(), label);
    const std::string key = qnn_method_graph_key(method.name, method.shard);
    const auto record = named_data(key);
    const bool recorded = !record.empty();
    QnnMethodGraph graph;
    if (recorded) {
      graph = parse_qnn_method_graph(record, label);
      if (graph.method != method.name)
        throw_input_error("{}: the QNN graph record {} is for method {}", label, key, graph.method);
      if (graph.weight_shared)
        throw_input_error("{}: its QNN context shares weights across graphs (a device build), which the x86 HTP "
                          "simulator cannot load: run it on a phone (--device SERIAL, with ExecuTorch's runtime), or recompile "
                          "with --enable_x86_64 (or --lowering genai) to run it here",
                          label);
    } else {
      graph = graph_named_after(method);
    }
    QnnTarget t = qnn_target_from_specs(specs, label);
    t.provider.enable_htp_weight_sharing = false;
    QnnMethodBinding binding;
    binding.method = method.name;
    binding.graph = graph.graph;
    binding.binary = 0;
    binding.bind = recorded ? QnnMethodBinding::Bind::kByName : QnnMethodBinding::Bind::kByPosition;
    for (const auto& io : graph.inputs) binding.inputs.push_back(io.qnn);
    for (const auto& io : graph.outputs) binding.outputs.push_back(io.qnn);
    auto runtime = shared_qnn_runtime();
    QnnSessionId session = 0;
    {
      std::lock_guard lock(runtime->mutex);
      const std::span<const uint8_t> binaries[] = {binary};
      try {
        session = runtime->bridge.load(binaries, std::span(&binding, 1), t.provider);
      } catch (const InputError& e) {
        // The bridge cannot list a binary's graphs (it finds them by name), so the message says
        // which name was looked for and why.
        if (!recorded)
          throw_input_error("{}: the program records no QNN graph for method {} (named data {}), so it runs the "
                            "graph named after the method, as upstream names them; the HTP simulator cannot load "
                            "graph {}: {}",
                            label, method.name, key, graph.graph, e.what());
        throw_input_error("{}: the HTP simulator cannot load graph {}: {}", label, graph.graph, e.what());
      } catch (const Failure& e) {
        throw_failure("{}: the HTP simulator failed to load graph {}: {}", label, graph.graph, e.what());
      }
    }
    return std::make_unique<QnnDelegateMethod>(std::move(runtime), session, std::move(graph), std::string(label));
  }
};

}  // namespace

}  // namespace genai::backends::qnn

namespace genai::backends {

std::unique_ptr<runtime::BackendExecutor> make_qnn_executor() { return std::make_unique<qnn::QnnExecutor>(); }

}  // namespace genai::backends
