// The one door to ONNX Runtime's QNN execution provider: compile ONNX QDQ models into QNN context
// binaries, load a binary's graphs, run them on the HTP (the simulator on x86). ONNX Runtime's C
// API header is not available here, so the work is done by a project-owned Python program
// (qnn_bridge.py, embedded in this binary) in a long-lived child process; this interface is kept
// narrow so that a build against the C API could replace the child without touching its users
// (the `--lowering qnn` compile::Backend and the QnnBackend runtime executor).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace genai::runtime {
class WorkerProcess;
}

namespace genai::backends::qnn {

// The QNN EP's provider options for compiling and loading (numbers as in qnn_compile_spec.md §2).
struct QnnProviderOptions {
  int soc_model = 0;                  // QcomChipset, e.g. SM8650 = 57 (0: not set)
  int htp_arch = 0;                   // HtpArch, e.g. 75; must be set (without it the HTP acts as V68)
  int vtcm_mb = 0;                    // 0: the SoC's default
  std::string htp_performance_mode;   // ONNX Runtime's spelling ("burst", "balanced", ...); "" = default
  bool enable_htp_fp16_precision = false;
  bool enable_htp_weight_sharing = false;
  std::map<std::string, std::string> extra;  // any other provider option, verbatim
};

struct QnnTensorInfo {
  std::string name;  // the tensor's name inside the QNN graph
  DType dtype = DType::kF32;
  Shape shape;
  // The QNN tensor's quantization when it has one (reported by compile; QNN offset = -zero point).
  std::optional<double> scale;
  std::optional<int64_t> offset;
};

struct QnnGraphInfo {
  std::string model_name;  // as given to compile
  std::string graph;       // the QNN graph's name in the binary as compiled (ONNX Runtime chooses it)
  size_t binary = 0;       // index into QnnCompileResult::binaries
  std::vector<QnnTensorInfo> inputs, outputs;  // in the QNN graph's own order
};

struct QnnCompileResult {
  std::vector<std::string> binaries;  // QNN context binaries: one when shared, else one per model
  std::vector<QnnGraphInfo> graphs;   // one per model, in the order given
  std::string ep_sdk_version;         // the QNN SDK that built them, e.g. "v2.51.0.260929181845"
};

struct QnnModel {
  std::string name;  // names the model in messages and in QnnGraphInfo (e.g. the method name)
  std::span<const uint8_t> onnx;
  // The model's external initializers (empty: none), written beside the model for ONNX Runtime
  // as the file its tensors name (onnx_export.h's kOnnxExternalDataFile): a plain file name.
  std::span<const uint8_t> external_data = {};
  std::string external_data_file = {};
};

// How a method's tensors bind to a graph of a loaded binary.
struct QnnMethodBinding {
  std::string method;  // the name run() takes
  std::string graph;   // the QNN graph in the binary
  size_t binary = 0;   // index into load()'s binaries
  // kByName: the names are the graph's tensor names (checked against the binary). kByPosition:
  // any names, listed in the graph's own order (a binary from another toolchain).
  enum class Bind { kByName, kByPosition } bind = Bind::kByName;
  std::vector<QnnTensorInfo> inputs, outputs;  // the order run() takes them in
};

struct QnnProbe {
  bool available = false;  // onnxruntime, onnxruntime_qnn and numpy all import
  std::string missing;     // what does not import, with Python's reason
  std::string python, onnxruntime, onnxruntime_qnn, qnn_sdk;
};

struct QnnBridgeTimeouts {
  std::chrono::milliseconds probe{120'000}, compile{3'600'000}, load{600'000}, run{600'000};
};

using QnnSessionId = int64_t;

// The InputError that compile and run raise when onnxruntime-qnn cannot be used; `detail` says why.
[[noreturn]] void throw_onnxruntime_qnn_missing(std::string_view detail);

class QnnBridge {
 public:
  // Starts the bridge under $GENAI_PYTHON, else `python3` from PATH. InputError (naming
  // onnxruntime-qnn) when no Python can be started.
  explicit QnnBridge(QnnBridgeTimeouts timeouts = {});
  ~QnnBridge();
  QnnBridge(const QnnBridge&) = delete;
  QnnBridge& operator=(const QnnBridge&) = delete;

  QnnProbe probe();
  // probe(), then throw_onnxruntime_qnn_missing unless available.
  void require_available();

  // All models into context binaries: with `share_context` one binary holding every graph
  // (ONNX Runtime then always enables HTP weight sharing, and the x86 simulator cannot load such
  // a binary), else one binary per model. A node the HTP refuses: InputError naming it. In a
  // shared context the graphs' input and output names must all differ; a failed shared compile
  // restarts the bridge (ONNX Runtime cannot drop a half-built shared context). Each compile runs
  // in a fresh bridge process, the one way to get byte-identical binaries for identical models
  // (the QNN compiler's bytes depend on what the process compiled before); so a compile closes
  // the sessions this bridge had loaded: compile and run with separate QnnBridge objects.
  QnnCompileResult compile(std::span<const QnnModel> models, const QnnProviderOptions& options, bool share_context);

  // A session over `binaries` with the given methods. InputError when a binary is not a context,
  // a graph or tensor is missing; Failure when ONNX Runtime fails otherwise.
  QnnSessionId load(std::span<const std::span<const uint8_t>> binaries, std::span<const QnnMethodBinding> methods,
                    const QnnProviderOptions& options);
  // Runs `method`: inputs and outputs are raw bytes in the binding's order, each exactly the
  // size of its dtype and shape; the outputs are written in place.
  void run(QnnSessionId session, std::string_view method, std::span<const std::span<const uint8_t>> inputs,
           std::span<const std::span<uint8_t>> outputs);
  void close(QnnSessionId session);

  // Seconds the bridge spent inside ONNX Runtime's last run (without the transfer).
  double last_run_seconds() const { return last_run_seconds_; }
  // False once the bridge process died or a request failed at the transport level.
  bool running() const;

 private:
  void start_worker();

  QnnBridgeTimeouts timeouts_;
  std::unique_ptr<runtime::WorkerProcess> worker_;
  std::map<QnnSessionId, std::map<std::string, QnnMethodBinding, std::less<>>> sessions_;
  double last_run_seconds_ = 0;
  bool compiled_ = false;  // this bridge process has compiled once
};

}  // namespace genai::backends::qnn
