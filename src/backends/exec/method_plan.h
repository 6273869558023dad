// The executable form of one payload method: every tensor resolved to a location (arena offset,
// caller buffer, or a pointer into named data) and every op that does work to a Step holding its
// operands and the parameters of its kind, so execute() does no allocation, lookup or string
// work. Views (reshapes, transposes that leave the bytes in place) have no step. Built and
// verified by decode_method (decode.cpp), run by run_method (execute.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "backends/payload/payload_format.h"
#include "kernels/packed_linear.h"
#include "kernels/quantize.h"
#include "kernels/quantized_matmul.h"
#include "kernels/split_matmul.h"
#include "pte/blob.h"
#include "runtime/backend_executor.h"

namespace genai::backends::exec {

inline constexpr int kMaxRank = 8;

// Where bytes are at execution: base 0 = absolute address in `offset` (named data), 1 = the
// scratch arena, 2 + i = caller input i, 2 + n_inputs + j = caller output j.
struct Loc {
  uint32_t base = 0;
  uint64_t offset = 0;
  bool operator==(const Loc&) const = default;
};

struct Operand {
  Loc loc;
  fb::ElementType type = fb::ElementType::F32;
  kernels::QParams q;
  int64_t n = 0;  // elements
};

// What a step runs; each kind has its parameter struct below (the alternative of StepParams with
// the same position, checked by run_method's table).
enum class StepKind : uint8_t {
  kCopy,           // reshape / transpose into a different location: bytes copied
  kTranspose,      // element moves
  kConcat,
  kSlice,
  kGatherRows,     // table rows copied as they are
  kGatherConvert,  // table rows decoded to float, then quantized / rounded
  kLinearPacked,   // kernels::linear_q
  kLinearF16,      // kernels::linear_f16
  kMatMulQ,        // kernels::matmul_q
  kMatMulF,        // kernels::matmul_f32
  kMatMulConcat,   // kernels::split_matmul_q: b = concat(cache, new), read in place
  kRmsNorm,
  kAdd,
  kMul,
  kSilu,
  kGeluTanh,
  kGelu,
  kTanh,
  kLayerNorm,
  kRope,
  kSoftmax,
};
inline constexpr size_t kStepKinds = static_cast<size_t>(StepKind::kSoftmax) + 1;  // kSoftmax is last

struct CopyParams {
  uint64_t bytes = 0;
};
// Output element i (row-major over dims) reads the operand at Σ idx[d]·strides[d].
struct TransposeParams {
  int rank = 0;
  uint64_t esize = 0;
  std::array<int64_t, kMaxRank> dims{}, strides{};
};
struct ConcatParams {
  int64_t outer = 0;               // product of the axes before the concat axis
  uint64_t out_row = 0;            // result bytes per outer step
  std::vector<uint64_t> chunks;    // bytes per operand per outer step
  std::vector<Loc> sources;        // every operand
};
struct SliceParams {
  int64_t outer = 0;
  uint64_t in_row = 0, start = 0, length = 0;  // bytes per outer step: operand row, start, result row
};
struct GatherParams {
  int64_t table_rows = 0, width = 0;
  uint64_t esize = 0;  // result element size
  std::string index_name;
  fb::DataFormat format = fb::DataFormat::Plain;
  fb::ElementType table_type = fb::ElementType::F32;
  const void* table = nullptr;
  const float* scales = nullptr;  // scaled formats: per row (and block)
  int64_t block_size = 0;
};
struct LinearPackedParams {
  int64_t rows = 0;
  kernels::PackedLinear weights;
  const float* bias = nullptr;
};
struct LinearF16Params {
  int64_t rows = 0, in_features = 0, out_features = 0;
  const uint16_t* weights = nullptr;
  const float* bias = nullptr;
};
struct MatMulParams {
  int64_t M = 0, K = 0, N = 0;
  std::vector<kernels::MatmulBatch> batches;
};
// b's two parts are operands 1 and 2; their segments get their data pointers at run time.
struct MatMulConcatParams {
  int64_t K = 0, N = 0;
  std::vector<kernels::MatmulBatch> batches;
  std::array<kernels::MatmulSegment, 2> segments{};
  mutable std::vector<double> work;  // batches.size() · split_matmul_work(K, N)
};
// rms_norm, layer_norm, silu, gelu_tanh, tanh, softmax: `rows` rows of `width` elements.
struct RowsParams {
  int64_t rows = 0, width = 0;
  float eps = 0.0f;  // rms_norm, layer_norm
};
enum class Broadcast : uint8_t { kSame, kScalarA, kScalarB, kRepeatA, kRepeatB, kGeneral };
struct BinaryParams {
  Broadcast broadcast = Broadcast::kSame;
  int64_t outer = 0, inner = 0;  // kRepeatA/B: the smaller operand's elements repeat `outer` times
  int rank = 0;                  // kGeneral: the result's dims and each operand's broadcast strides
  std::array<int64_t, kMaxRank> dims{}, stride_a{}, stride_b{};
};
// x [B, H, S, D], cos/sin [B, S, D].
struct RopeParams {
  int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
};

using StepParams = std::variant<CopyParams, TransposeParams, ConcatParams, SliceParams, GatherParams, LinearPackedParams,
                                LinearF16Params, MatMulParams, MatMulConcatParams, RowsParams, BinaryParams, RopeParams>;

struct Step {
  StepKind kind = StepKind::kCopy;
  std::string name;  // the op's result (messages)
  Operand out;
  std::array<Operand, 3> in{};
  int n_in = 0;
  uint64_t scratch = 0;    // arena offset of float temporaries
  bool quantized = false;  // quantized program (else float16: round results)
  StepParams params;
};

struct IoBinding {
  runtime::IoDesc desc;
  uint64_t bytes = 0;
  bool copy = false;  // copied to/from `loc` in the arena
  Loc loc;
};

struct MethodPlan {
  std::string label;
  std::string name;
  bool quantized = true;
  uint64_t planned_bytes = 0;
  uint64_t lower_bound_bytes = 0;
  std::vector<IoBinding> inputs, outputs;
  std::vector<runtime::IoDesc> input_descs, output_descs;
  std::vector<Step> steps;
  // Named data that had to be copied for alignment (normally empty: data is used in place).
  std::vector<std::unique_ptr<uint8_t[]>> owned;
  std::vector<pte::Blob> keepalive;
};

// Verifies all of `payload` (flatbuffers Verifier, identifier, version, every index, offset, size
// and named-data key, every op) and only then returns the plan. InputError naming `label` on
// anything malformed.
std::unique_ptr<MethodPlan> decode_method(std::span<const uint8_t> payload, const runtime::NamedDataLookup& named_data,
                                          std::string_view label);

// Runs the plan once. `bases` has 2 + inputs + outputs entries (entry 0 unused, 1 = arena).
void run_method(const MethodPlan& plan, std::span<uint8_t* const> bases);

// The same, adding each step's wall time to seconds[kind] (--backend_profile).
void run_method_profiled(const MethodPlan& plan, std::span<uint8_t* const> bases, std::array<double, kStepKinds>& seconds);
std::string_view step_kind_name(StepKind kind);

}  // namespace genai::backends::exec
