// What a QnnBackend delegate carries: the payload (QnnContextCustomProtocol's 256-byte header,
// then the QNN context binary; qnn_compile_spec.md §6), the target a context binary records, and
// the method -> graph map our compiler stores beside it as named data (the QNN graph's name and
// its I/O in the graph's order), so a .pte of ours describes itself to the runtime.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/qnn/qnn_bridge.h"

namespace genai::backends::qnn {

inline constexpr std::string_view kQnnDelegateId = "QnnBackend";
inline constexpr uint32_t kQnnPayloadMagic = 0x5678ABCD;
inline constexpr size_t kQnnPayloadHeaderBytes = 256;  // QNN_CTX_BIN_ALIGNMENT

struct QnnPayloadHeader {
  uint32_t magic = 0;
  int64_t signature = 0;
  uint64_t binary_size = 0;
};

// Header + binary. The signature (upstream: a build-time clock) is the first 8 bytes of the
// binary's SHA-256, so identical binaries give identical payloads.
std::vector<uint8_t> make_qnn_payload(std::span<const uint8_t> context_binary);

// The header's fields, without judging them (for inspect); nullopt when shorter than a header.
std::optional<QnnPayloadHeader> read_qnn_payload_header(std::span<const uint8_t> payload);

// The context binary inside `payload`; InputError naming `label` when the magic or the size is wrong.
std::span<const uint8_t> qnn_context_binary(std::span<const uint8_t> payload, std::string_view label);

// The target a context binary records among its strings ("soc_type=SM8650;arch=75").
struct QnnBinaryTarget {
  std::string soc;  // e.g. "SM8650"
  int arch = 0;     // e.g. 75
};
std::optional<QnnBinaryTarget> qnn_binary_target(std::span<const uint8_t> context_binary);

// InputError naming both sides unless the binary records `soc` and `arch` (Failure when it
// records no target at all: the QNN compiler's output is then not what this code knows).
void check_qnn_binary_target(std::span<const uint8_t> context_binary, std::string_view soc, int arch,
                             std::string_view what);

// One method's graph in a context: what the runtime needs to bind it.
struct QnnMethodIo {
  std::string name;  // the method's tensor (tokens, k_cache_0, logits, ...)
  QnnTensorInfo qnn;  // the QNN graph's tensor (name, dtype, shape, quantization)
};
struct QnnMethodGraph {
  std::string method;
  std::string graph;            // the QNN graph's name in the context
  bool weight_shared = false;   // the context shares weights across graphs (no x86 simulator)
  std::string target_soc;       // what the binary records
  int target_arch = 0;
  std::string qnn_sdk;          // the QNN SDK that built it
  std::vector<QnnMethodIo> inputs, outputs;  // in the QNN graph's order (= the method's signature)
};

// Named data key of a method's graph record: "qnn_graph_<method>", or for layer shard k of a
// sharded method (--num_sharding) "qnn_graph_<method>_shard<k>".
std::string qnn_method_graph_key(std::string_view method, int64_t shard = -1);
std::string qnn_method_graph_json(const QnnMethodGraph& graph);
// InputError naming `label` when the record does not parse.
QnnMethodGraph parse_qnn_method_graph(std::span<const uint8_t> json_bytes, std::string_view label);

}  // namespace genai::backends::qnn
