#include "graph/op.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace genai::graph {
namespace {

constexpr std::array<std::pair<OpKind, std::string_view>, 17> kNames{{
    {OpKind::kGather, "gather"},
    {OpKind::kRmsNorm, "rms_norm"},
    {OpKind::kLinear, "linear"},
    {OpKind::kAdd, "add"},
    {OpKind::kMul, "mul"},
    {OpKind::kSilu, "silu"},
    {OpKind::kRope, "rope"},
    {OpKind::kMatMul, "matmul"},
    {OpKind::kSoftmax, "softmax"},
    {OpKind::kConcat, "concat"},
    {OpKind::kReshape, "reshape"},
    {OpKind::kTranspose, "transpose"},
    {OpKind::kSlice, "slice"},
    {OpKind::kGeluTanh, "gelu_tanh"},
    {OpKind::kGelu, "gelu"},
    {OpKind::kTanh, "tanh"},
    {OpKind::kLayerNorm, "layer_norm"},
}};

const Attr* find_attr(const Attrs& attrs, const std::string& key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

bool is_float(const TensorType& t) { return t.dtype == DType::kF32; }

std::optional<TensorType> fail(std::string* why, std::string message) {
  if (why) *why = std::move(message);
  return std::nullopt;
}

// Normalises a possibly negative axis; -1 when out of range.
int64_t norm_axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < 0) axis += r;
  return (axis < 0 || axis >= r) ? -1 : axis;
}

}  // namespace

std::string_view op_kind_name(OpKind k) {
  for (const auto& [kind, name] : kNames)
    if (kind == k) return name;
  return "unknown";
}

bool op_kind_from_name(std::string_view name, OpKind* out) {
  for (const auto& [kind, n] : kNames)
    if (n == name) {
      *out = kind;
      return true;
    }
  return false;
}

std::string type_to_string(const TensorType& t) {
  return fmt::format("{}{}", dtype_name(t.dtype), shape_to_string(t.shape));
}

int64_t attr_int(const Attrs& attrs, const std::string& key) {
  const Attr* a = find_attr(attrs, key);
  if (!a || !std::holds_alternative<int64_t>(*a)) throw_failure("internal: op attribute '{}' (int) missing", key);
  return std::get<int64_t>(*a);
}

double attr_float(const Attrs& attrs, const std::string& key) {
  const Attr* a = find_attr(attrs, key);
  if (!a || !std::holds_alternative<double>(*a)) throw_failure("internal: op attribute '{}' (float) missing", key);
  return std::get<double>(*a);
}

Tensor index_range(int64_t n) {
  Tensor ids = Tensor::zeros(DType::kI32, {1, n});
  for (int64_t i = 0; i < n; ++i) ids.mutable_data<int32_t>()[i] = static_cast<int32_t>(i);
  return ids;
}

const std::vector<int64_t>& attr_ints(const Attrs& attrs, const std::string& key) {
  const Attr* a = find_attr(attrs, key);
  if (!a || !std::holds_alternative<std::vector<int64_t>>(*a))
    throw_failure("internal: op attribute '{}' (int list) missing", key);
  return std::get<std::vector<int64_t>>(*a);
}

std::string attr_to_string(const Attr& a) {
  struct Visitor {
    std::string operator()(int64_t v) const { return fmt::format("{}", v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(const std::vector<int64_t>& v) const { return fmt::format("[{}]", fmt::join(v, ", ")); }
  };
  return std::visit(Visitor{}, a);
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<TensorType> infer_op_type(OpKind kind, const std::vector<TensorType>& in, const Attrs& attrs,
                                        std::string* why) {
  auto arity = [&](size_t lo, size_t hi) { return in.size() >= lo && in.size() <= hi; };
  auto all_float = [&]() {
    return std::all_of(in.begin(), in.end(), [](const TensorType& t) { return is_float(t); });
  };
  const std::string kname(op_kind_name(kind));
  try {
    switch (kind) {
      case OpKind::kGather: {
        if (!arity(2, 2)) return fail(why, "gather takes (table, indices)");
        if (!is_float(in[0]) || in[0].shape.size() != 2) return fail(why, "gather table must be float32 rank 2");
        if (in[1].dtype != DType::kI32) return fail(why, "gather indices must be int32");
        Shape s = in[1].shape;
        s.push_back(in[0].shape[1]);
        return TensorType{DType::kF32, s};
      }
      case OpKind::kRmsNorm: {
        if (!arity(2, 2) || !all_float()) return fail(why, "rms_norm takes float32 (x, weight)");
        if (in[0].shape.empty() || in[1].shape != Shape{in[0].shape.back()})
          return fail(why, fmt::format("rms_norm weight {} does not match the last axis of {}", shape_to_string(in[1].shape),
                                       shape_to_string(in[0].shape)));
        if (!(attr_float(attrs, "eps") > 0)) return fail(why, "rms_norm eps must be positive");
        return in[0];
      }
      case OpKind::kLayerNorm: {
        if (!arity(3, 3) || !all_float()) return fail(why, "layer_norm takes float32 (x, weight, bias)");
        if (in[0].shape.empty() || in[1].shape != Shape{in[0].shape.back()} || in[2].shape != in[1].shape)
          return fail(why, fmt::format("layer_norm weight {} / bias {} do not match the last axis of {}",
                                       shape_to_string(in[1].shape), shape_to_string(in[2].shape),
                                       shape_to_string(in[0].shape)));
        if (!(attr_float(attrs, "eps") > 0)) return fail(why, "layer_norm eps must be positive");
        return in[0];
      }
      case OpKind::kLinear: {
        if (!arity(2, 3) || !all_float()) return fail(why, "linear takes float32 (x, weight[, bias])");
        const Shape& x = in[0].shape;
        const Shape& w = in[1].shape;
        if (x.empty() || w.size() != 2 || w[1] != x.back())
          return fail(why, fmt::format("linear weight {} does not match input {}", shape_to_string(w), shape_to_string(x)));
        if (in.size() == 3 && in[2].shape != Shape{w[0]})
          return fail(why, fmt::format("linear bias {} does not match {} outputs", shape_to_string(in[2].shape), w[0]));
        Shape s = x;
        s.back() = w[0];
        return TensorType{DType::kF32, s};
      }
      case OpKind::kAdd:
      case OpKind::kMul: {
        if (!arity(2, 2) || !all_float()) return fail(why, kname + " takes two float32 operands");
        auto s = broadcast_shapes(in[0].shape, in[1].shape);
        if (!s)
          return fail(why, fmt::format("{} operands {} and {} do not broadcast", kname, shape_to_string(in[0].shape),
                                       shape_to_string(in[1].shape)));
        return TensorType{DType::kF32, *s};
      }
      case OpKind::kSilu:
      case OpKind::kGeluTanh:
      case OpKind::kGelu:
      case OpKind::kTanh:
      case OpKind::kSoftmax: {
        if (!arity(1, 1) || !all_float() || in[0].shape.empty()) return fail(why, kname + " takes one float32 tensor");
        return in[0];
      }
      case OpKind::kRope: {
        if (!arity(3, 3) || !all_float()) return fail(why, "rope takes float32 (x, cos, sin)");
        const Shape& x = in[0].shape;
        if (x.size() != 4 || x[3] % 2 != 0) return fail(why, "rope input must be [B, H, S, head_dim] with even head_dim");
        const Shape want{x[0], x[2], x[3]};
        if (in[1].shape != want || in[2].shape != want)
          return fail(why, fmt::format("rope cos/sin must be {}", shape_to_string(want)));
        return in[0];
      }
      case OpKind::kMatMul: {
        if (!arity(2, 2) || !all_float()) return fail(why, "matmul takes two float32 operands");
        const Shape& a = in[0].shape;
        const Shape& b = in[1].shape;
        if (a.size() < 2 || b.size() < 2) return fail(why, "matmul operands need rank >= 2");
        if (a[a.size() - 1] != b[b.size() - 2])
          return fail(why, fmt::format("matmul inner dims differ: {} x {}", shape_to_string(a), shape_to_string(b)));
        auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
        if (!batch) return fail(why, "matmul batch dims do not broadcast");
        batch->push_back(a[a.size() - 2]);
        batch->push_back(b[b.size() - 1]);
        return TensorType{DType::kF32, *batch};
      }
      case OpKind::kConcat: {
        if (in.empty()) return fail(why, "concat needs operands");
        const int64_t axis = norm_axis(attr_int(attrs, "axis"), in[0].shape.size());
        if (axis < 0) return fail(why, "concat axis out of range");
        Shape s = in[0].shape;
        s[axis] = 0;
        for (const auto& t : in) {
          if (t.dtype != in[0].dtype || t.shape.size() != s.size()) return fail(why, "concat operands differ in dtype or rank");
          for (size_t d = 0; d < s.size(); ++d)
            if (static_cast<int64_t>(d) != axis && t.shape[d] != s[d])
              return fail(why, fmt::format("concat operand {} differs off axis {}", shape_to_string(t.shape), axis));
          s[axis] += t.shape[axis];
        }
        return TensorType{in[0].dtype, s};
      }
      case OpKind::kReshape: {
        if (!arity(1, 1)) return fail(why, "reshape takes one operand");
        const auto& s = attr_ints(attrs, "shape");
        if (std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; }) || shape_numel(s) != shape_numel(in[0].shape))
          return fail(why, fmt::format("reshape {} -> {} changes the element count", shape_to_string(in[0].shape),
                                       shape_to_string(s)));
        return TensorType{in[0].dtype, s};
      }
      case OpKind::kTranspose: {
        if (!arity(1, 1)) return fail(why, "transpose takes one operand");
        const auto& perm = attr_ints(attrs, "perm");
        const Shape& x = in[0].shape;
        if (perm.size() != x.size()) return fail(why, "transpose perm rank differs from the operand rank");
        std::vector<bool> seen(x.size(), false);
        Shape s(x.size());
        for (size_t i = 0; i < perm.size(); ++i) {
          const int64_t p = perm[i];
          if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[p]) return fail(why, "transpose perm is not a permutation");
          seen[p] = true;
          s[i] = x[p];
        }
        return TensorType{in[0].dtype, s};
      }
      case OpKind::kSlice: {
        if (!arity(1, 1)) return fail(why, "slice takes one operand");
        const int64_t axis = norm_axis(attr_int(attrs, "axis"), in[0].shape.size());
        if (axis < 0) return fail(why, "slice axis out of range");
        const int64_t start = attr_int(attrs, "start"), end = attr_int(attrs, "end");
        if (start < 0 || end < start || end > in[0].shape[axis])
          return fail(why, fmt::format("slice [{}, {}) outside axis {} of {}", start, end, axis, shape_to_string(in[0].shape)));
        Shape s = in[0].shape;
        s[axis] = end - start;
        return TensorType{in[0].dtype, s};
      }
    }
  } catch (const Failure& e) {
    return fail(why, e.what());
  }
  return fail(why, "unknown op kind");
}

}  // namespace genai::graph
