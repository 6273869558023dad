#include "quant/qdq_executor.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/broadcast.h"
#include "kernels/quantized_add.h"
#include "kernels/quantized_rope.h"
#include "kernels/quantized_silu.h"
#include "kernels/quantized_softmax.h"
#include "kernels/requantize.h"
#include "kernels/scalar_kernels.h"

namespace genai::quant {

using graph::Graph;
using graph::OpKind;
using graph::ValueKind;

namespace {

// Integer view of values already on encoding `e`: x / scale is within rounding of an integer,
// and that integer is q - zero_point.
void to_integers(const float* x, int64_t n, const Encoding& e, int32_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(kernels::round_half_even(x[i] / e.scale));
}

// The dequantized value of the requantized t * m on ey: (q - zp) * scale.
float requantized_value(float t, float m, const Encoding& ey) {
  const float lo = static_cast<float>(ey.qmin - ey.zero_point), hi = static_cast<float>(ey.qmax - ey.zero_point);
  return kernels::requantize(t * m, lo, hi) * ey.scale;
}

// The 16-bit codes of values already on encoding e, and a tensor of 16-bit codes' values.
std::vector<uint16_t> codes_of(const Tensor& t, const Encoding& e) {
  std::vector<uint16_t> c(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) c[static_cast<size_t>(i)] = static_cast<uint16_t>(quantize_value(t.data<float>()[i], e));
  return c;
}

Tensor from_codes(const std::vector<uint16_t>& c, const Shape& shape, const Encoding& e) {
  Tensor out = Tensor::zeros(DType::kF32, shape);
  kernels::scalar::dequantize(c.data(), kernels::ActType::kU16, out.numel(), qparams(e), out.mutable_data<float>());
  return out;
}

// Sum of a[i] * b[i] exactly: int32 partial sums over chunks small enough not to overflow
// (|a| <= 65535, |b| <= 128 -> 256 products < 2^31), int64 across chunks.
int64_t dot_narrow(const int32_t* a, const int16_t* b, int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; i += 256) {
    const int64_t end = std::min(n, i + 256);
    int32_t s = 0;
    for (int64_t k = i; k < end; ++k) s += a[k] * static_cast<int32_t>(b[k]);
    total += s;
  }
  return total;
}

int64_t dot_wide(const int32_t* a, const int16_t* b, int64_t n) {
  int64_t s = 0;
  for (int64_t k = 0; k < n; ++k) s += static_cast<int64_t>(a[k]) * b[k];
  return s;
}

Tensor dequantized_table(const WeightEncoding& w, const Tensor& f) {
  Tensor t = Tensor::zeros(DType::kF32, {w.rows, w.cols});
  const auto v = dequantize_weight(w, f.data<float>());
  std::memcpy(t.mutable_data<float>(), v.data(), v.size() * sizeof(float));
  return t;
}

std::vector<std::pair<int64_t, int64_t>> batch_offsets(const Shape& out_batch, const Shape& a, const Shape& b) {
  const size_t rank = out_batch.size();
  const auto sa = kernels::broadcast_strides(a, rank), sb = kernels::broadcast_strides(b, rank);
  std::vector<std::pair<int64_t, int64_t>> offs;
  const int64_t n = shape_numel(out_batch);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < rank; ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    offs.emplace_back(oa, ob);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_batch[d]) break;
      idx[d] = 0;
    }
  }
  return offs;
}

}  // namespace

void qdq_linear(const float* x, int64_t rows, const Encoding& ex, const WeightEncoding& w, const int16_t* codes,
                const float* bias, const Encoding& ey, float* y) {
  const int64_t n_in = w.cols, n_out = w.rows;
  if (ex.is_float() || w.is_float() || ey.is_float())
    throw_failure("quant: integer linear needs integer encodings (got {} x {} -> {})", qdtype_name(ex.dtype),
                  qdtype_name(w.dtype), qdtype_name(ey.dtype));
  std::vector<int32_t> xi(static_cast<size_t>(rows * n_in));
  to_integers(x, rows * n_in, ex, xi.data());
  const float m = ex.scale / ey.scale;
  const bool narrow = qdtype_bits(w.dtype) <= 8;
  const int64_t nb = w.blocks(), width = w.block_size > 0 ? w.block_size : n_in;
  // The HTP's accumulator (kernels::htp_accumulator) for per-channel weights under 16-bit codes.
  const bool htp_floor = w.block_size == 0 && kernels::htp_floors_accumulator(static_cast<int32_t>(ex.qmax),
                                                                              qdtype_bits(w.dtype));
  ThreadPool::global().parallel_for(
      n_out,
      [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          const int16_t* wr = codes + c * n_in;
          const float* sc = w.scales.data() + c * nb;
          const float b = bias ? bias[c] / ex.scale : 0.0f;
          int64_t wsum = 0;
          if (htp_floor)
            for (int64_t k = 0; k < n_in; ++k) wsum += wr[k];
          for (int64_t r = 0; r < rows; ++r) {
            const int32_t* xr = xi.data() + r * n_in;
            float t = 0.0f;
            for (int64_t blk = 0; blk < nb; ++blk) {
              int64_t acc = narrow ? dot_narrow(xr + blk * width, wr + blk * width, width)
                                   : dot_wide(xr + blk * width, wr + blk * width, width);
              if (htp_floor) acc = kernels::htp_accumulator(acc, wsum, ex.zero_point);
              t += static_cast<float>(acc) * sc[blk];
            }
            if (bias) t += b;
            y[r * n_out + c] = requantized_value(t, m, ey);
          }
        }
      },
      8);
}

QdqExecutor::QdqExecutor(graph::GraphMap graphs, std::map<std::string, std::shared_ptr<const EncodingSet>> encodings)
    : graphs_(std::move(graphs)), encodings_(std::move(encodings)) {
  for (const auto& [name, g] : graphs_) {
    auto it = encodings_.find(name);
    if (it == encodings_.end() || !it->second) throw_failure("quant: no encodings for graph {}", name);
    const EncodingSet& set = *it->second;
    for (const auto& op : g->ops()) {
      // Weight tables read by float ops (gather; every weight when fp16) compute on dequantized values.
      const bool table = op.kind == OpKind::kGather && g->value(op.operands[0]).kind == ValueKind::kWeight;
      const bool fp_linear = op.kind == OpKind::kLinear && set.weights.count(g->value(op.operands[1]).name) &&
                             set.weights.at(g->value(op.operands[1]).name)->is_float();
      if (!table && !fp_linear) continue;
      const std::string& wname = g->value(op.operands[table ? 0 : 1]).name;
      if (dequantized_tables_.count(wname)) continue;
      auto wt = set.weights.find(wname);
      if (wt == set.weights.end()) throw_failure("quant: graph {}: weight {} has no encoding", name, wname);
      dequantized_tables_[wname] = dequantized_table(*wt->second, g->weights()->f32(wname));
    }
  }
}

bool QdqExecutor::has_graph(std::string_view name) const { return graphs_.count(std::string(name)) != 0; }

namespace {
const Graph& find_graph(const graph::GraphMap& graphs, std::string_view name) {
  auto it = graphs.find(std::string(name));
  if (it == graphs.end()) {
    std::string valid;
    for (const auto& [n, g] : graphs) valid += (valid.empty() ? "" : ", ") + n;
    throw_input_error("quant: no graph '{}' (graphs: {})", name, valid);
  }
  return *it->second;
}
}  // namespace

std::vector<graph::IoSpec> QdqExecutor::inputs(std::string_view name) const {
  const Graph& g = find_graph(graphs_, name);
  std::vector<graph::IoSpec> out;
  for (auto id : g.inputs()) out.push_back({g.value(id).name, g.value(id).type});
  return out;
}

std::vector<graph::IoSpec> QdqExecutor::outputs(std::string_view name) const {
  const Graph& g = find_graph(graphs_, name);
  std::vector<graph::IoSpec> out;
  for (const auto& o : g.outputs()) out.push_back({o.name, g.value(o.value).type});
  return out;
}

namespace {

// What an op's integer form reads: the graph, its encodings, the executor's dequantized tables,
// the op, its result value and its operand tensors (already fake-quantized).
struct QdqOp {
  const Graph& g;
  const EncodingSet& set;
  const std::map<std::string, Tensor>& tables;
  const graph::Op& op;
  const graph::Value& r;
  const std::vector<const Tensor*>& in;

  const Encoding& enc(const std::string& tensor) const {
    auto it = set.activations.find(tensor);
    if (it == set.activations.end()) throw_failure("quant: graph {}: tensor {} has no encoding", g.name(), tensor);
    return it->second;
  }
  const Encoding* find_enc(graph::ValueId v) const {
    auto it = set.activations.find(g.value(v).name);
    return it == set.activations.end() ? nullptr : &it->second;
  }
  // The integer encoding of operand i (or of the result, i = -1); null when it has none or a float one.
  const Encoding* integer_enc(int i) const {
    const Encoding* e = find_enc(i < 0 ? op.result : op.operands[static_cast<size_t>(i)]);
    return e && !e->is_float() ? e : nullptr;
  }
};

// Each op kind computed the way the HTP computes it on codes; nullopt: the float op, whose
// result the transform then fake-quantizes.
using QdqOpFn = std::optional<Tensor> (*)(const QdqOp&);

// A gathered weight table: its dequantized rows.
std::optional<Tensor> qdq_gather(const QdqOp& c) {
  if (c.g.value(c.op.operands[0]).kind != ValueKind::kWeight) return std::nullopt;
  const Tensor& table = c.tables.at(c.g.value(c.op.operands[0]).name);
  const Tensor& idx = *c.in[1];
  const int64_t rows = table.dim(0), width = table.dim(1);
  Tensor out = Tensor::zeros(DType::kF32, c.r.type.shape);
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int32_t id = idx.data<int32_t>()[i];
    if (id < 0 || id >= rows)
      throw_input_error("graph input {}: value {} at element {} is outside [0, {})", c.g.value(c.op.operands[1]).name, id,
                        i, rows);
    std::memcpy(out.mutable_data<float>() + i * width, table.data<float>() + id * width, width * sizeof(float));
  }
  return out;
}

// 16-bit codes: the HTP's integer add (kernels/quantized_add.h).
std::optional<Tensor> qdq_add(const QdqOp& c) {
  const Encoding *ea = c.integer_enc(0), *eb = c.integer_enc(1), *ey = c.integer_enc(-1);
  if (!ea || !eb || !ey) return std::nullopt;
  const kernels::QParams qa = qparams(*ea), qb = qparams(*eb), qy = qparams(*ey);
  if (!kernels::htp_add_applies(qa, qb, qy)) return std::nullopt;
  const kernels::HtpAdd h = kernels::htp_add_params(qa, qb, qy);
  const Tensor &a = *c.in[0], &b = *c.in[1];
  const Shape& os = c.r.type.shape;
  const auto sa = kernels::broadcast_strides(a.shape(), os.size()), sb = kernels::broadcast_strides(b.shape(), os.size());
  Tensor out = Tensor::zeros(DType::kF32, os);
  const auto code = [](float x, const Encoding& e) { return static_cast<int32_t>(quantize_value(x, e)); };
  kernels::for_each_broadcast(os.size(), os.data(), sa.data(), sb.data(), [&](int64_t i, int64_t oa, int64_t ob) {
    const int32_t q = kernels::htp_add_code(code(a.data<float>()[oa], *ea), code(b.data<float>()[ob], *eb), h);
    out.mutable_data<float>()[i] = dequantize_value(q, *ey);
  });
  return out;
}

// An integer program's norm weight and bias are on their 16-bit constant grid (the HTP receives
// them so); the transform floors rms_norm's result.
std::optional<Tensor> qdq_norm(const QdqOp& c) {
  if (c.enc(c.r.name).is_float()) return std::nullopt;
  const Tensor& x = *c.in[0];
  const int64_t d = c.in[1]->numel(), rows = x.numel() / d;
  const auto w = on_constant_grid(c.in[1]->data<float>(), d);
  const float eps = static_cast<float>(graph::attr_float(c.op.attrs, "eps"));
  Tensor out = Tensor::zeros(DType::kF32, c.r.type.shape);
  if (c.op.kind == OpKind::kRmsNorm) {
    kernels::scalar::rms_norm(x.data<float>(), rows, d, w.data(), eps, out.mutable_data<float>());
  } else {
    const auto b = on_constant_grid(c.in[2]->data<float>(), d);
    kernels::scalar::layer_norm(x.data<float>(), rows, d, w.data(), b.data(), eps, out.mutable_data<float>());
  }
  return out;
}

// 16-bit codes onto [0, 1]: the HTP's fixed point (kernels/quantized_softmax.h).
std::optional<Tensor> qdq_softmax(const QdqOp& c) {
  const Encoding *ex = c.integer_enc(0), *ey = c.integer_enc(-1);
  if (!ex || !ey || !kernels::htp_softmax_applies(qparams(*ex), qparams(*ey))) return std::nullopt;
  const Tensor& x = *c.in[0];
  const int64_t n = x.dim(x.rank() - 1), rows = x.numel() / n;
  const std::vector<uint16_t> cx = codes_of(x, *ex);
  std::vector<uint16_t> cy(cx.size());
  kernels::softmax_q(cx.data(), rows, n, ex->scale, cy.data());
  return from_codes(cy, c.r.type.shape, *ey);
}

// 16-bit codes: the HTP's four quantized steps (kernels/quantized_rope.h).
std::optional<Tensor> qdq_rope(const QdqOp& c) {
  const Encoding *ex = c.integer_enc(0), *ec = c.integer_enc(1), *es = c.integer_enc(2), *ey = c.integer_enc(-1);
  if (!ex || !ec || !es || !ey) return std::nullopt;
  if (!kernels::htp_rope_applies(qparams(*ex), qparams(*ec), qparams(*es), qparams(*ey))) return std::nullopt;
  const kernels::HtpRope p = kernels::htp_rope_params(qparams(*ex), qparams(*ec), qparams(*es), qparams(*ey));
  const Tensor &x = *c.in[0], &cos_t = *c.in[1], &sin_t = *c.in[2];
  const std::vector<uint16_t> cx = codes_of(x, *ex), cc = codes_of(cos_t, *ec), cs = codes_of(sin_t, *es);
  std::vector<uint16_t> cy(cx.size());
  const int64_t B = x.dim(0), H = x.dim(1), S = x.dim(2), D = x.dim(3);
  for (int64_t u = 0; u < B * H; ++u)
    kernels::rope_q(cx.data() + u * S * D, cc.data() + (u / H) * S * D, cs.data() + (u / H) * S * D, S, D, p,
                    cy.data() + u * S * D);
  return from_codes(cy, c.r.type.shape, *ey);
}

// 16-bit codes: sigmoid onto its [0, 1] grid, then the product (kernels/quantized_silu.h).
std::optional<Tensor> qdq_silu(const QdqOp& c) {
  const Encoding *ex = c.integer_enc(0), *ey = c.integer_enc(-1);
  if (!ex || !ey || !kernels::htp_silu_applies(qparams(*ex), qparams(*ey))) return std::nullopt;
  const std::vector<uint16_t> cx = codes_of(*c.in[0], *ex);
  std::vector<uint16_t> cy(cx.size());
  kernels::silu_q(cx.data(), static_cast<int64_t>(cx.size()), qparams(*ex), qparams(*ey), cy.data());
  return from_codes(cy, c.r.type.shape, *ey);
}

// Integer weights: qdq_linear; fp16 weights: float dot products of float16-rounded values.
std::optional<Tensor> qdq_linear_op(const QdqOp& c) {
  const std::string& wname = c.g.value(c.op.operands[1]).name;
  const WeightEncoding& w = *c.set.weights.at(wname);
  const Tensor* bias = c.in.size() > 2 ? c.in[2] : nullptr;
  const int64_t rows = c.in[0]->numel() / w.cols;
  Tensor out = Tensor::zeros(DType::kF32, c.r.type.shape);
  if (w.is_float()) {
    const Tensor& wt = c.tables.at(wname);
    const float* x = c.in[0]->data<float>();
    float* y = out.mutable_data<float>();
    ThreadPool::global().parallel_for(w.rows, [&](int64_t b, int64_t e) {
      for (int64_t col = b; col < e; ++col)
        for (int64_t row = 0; row < rows; ++row) {
          const float* wr = wt.data<float>() + col * w.cols;
          const float* xr = x + row * w.cols;
          float s = 0.0f;
          for (int64_t k = 0; k < w.cols; ++k) s += xr[k] * wr[k];
          y[row * w.rows + col] = s + (bias ? round_to_f16(bias->data<float>()[col]) : 0.0f);
        }
    });
    return out;
  }
  const std::vector<int16_t> codes = weight_codes(w, *c.in[1]);
  qdq_linear(c.in[0]->data<float>(), rows, c.enc(c.g.value(c.op.operands[0]).name), w, codes.data(),
             bias ? bias->data<float>() : nullptr, c.enc(c.r.name), out.mutable_data<float>());
  return out;
}

// The scalar integer matmul kernel on the codes (u16 storage holds u8 codes too): exact int64
// sums of (qa - zp_a) * (qb - zp_b), requantized onto ey, then dequantized. fp16: the float
// kernel, rounded after.
std::optional<Tensor> qdq_matmul(const QdqOp& c) {
  const Encoding &ea = c.enc(c.g.value(c.op.operands[0]).name), &eb = c.enc(c.g.value(c.op.operands[1]).name),
                 &ey = c.enc(c.r.name);
  if (ea.is_float() || eb.is_float() || ey.is_float()) return std::nullopt;
  const Tensor &a = *c.in[0], &b = *c.in[1];
  const int64_t M = a.dim(a.rank() - 2), K = a.dim(a.rank() - 1), N = b.dim(b.rank() - 1);
  const Shape& os = c.r.type.shape;
  const auto offs = batch_offsets(Shape(os.begin(), os.end() - 2), Shape(a.shape().begin(), a.shape().end() - 2),
                                  Shape(b.shape().begin(), b.shape().end() - 2));
  const kernels::QParams qa = qparams(ea), qb = qparams(eb), qy = qparams(ey);
  std::vector<uint16_t> ca(static_cast<size_t>(a.numel())), cb(static_cast<size_t>(b.numel()));
  kernels::scalar::quantize(a.data<float>(), a.numel(), qa, kernels::ActType::kU16, ca.data());
  kernels::scalar::quantize(b.data<float>(), b.numel(), qb, kernels::ActType::kU16, cb.data());
  std::vector<kernels::MatmulBatch> batches;
  batches.reserve(offs.size());
  for (size_t bt = 0; bt < offs.size(); ++bt)
    batches.push_back({offs[bt].first * M * K, offs[bt].second * K * N, static_cast<int64_t>(bt) * M * N});
  Tensor out = Tensor::zeros(DType::kF32, os);
  std::vector<uint16_t> cy(static_cast<size_t>(out.numel()));
  kernels::scalar::matmul_q(ca.data(), kernels::ActType::kU16, qa, cb.data(), kernels::ActType::kU16, qb, M, K, N,
                            batches, qy, kernels::ActType::kU16, cy.data());
  kernels::scalar::dequantize(cy.data(), kernels::ActType::kU16, out.numel(), qy, out.mutable_data<float>());
  return out;
}

QdqOpFn qdq_op_fn(OpKind kind) {
  switch (kind) {
    case OpKind::kGather: return qdq_gather;
    case OpKind::kAdd: return qdq_add;
    case OpKind::kRmsNorm:
    case OpKind::kLayerNorm: return qdq_norm;
    case OpKind::kSoftmax: return qdq_softmax;
    case OpKind::kRope: return qdq_rope;
    case OpKind::kSilu: return qdq_silu;
    case OpKind::kLinear: return qdq_linear_op;
    case OpKind::kMatMul: return qdq_matmul;
    default: return nullptr;
  }
}

}  // namespace

graph::TensorMap QdqExecutor::run(std::string_view name, const graph::InputMap& inputs) {
  const Graph& g = find_graph(graphs_, name);
  const EncodingSet& set = *encodings_.at(std::string(name));
  auto enc = [&](const std::string& tensor) -> const Encoding& {
    auto it = set.activations.find(tensor);
    if (it == set.activations.end()) throw_failure("quant: graph {}: tensor {} has no encoding", g.name(), tensor);
    return it->second;
  };
  // Float inputs enter quantized, as the program receives integers.
  std::map<std::string, Tensor> owned;
  graph::InputMap bound = inputs;
  for (auto id : g.inputs()) {
    const auto& v = g.value(id);
    auto it = inputs.find(v.name);
    if (v.type.dtype != DType::kF32 || it == inputs.end() || !it->second || it->second->dtype() != DType::kF32) continue;
    Tensor t = Tensor::zeros(DType::kF32, it->second->shape());
    std::memcpy(t.mutable_raw(), it->second->raw(), t.nbytes());
    fake_quantize(t.mutable_data<float>(), t.numel(), enc(v.name));
    owned[v.name] = std::move(t);
    bound[v.name] = &owned[v.name];
  }

  graph::InterpreterOptions options;
  options.override_op = [&](const graph::Op& op, const graph::Value& r,
                            const std::vector<const Tensor*>& in) -> std::optional<Tensor> {
    const QdqOpFn fn = qdq_op_fn(op.kind);
    if (!fn) return std::nullopt;
    return fn(QdqOp{g, set, dequantized_tables_, op, r, in});
  };
  options.transform = [&](const graph::Value& r, Tensor& t) {
    const graph::OpKind kind = g.ops()[static_cast<size_t>(r.producer)].kind;
    if (r.type.dtype != DType::kF32 || is_passthrough(kind)) return;
    fake_quantize(t.mutable_data<float>(), t.numel(), enc(r.name),
                  kind == graph::OpKind::kRmsNorm ? Rounding::kFloor : Rounding::kNearestEven);
  };
  if (observer_) options.observer = observer_;
  return graph::interpret(g, bound, options);
}

}  // namespace genai::quant
