// The operators of the graph IR. Each op has one result; its type (dtype + static shape) follows
// from the operand types and the attributes by infer_op_type, which both the builder and the
// verifier use, so a graph can never hold a type the op would not produce.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace genai::graph {

enum class OpKind : uint8_t {
  kGather,     // (table [R, D], indices int32 [...]) -> [..., D]
  kRmsNorm,    // (x [..., D], weight [D]) attrs eps -> x-shaped
  kLinear,     // (x [..., in], weight [out, in] (, bias [out])) -> [..., out]
  kAdd,        // numpy-broadcast a + b
  kMul,        // numpy-broadcast a * b
  kSilu,       // x * sigmoid(x)
  kRope,       // (x [B, H, S, hd], cos [B, S, hd], sin [B, S, hd]) -> x*cos + rotate_half(x)*sin
  kMatMul,     // (a [..., m, k], b [..., k, n]) -> [..., m, n], batch dims broadcast
  kSoftmax,    // softmax over the last axis
  kConcat,     // (xs...) attrs axis
  kReshape,    // attrs shape
  kTranspose,  // attrs perm
  kSlice,      // attrs axis, start, end (step 1)
  kGeluTanh,   // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Gemma's GeGLU)
  kTanh,       // tanh(x) (Gemma 2's soft-capping)
  kLayerNorm,  // (x [..., D], weight [D], bias [D]) attrs eps -> (x - mean) / sqrt(var + eps) * weight + bias
  kGelu,       // x/2 (1 + erf(x / sqrt(2))) (the exact GELU: InternVL's vision tower and projector)
};

std::string_view op_kind_name(OpKind k);  // "gather", "rms_norm", ...
bool op_kind_from_name(std::string_view name, OpKind* out);

using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>>;
using Attrs = std::map<std::string, Attr>;
// An int-list attribute value (shapes, permutations) spelled inline: ints({1, 2, 0}).
inline std::vector<int64_t> ints(std::initializer_list<int64_t> v) { return std::vector<int64_t>(v); }
// int32 [1, n] holding 0..n-1: the index operand of a Gather that reads every row of a table (a
// learned table read that way is a quantized weight and its rows an activation).
Tensor index_range(int64_t n);

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};
std::string type_to_string(const TensorType& t);  // "float32[1, 4, 64]"

// Result type of `kind` applied to `operands` with `attrs`. On a mismatch returns nullopt and
// sets *why to a sentence naming the problem.
std::optional<TensorType> infer_op_type(OpKind kind, const std::vector<TensorType>& operands, const Attrs& attrs,
                                        std::string* why);

// Attribute access; a missing or mistyped attribute throws Failure naming it.
int64_t attr_int(const Attrs& attrs, const std::string& key);
double attr_float(const Attrs& attrs, const std::string& key);
const std::vector<int64_t>& attr_ints(const Attrs& attrs, const std::string& key);
std::string attr_to_string(const Attr& a);

// Output shape of numpy broadcasting, nullopt when the shapes do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace genai::graph
