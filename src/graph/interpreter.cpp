#include "graph/interpreter.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/broadcast.h"
#include "kernels/packed_linear.h"
#include "kernels/quantize.h"
#include "kernels/scalar_kernels.h"

namespace genai::graph {
namespace {

// Calls fn(out_index, a_offset, b_offset) for every element of `out` in row-major order.
template <typename Fn>
void for_each_broadcast(const Shape& out, const Shape& a, const Shape& b, Fn fn) {
  const size_t rank = out.size();
  const auto sa = kernels::broadcast_strides(a, rank), sb = kernels::broadcast_strides(b, rank);
  kernels::for_each_broadcast(rank, out.data(), sa.data(), sb.data(), fn);
}


Tensor run_gather(const Value& result, const Tensor& table, const Tensor& idx, const Value& idx_value) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  const int64_t rows = table.dim(0), width = table.dim(1);
  const int32_t* ids = idx.data<int32_t>();
  float* dst = out.mutable_data<float>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows)
      throw_input_error("graph input {}: value {} at element {} is outside [0, {})", idx_value.name, ids[i], i, rows);
    widen_to_f32(table, ids[i] * width, width, dst + i * width);  // 16-bit tables are read as stored
  }
  return out;
}

// The scalar kernels are the definition of these ops' results: every program computes them so.
Tensor run_rms_norm(const Value& result, const Tensor& x, const Tensor& w, double eps) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  const int64_t d = w.numel(), rows = x.numel() / d;
  kernels::scalar::rms_norm(x.data<float>(), rows, d, w.data<float>(), static_cast<float>(eps), out.mutable_data<float>());
  return out;
}

Tensor run_layer_norm(const Value& result, const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  const int64_t d = w.numel(), rows = x.numel() / d;
  kernels::scalar::layer_norm(x.data<float>(), rows, d, w.data<float>(), b.data<float>(), static_cast<float>(eps),
                              out.mutable_data<float>());
  return out;
}

Tensor run_linear(const Value& result, const Tensor& x, const Tensor& w, const Tensor* bias) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  const int64_t n_out = w.dim(0), n_in = w.dim(1), rows = x.numel() / n_in;
  const float* b = bias ? bias->data<float>() : nullptr;
  if (w.dtype() == DType::kF32) {
    kernels::linear_f32(x.data<float>(), rows, w.data<float>(), n_out, n_in, b, out.mutable_data<float>());
    return out;
  }
  // A 16-bit weight, a block of output channels at a time: converted exactly into a small float32
  // buffer, then the same kernel. Each output is one channel's dot product with one row, so the
  // blocks give linear_f32's bits for the whole weight, without its float32 copy ever existing.
  const int64_t block = std::min(n_out, std::max<int64_t>(16, (int64_t{1} << 20) / std::max<int64_t>(n_in, 1)));  // 4 MB
  std::vector<float> wf(static_cast<size_t>(block * n_in)), yf(static_cast<size_t>(rows * block));
  float* y = out.mutable_data<float>();
  for (int64_t c0 = 0; c0 < n_out; c0 += block) {
    const int64_t nc = std::min(block, n_out - c0);
    ThreadPool::global().parallel_for(
        nc, [&](int64_t c, int64_t e) { widen_to_f32(w, (c0 + c) * n_in, (e - c) * n_in, wf.data() + c * n_in); }, 8);
    kernels::linear_f32(x.data<float>(), rows, wf.data(), nc, n_in, b ? b + c0 : nullptr, yf.data());
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(y + r * n_out + c0, yf.data() + r * nc, static_cast<size_t>(nc) * sizeof(float));
  }
  return out;
}

// kernel: the scalar kernel for equal shapes; f: the same operation on one broadcast pair.
template <typename F>
Tensor run_binary(const Value& result, const Tensor& a, const Tensor& b,
                  void (*kernel)(const float*, const float*, int64_t, float*), F f) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  float* dst = out.mutable_data<float>();
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  if (a.shape() == b.shape()) {
    kernel(pa, pb, out.numel(), dst);
  } else {
    for_each_broadcast(result.type.shape, a.shape(), b.shape(),
                       [&](int64_t i, int64_t oa, int64_t ob) { dst[i] = f(pa[oa], pb[ob]); });
  }
  return out;
}

// A fresh float32 copy of x for the in-place kernels.
Tensor copy_of(const Value& result, const Tensor& x) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  if (x.numel() > 0)
    std::memcpy(out.mutable_data<float>(), x.data<float>(), static_cast<size_t>(x.numel()) * sizeof(float));
  return out;
}

Tensor run_activation(const Value& result, const Tensor& x, void (*kernel)(float*, int64_t)) {
  Tensor out = copy_of(result, x);
  kernel(out.mutable_data<float>(), out.numel());
  return out;
}

// cos, sin: [B, S, D], shared by the H heads of each batch entry.
Tensor run_rope(const Value& result, const Tensor& x, const Tensor& cos, const Tensor& sin) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  const int64_t B = x.dim(0), H = x.dim(1), S = x.dim(2), D = x.dim(3);
  for (int64_t b = 0; b < B; ++b)
    kernels::scalar::rope(x.data<float>() + b * H * S * D, H, S, D, cos.data<float>() + b * S * D,
                          sin.data<float>() + b * S * D, out.mutable_data<float>() + b * H * S * D);
  return out;
}

Tensor run_matmul(const Value& result, const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::zeros(DType::kF32, result.type.shape);
  const Shape& os = result.type.shape;
  const int64_t M = a.dim(a.rank() - 2), K = a.dim(a.rank() - 1), N = b.dim(b.rank() - 1);
  const Shape batch(os.begin(), os.end() - 2);
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  std::vector<kernels::MatmulBatch> batches;
  for_each_broadcast(batch, a_batch, b_batch, [&](int64_t i, int64_t oa, int64_t ob) {
    batches.push_back({oa * M * K, ob * K * N, i * M * N});
  });
  kernels::scalar::matmul_f32(a.data<float>(), b.data<float>(), M, K, N, batches, out.mutable_data<float>());
  return out;
}

Tensor run_softmax(const Value& result, const Tensor& x) {
  Tensor out = copy_of(result, x);
  const int64_t d = x.shape().back();
  kernels::scalar::softmax(out.mutable_data<float>(), x.numel() / d, d);
  return out;
}

int64_t positive_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

Tensor run_concat(const Value& result, const std::vector<const Tensor*>& xs, int64_t axis) {
  Tensor out = Tensor::zeros(result.type.dtype, result.type.shape);
  const Shape& os = result.type.shape;
  axis = positive_axis(axis, os.size());
  const size_t esize = dtype_size(result.type.dtype);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= os[d];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < os.size(); ++d) inner *= os[d];
  uint8_t* dst = static_cast<uint8_t*>(out.mutable_raw());
  const size_t out_row = static_cast<size_t>(os[axis] * inner) * esize;
  for (int64_t o = 0; o < outer; ++o) {
    size_t at = 0;
    for (const Tensor* x : xs) {
      const size_t chunk = static_cast<size_t>(x->dim(axis) * inner) * esize;
      std::memcpy(dst + o * out_row + at, static_cast<const uint8_t*>(x->raw()) + o * chunk, chunk);
      at += chunk;
    }
  }
  return out;
}

Tensor run_transpose(const Value& result, const Tensor& x, const std::vector<int64_t>& perm) {
  Tensor out = Tensor::zeros(result.type.dtype, result.type.shape);
  const Shape& os = result.type.shape;
  const size_t rank = os.size(), esize = dtype_size(result.type.dtype);
  constexpr size_t kMaxRank = 8;
  if (rank == 0 || rank > kMaxRank) throw_failure("graph: transpose '{}' of rank {} (supported 1..{})", result.name, rank, kMaxRank);
  std::array<int64_t, kMaxRank> in_strides{}, strides{}, idx{};
  int64_t s = 1;
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = s;
    s *= x.dim(d);
  }
  for (size_t d = 0; d < rank; ++d) strides[d] = in_strides[perm[d]];  // input stride along output axis d
  const uint8_t* src = static_cast<const uint8_t*>(x.raw());
  uint8_t* dst = static_cast<uint8_t*>(out.mutable_raw());
  int64_t off = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::memcpy(dst + i * esize, src + off * esize, esize);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < os[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (os[d] - 1);
      idx[d] = 0;
    }
  }
  return out;
}

Tensor run_slice(const Value& result, const Tensor& x, int64_t axis, int64_t start) {
  Tensor out = Tensor::zeros(result.type.dtype, result.type.shape);
  axis = positive_axis(axis, x.rank());
  const size_t esize = dtype_size(result.type.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t len = result.type.shape[axis];
  const uint8_t* src = static_cast<const uint8_t*>(x.raw());
  uint8_t* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * len * inner * esize, src + (o * x.dim(axis) + start) * inner * esize, len * inner * esize);
  return out;
}

}  // namespace

TensorMap interpret(const Graph& g, const InputMap& inputs, const InterpreterOptions& options) {
  const auto& values = g.values();
  std::vector<Tensor> slots(values.size());
  std::vector<bool> ready(values.size(), false);

  for (const auto& [name, t] : inputs)
    if (!g.find_input(name)) {
      std::string valid;
      for (ValueId id : g.inputs()) valid += (valid.empty() ? "" : ", ") + values[id].name;
      throw_input_error("graph {}: unknown input '{}' (inputs: {})", g.name(), name, valid);
    }
  for (ValueId id : g.inputs()) {
    const Value& v = values[id];
    auto it = inputs.find(v.name);
    if (it == inputs.end() || !it->second) throw_input_error("graph {}: input '{}' is not bound", g.name(), v.name);
    const Tensor& t = *it->second;
    if (t.dtype() != v.type.dtype || t.shape() != v.type.shape)
      throw_input_error("graph {}: input '{}' is {}{}, expected {}", g.name(), v.name, dtype_name(t.dtype()),
                        shape_to_string(t.shape()), type_to_string(v.type));
    slots[id] = t;
    ready[id] = true;
  }
  // Weights are read when an op first needs them and dropped after their last use, so a 16-bit
  // checkpoint is never held as float32 (model/weights.h).
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind == ValueKind::kWeight) {
      ready[i] = true;
    } else if (values[i].kind == ValueKind::kConstant) {
      slots[i] = *values[i].constant;
      ready[i] = true;
    }
  }

  // Free intermediates after their last use so long graphs stay small.
  const auto& ops = g.ops();
  std::vector<int64_t> last_use(values.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i)
    for (ValueId v : ops[i].operands) last_use[v] = static_cast<int64_t>(i);
  for (const auto& o : g.outputs()) last_use[o.value] = static_cast<int64_t>(ops.size());

  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const Value& r = values[op.result];
    std::vector<const Tensor*> in;
    std::vector<Tensor> converted;  // a weight held as stored, read here by an op that needs float32
    converted.reserve(op.operands.size());
    for (ValueId v : op.operands) {
      if (!ready[v]) throw_failure("graph {}: op '{}' reads '{}' before it is computed", g.name(), r.name, values[v].name);
      // The matrices of linear and gather ops are read as stored (run_linear, run_gather); the
      // small weights of other ops (norms, scales) as float32.
      const bool in_place = values[v].kind == ValueKind::kWeight &&
                            ((op.kind == OpKind::kLinear && v == op.operands[1]) ||
                             (op.kind == OpKind::kGather && v == op.operands[0]));
      if (values[v].kind == ValueKind::kWeight && !slots[v].defined())
        slots[v] = in_place ? g.weights()->get(values[v].name) : g.weights()->f32(values[v].name);
      if (!in_place && slots[v].dtype() != values[v].type.dtype) {  // held as stored for another op
        converted.push_back(slots[v].to_f32());
        in.push_back(&converted.back());
        continue;
      }
      in.push_back(&slots[v]);
    }
    Tensor out;
    std::optional<Tensor> replaced;
    if (options.override_op) replaced = options.override_op(op, r, in);
    if (replaced) out = std::move(*replaced);
    else switch (op.kind) {
      case OpKind::kGather:
        out = run_gather(r, *in[0], *in[1], values[op.operands[1]]);
        break;
      case OpKind::kRmsNorm:
        out = run_rms_norm(r, *in[0], *in[1], attr_float(op.attrs, "eps"));
        break;
      case OpKind::kLayerNorm:
        out = run_layer_norm(r, *in[0], *in[1], *in[2], attr_float(op.attrs, "eps"));
        break;
      case OpKind::kLinear:
        out = run_linear(r, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr);
        break;
      case OpKind::kAdd:
        out = run_binary(r, *in[0], *in[1], kernels::scalar::add, [](float a, float b) { return a + b; });
        break;
      case OpKind::kMul:
        out = run_binary(r, *in[0], *in[1], kernels::scalar::mul, [](float a, float b) { return a * b; });
        break;
      case OpKind::kSilu:
        out = run_activation(r, *in[0], kernels::scalar::silu);
        break;
      case OpKind::kGeluTanh:
        out = run_activation(r, *in[0], kernels::scalar::gelu_tanh);
        break;
      case OpKind::kGelu:
        out = run_activation(r, *in[0], kernels::scalar::gelu);
        break;
      case OpKind::kTanh:
        out = run_activation(r, *in[0], kernels::scalar::tanh_inplace);
        break;
      case OpKind::kRope:
        out = run_rope(r, *in[0], *in[1], *in[2]);
        break;
      case OpKind::kMatMul:
        out = run_matmul(r, *in[0], *in[1]);
        break;
      case OpKind::kSoftmax:
        out = run_softmax(r, *in[0]);
        break;
      case OpKind::kConcat:
        out = run_concat(r, in, attr_int(op.attrs, "axis"));
        break;
      case OpKind::kReshape:
        out = in[0]->reshaped(r.type.shape);
        break;
      case OpKind::kTranspose:
        out = run_transpose(r, *in[0], attr_ints(op.attrs, "perm"));
        break;
      case OpKind::kSlice:
        out = run_slice(r, *in[0], attr_int(op.attrs, "axis"), attr_int(op.attrs, "start"));
        break;
    }
    if (options.transform) options.transform(r, out);
    if (options.observer) options.observer(r, out);
    slots[op.result] = std::move(out);
    ready[op.result] = true;
    for (ValueId v : op.operands)
      if (last_use[v] == static_cast<int64_t>(i) &&
          (values[v].kind == ValueKind::kOpResult || values[v].kind == ValueKind::kWeight)) {
        // A 16-bit weight read as stored (a view of its file) also gives its file pages back;
        // float32 views stay resident, as every run reads them whole anyway.
        if (values[v].kind == ValueKind::kWeight && slots[v].is_view() && slots[v].dtype() != DType::kF32)
          g.weights()->release(values[v].name);
        slots[v] = Tensor();
      }
  }

  TensorMap result;
  for (const auto& o : g.outputs()) {
    if (!ready[o.value]) throw_failure("graph {}: output '{}' was never computed", g.name(), o.name);
    result[o.name] = slots[o.value];
  }
  return result;
}

}  // namespace genai::graph
