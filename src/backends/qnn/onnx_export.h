// One quantized graph as an ONNX QDQ model (what ONNX Runtime's QNN execution provider compiles
// into an HTP context binary). The model carries the bundle's encodings as they are: every float
// value of the graph is an integer tensor on its encoding, each op is DequantizeLinear on its
// operands -> the float op(s) -> QuantizeLinear on the result's encoding; linear weights are the
// bundle's integer weights (int8/int4/int16, per channel or per block). The model's inputs and
// outputs are the quantized I/O tensors themselves, named as upstream names graph tensors
// (input_<i>_<name>, output_<i>_<name>, <i> the position in the graph's signature).
// docs/compile.md lists the op mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "pipeline/graph_bundle.h"

namespace genai::backends::qnn {

// ONNX Runtime reads a model from one protobuf message, at most 2 GiB - 1 bytes.
inline constexpr uint64_t kOnnxMaxModelBytes = (uint64_t{1} << 31) - 1;

// The file beside model.onnx that holds the initializers kept out of the model, as its tensors'
// external_data locations name it.
inline constexpr std::string_view kOnnxExternalDataFile = "initializers.bin";

struct OnnxExportOptions {
  // Float constants the HTP cannot take as float (rms_norm weights, linear biases, non-scalar
  // constant operands) become integer initializers: scalars exactly (q = 1 or -1 on a scale of
  // |c|), rms_norm weights and other tensors uint16 over their range, biases int32 on the
  // linear's accumulator scale. false keeps them float32 (then the model is the QDQ reference's
  // arithmetic exactly, for checks on a CPU).
  bool quantize_constants = true;
  // Ops that ONNX spells as several nodes (rope, silu) quantize their intermediate tensors too,
  // on encodings derived from the operand's (so every node is a DQ -> op -> Q unit, which the HTP
  // runs in integer); false leaves those intermediates float.
  bool quantize_intermediates = true;
  // rms_norm results are floored onto their encoding by explicit Div/Floor/Mul nodes before the
  // QuantizeLinear (the reference's rounding of them, kernels::requantize_floor). The HTP floors
  // them by itself, so this is for checks on a CPU only.
  bool floor_rms_norm = false;
  // Appended to every input and output name (input_<i>_<name><suffix>): the graphs of one shared
  // QNN context need I/O names that differ across the graphs.
  std::string io_name_suffix;
  // The target's HTP takes an elementwise op only with one integer type on its operands and
  // result (target::qnn_elementwise_needs_one_type): mixed node units get their widest type
  // (backends/qnn/onnx_one_type_elementwise.h). false leaves them mixed.
  bool elementwise_one_type = false;
  // When the initializers' bytes exceed this, the larger ones (kOnnxExternalMinBytes and up) go to
  // OnnxModel::external_data instead of the model, which then stays far below the 2 GiB a
  // protobuf message can hold. Half that limit: serializing nests each message in its parent's
  // buffer, so an inline model's bytes are held two or three times meanwhile. Tests set 0 to take
  // that path on a small model.
  uint64_t external_data_above = kOnnxMaxModelBytes / 2;
};

// Initializers below this stay in the model even when the others go to external data: scales,
// zero points and shapes, which ONNX Runtime reads while it builds the graph.
inline constexpr uint64_t kOnnxExternalMinBytes = 1024;

// One graph input or output of the exported model, in signature order.
struct OnnxIo {
  std::string onnx_name;   // input_<i>_<name> / output_<i>_<name>
  std::string graph_name;  // the graph's own name (tokens, k_cache_0, logits, ...)
  DType dtype = DType::kU16;  // element type of the tensor the model takes / gives (already quantized)
  std::vector<int64_t> shape;
};

struct OnnxModel {
  std::string bytes;  // serialized onnx.ModelProto; identical bytes for identical bundles
  // The content of kOnnxExternalDataFile, which must sit beside the model (empty: every
  // initializer is in `bytes`). Each tensor starts at a multiple of 64 bytes.
  std::string external_data;
  std::vector<OnnxIo> inputs, outputs;
};

inline constexpr int64_t kOnnxOpset = 23;  // RMSNormalization; Q/DQ with uint16, int4, block_size

// Failure naming the tensor for a bundle this exporter cannot express; InputError when the
// bundle is not quantized (fp16 / GPU float path).
OnnxModel export_onnx_qdq(const pipeline::GraphBundle& bundle, const OnnxExportOptions& options = {});

// "input_<index>_<name>" / "output_<index>_<name>".
std::string onnx_input_name(size_t index, std::string_view name);
std::string onnx_output_name(size_t index, std::string_view name);

}  // namespace genai::backends::qnn
