// The executable form of one payload method: every tensor resolved to a location (arena offset,
// caller buffer, or a pointer into named data) and every op to a Step holding all it needs, so
// execute() does no allocation, lookup or string work. Built and verified by decode_method
// (decode.cpp), run by run_method (execute.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/payload/payload_format.h"
#include "kernels/packed_linear.h"
#include "kernels/quantize.h"
#include "kernels/quantized_matmul.h"
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

enum class StepKind : uint8_t {
  kNone,           // a view: nothing to do
  kCopy,           // reshape / transpose into a different location: bytes copied
  kTranspose,      // integer (or float) element moves
  kConcat,
  kSlice,
  kGatherRows,     // table rows copied as they are
  kGatherConvert,  // table rows decoded to float, then quantized / rounded
  kLinearPacked,   // kernels::linear_q
  kLinearF16,      // kernels::linear_f16
  kMatMulQ,
  kMatMulF,
  kMatMulSplit,    // one-row integer matmul whose b is concat(cache, new), read in place
  kRmsNorm,
  kAdd,
  kMul,
  kSilu,
  kRope,
  kSoftmax,
};

// One part of a split matmul operand b: rows [p0, p0 + rows) of the K axis and columns
// [col0, col0 + cols) of N, stored row-major with `stride` elements per row, `per_batch` elements
// per b batch entry.
struct Segment {
  Loc loc;
  int64_t per_batch = 0, stride = 0, p0 = 0, rows = 0, col0 = 0, cols = 0;
};

// Work space of a split matmul per batch entry, in 8-byte words: the row's code differences [K]
// and the column sums [N], as doubles.
inline int64_t split_work_words(int64_t K, int64_t N) { return K + N; }

enum class Broadcast : uint8_t { kSame, kScalarA, kScalarB, kRepeatA, kRepeatB, kGeneral };

struct Step {
  StepKind kind = StepKind::kNone;
  std::string name;  // the op's result (messages)
  std::vector<int32_t> input_ids;  // payload tensor indices (fusion analysis at init)
  int32_t output_id = -1;
  Operand out;
  std::array<Operand, 3> in{};
  int n_in = 0;
  uint64_t scratch = 0;  // arena offset of float temporaries
  uint64_t scratch_bytes = 0;
  bool quantized = false;  // quantized program (else float16: round results)

  // gather
  int64_t table_rows = 0, width = 0;
  fb::DataFormat table_format = fb::DataFormat::Plain;
  std::string index_name;
  // linear
  int64_t rows = 0, in_features = 0, out_features = 0, block_size = 0;
  kernels::PackedLinear packed;
  const void* weights = nullptr;      // int16 / float16 weights, int8 / int16 tables
  const float* scales = nullptr;      // per row (and block)
  const float* bias = nullptr;
  // matmul
  int64_t M = 0, K = 0, N = 0;
  std::vector<kernels::MatmulBatch> batches;
  // kMatMulSplit: b's two parts, and split_work_words(K, N) words of work space per batch entry.
  std::array<Segment, 2> segments{};
  mutable std::vector<int64_t> work;
  // element-wise
  Broadcast broadcast = Broadcast::kSame;
  int64_t outer = 0, inner = 0;
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{}, stride_a{}, stride_b{};
  float eps = 0.0f;
  // rope: x [B, H, S, D]
  int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
  // concat / slice / transpose (bytes)
  std::vector<uint64_t> chunks;  // concat: bytes per input per outer step
  std::vector<Loc> sources;      // concat: every operand
  uint64_t out_row = 0, in_row = 0, start = 0, length = 0;
  uint64_t esize = 0;
  int axis = 0;  // concat
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

// Verifies `payload` (flatbuffers Verifier, identifier, version, every index, offset, size and
// named-data key) and builds the plan. InputError naming `label` on anything malformed.
std::unique_ptr<MethodPlan> decode_method(std::span<const uint8_t> payload, const runtime::NamedDataLookup& named_data,
                                          std::string_view label);

// Runs the plan once. `bases` has 2 + inputs + outputs entries (entry 0 unused, 1 = arena).
void run_method(const MethodPlan& plan, std::span<uint8_t* const> bases);

// The same, adding each step's wall time to seconds[kind] (GENAI_BACKEND_PROFILE=1).
inline constexpr size_t kStepKinds = static_cast<size_t>(StepKind::kSoftmax) + 1;  // kSoftmax is last
void run_method_profiled(const MethodPlan& plan, std::span<uint8_t* const> bases, std::array<double, kStepKinds>& seconds);
std::string_view step_kind_name(StepKind kind);

}  // namespace genai::backends::exec
