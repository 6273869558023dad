// The runtime side of --lowering qnn (backends/qnn/qnn_backend.h): a QnnBackend delegate runs its
// context binary on the HTP simulator through one QNN bridge process shared by every method
// loaded in this process. Our programs record each method's graph (named data qnn_graph_<method>)
// and bind by name; a program from another toolchain has no record, and its method runs the graph
// named after it, bound by position with the method's signature.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
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

class QnnDelegateMethod;

std::atomic<uint64_t> g_simulator_budget{kQnnSimulatorResidentBytes};
std::atomic<size_t> g_simulator_processes{kQnnSimulatorProcesses};
std::atomic<uint64_t> g_context_loads{0};

// One simulator process: a bridge, the lock that serialises requests over its pipes, and the
// contexts it holds.
struct SharedQnnRuntime {
  std::mutex mutex;
  QnnBridge bridge;
  // Guarded by `mutex`: the loaded contexts, least recently run first, and their binaries' bytes.
  std::vector<QnnDelegateMethod*> resident;
  uint64_t resident_bytes = 0;
  // Guarded by the pool's lock: the bytes of the contexts placed here, per method (its label).
  std::map<std::string, uint64_t, std::less<>> placed;
};

// The simulator processes of this process. Each holds its own HTP address space, so a method whose
// contexts exceed one process's budget (a sharded 3-4B decoder) is spread over several and runs
// without reloading any: a context goes to the first process where its method's contexts still
// fit the budget, else to a new process while there are fewer than the limit, else to the process
// holding the least of its method (which then swaps). Processes end with their last context.
class SimulatorPool {
 public:
  std::shared_ptr<SharedQnnRuntime> place(std::string_view method, uint64_t bytes) {
    std::lock_guard lock(guard_);
    std::erase_if(processes_, [](const std::weak_ptr<SharedQnnRuntime>& w) {
      const auto live = w.lock();
      return !live || !live->bridge.running();
    });
    std::shared_ptr<SharedQnnRuntime> fewest;
    uint64_t fewest_bytes = 0;
    for (const auto& w : processes_) {
      auto live = w.lock();
      const uint64_t here = placed(*live, method);
      if (here + bytes <= g_simulator_budget.load()) return record(std::move(live), method, bytes);
      if (!fewest || here < fewest_bytes) fewest = live, fewest_bytes = here;
    }
    if (fewest && processes_.size() >= std::max<size_t>(1, g_simulator_processes.load()))
      return record(std::move(fewest), method, bytes);
    auto fresh = std::make_shared<SharedQnnRuntime>();
    fresh->bridge.require_available();  // InputError naming onnxruntime-qnn
    processes_.push_back(fresh);
    return record(std::move(fresh), method, bytes);
  }

  uint64_t resident_bytes() {
    std::lock_guard lock(guard_);
    uint64_t total = 0;
    for (const auto& w : processes_)
      if (const auto live = w.lock()) {
        std::lock_guard process_lock(live->mutex);
        total += live->resident_bytes;
      }
    return total;
  }

  void release(SharedQnnRuntime& process, std::string_view method, uint64_t bytes) {
    std::lock_guard lock(guard_);
    const auto it = process.placed.find(method);
    if (it == process.placed.end()) return;
    it->second -= std::min(it->second, bytes);
    if (it->second == 0) process.placed.erase(it);
  }

 private:
  static uint64_t placed(const SharedQnnRuntime& process, std::string_view method) {
    const auto it = process.placed.find(method);
    return it == process.placed.end() ? 0 : it->second;
  }
  static std::shared_ptr<SharedQnnRuntime> record(std::shared_ptr<SharedQnnRuntime> process, std::string_view method,
                                                  uint64_t bytes) {
    const auto it = process->placed.find(method);
    if (it == process->placed.end()) process->placed.emplace(std::string(method), bytes);
    else it->second += bytes;
    return process;
  }

  std::mutex guard_;
  std::vector<std::weak_ptr<SharedQnnRuntime>> processes_;
};

SimulatorPool& simulator_pool() {
  static SimulatorPool pool;
  return pool;
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

// One delegate's context on the simulator, in the process the pool placed it in. It is loaded at
// init (a binary the simulator refuses fails the program's load) and kept loaded while that
// process's contexts fit the simulator's budget; past it, loading one closes others: first those
// of other methods, then those of its own, the most recently run first (a method runs its
// delegates in a fixed cycle, in which the one just run is needed again last). A closed context
// is loaded again when it next runs.
class QnnDelegateMethod final : public runtime::DelegateMethod {
 public:
  struct Source {
    std::span<const uint8_t> binary;  // in the program's mapping, which outlives the method
    QnnMethodBinding binding;
    QnnProviderOptions provider;
    bool recorded = false;  // the program records the method's graph (else: named after it)
    std::string record_key;
  };

  // `label` names the call in messages; `method` (its method's label, the same for every delegate
  // call of a sharded method) groups the method's contexts in the pool and for eviction.
  QnnDelegateMethod(Source source, QnnMethodGraph graph, std::string label, std::string method)
      : runtime_(simulator_pool().place(method, source.binary.size())),
        source_(std::move(source)),
        graph_(std::move(graph)),
        label_(std::move(label)),
        method_(std::move(method)) {
    for (const auto& io : graph_.inputs) inputs_.push_back({io.name, io.qnn.dtype, io.qnn.shape});
    for (const auto& io : graph_.outputs) outputs_.push_back({io.name, io.qnn.dtype, io.qnn.shape});
    try {
      std::lock_guard lock(runtime_->mutex);
      load_locked();
    } catch (...) {
      simulator_pool().release(*runtime_, method_, source_.binary.size());
      throw;
    }
  }
  ~QnnDelegateMethod() override {
    try {
      simulator_pool().release(*runtime_, method_, source_.binary.size());
      std::lock_guard lock(runtime_->mutex);
      unload_locked();
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
    if (session_) {
      auto& r = runtime_->resident;
      r.erase(std::find(r.begin(), r.end(), this));
      r.push_back(this);
    } else {
      load_locked();
    }
    try {
      runtime_->bridge.run(*session_, graph_.method, in, out);
    } catch (const InputError& e) {
      throw_input_error("{}: the HTP simulator refused graph {}: {}", label_, graph_.graph, e.what());
    } catch (const Failure& e) {
      throw_failure("{}: the HTP simulator failed on graph {}: {}", label_, graph_.graph, e.what());
    }
  }

 private:
  void load_locked() {
    const uint64_t bytes = source_.binary.size();
    auto& r = runtime_->resident;
    // Room first from other methods' contexts, least recently run first (a decoder runs prefill,
    // then decodes for a long time); then from this method's, most recently run first.
    while (!r.empty() && runtime_->resident_bytes + bytes > g_simulator_budget.load()) {
      const auto other = std::find_if(r.begin(), r.end(), [&](const QnnDelegateMethod* d) { return d->method_ != method_; });
      (other != r.end() ? *other : r.back())->unload_locked();
    }
    const std::span<const uint8_t> binaries[] = {source_.binary};
    try {
      session_ = runtime_->bridge.load(binaries, std::span(&source_.binding, 1), source_.provider);
    } catch (const InputError& e) {
      // The bridge cannot list a binary's graphs (it finds them by name), so the message says
      // which name was looked for and why.
      if (!source_.recorded)
        throw_input_error("{}: the program records no QNN graph for method {} (named data {}), so it runs the "
                          "graph named after the method, as upstream names them; the HTP simulator cannot load "
                          "graph {}: {}",
                          label_, graph_.method, source_.record_key, graph_.graph, e.what());
      throw_input_error("{}: the HTP simulator cannot load graph {}: {}", label_, graph_.graph, e.what());
    } catch (const Failure& e) {
      throw_failure("{}: the HTP simulator failed to load graph {}: {}", label_, graph_.graph, e.what());
    }
    r.push_back(this);
    runtime_->resident_bytes += bytes;
    g_context_loads.fetch_add(1);
  }

  void unload_locked() {
    if (!session_) return;
    auto& r = runtime_->resident;
    r.erase(std::find(r.begin(), r.end(), this));
    runtime_->resident_bytes -= source_.binary.size();
    const QnnSessionId session = *session_;
    session_.reset();
    if (runtime_->bridge.running()) runtime_->bridge.close(session);
  }

  std::shared_ptr<SharedQnnRuntime> runtime_;  // first: placed from the constructor's arguments
  Source source_;
  std::optional<QnnSessionId> session_;
  QnnMethodGraph graph_;
  std::string label_;
  std::string method_;
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
    QnnDelegateMethod::Source source;
    source.binary = binary;
    source.provider = t.provider;
    source.recorded = recorded;
    source.record_key = key;
    QnnMethodBinding& binding = source.binding;
    binding.method = method.name;
    binding.graph = graph.graph;
    binding.binary = 0;
    binding.bind = recorded ? QnnMethodBinding::Bind::kByName : QnnMethodBinding::Bind::kByPosition;
    for (const auto& io : graph.inputs) binding.inputs.push_back(io.qnn);
    for (const auto& io : graph.outputs) binding.outputs.push_back(io.qnn);
    return std::make_unique<QnnDelegateMethod>(std::move(source), std::move(graph), std::string(label),
                                               method.method_label.empty() ? label : method.method_label);
  }
};

}  // namespace

}  // namespace genai::backends::qnn

namespace genai::backends {

std::unique_ptr<runtime::BackendExecutor> make_qnn_executor() { return std::make_unique<qnn::QnnExecutor>(); }

uint64_t set_qnn_simulator_budget(uint64_t bytes) { return qnn::g_simulator_budget.exchange(bytes); }

size_t set_qnn_simulator_processes(size_t processes) { return qnn::g_simulator_processes.exchange(processes); }

uint64_t qnn_simulator_context_loads() { return qnn::g_context_loads.load(); }

uint64_t qnn_simulator_resident_bytes() { return qnn::simulator_pool().resident_bytes(); }

}  // namespace genai::backends
