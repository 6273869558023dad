#include "backends/qnn/onnx_export.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "backends/qnn/onnx_one_type_elementwise.h"
#include "backends/qnn/onnx_wire.h"
#include "backends/qnn/static_values.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "graph/graph.h"
#include "kernels/quantized_rope.h"
#include "kernels/quantized_silu.h"
#include "quant/encoding_set.h"

namespace genai::backends::qnn {

using graph::Graph;
using graph::OpKind;
using graph::ValueId;
using graph::ValueKind;
using quant::Encoding;
using quant::QDType;
using quant::WeightEncoding;

std::string onnx_input_name(size_t index, std::string_view name) { return fmt::format("input_{}_{}", index, name); }
std::string onnx_output_name(size_t index, std::string_view name) { return fmt::format("output_{}_{}", index, name); }

namespace {

// TensorProto.DataType values (INT4 included, which the written model uses by number).
enum OnnxType : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kInt4 = 22,
};
constexpr int64_t kIrVersion = 11;  // the IR version of opset 23
// Element type of derived intermediate encodings: 16 bits whatever the activations', since an
// 8-bit rounding inside rope or silu would add a full 8-bit step where the reference adds none.
constexpr QDType kIntermediate = QDType::kU16;

int32_t onnx_type(QDType t) {
  switch (t) {
    case QDType::kU8: return kUint8;
    case QDType::kU16: return kUint16;
    case QDType::kI8: return kInt8;
    case QDType::kI16: return kInt16;
    case QDType::kI4: return kInt4;
    case QDType::kF16: break;
  }
  throw_failure("qnn export: no integer ONNX type for {}", quant::qdtype_name(t));
}

int32_t onnx_type(DType t) {
  switch (t) {
    case DType::kF32: return kFloat;
    case DType::kU8: return kUint8;
    case DType::kI8: return kInt8;
    case DType::kU16: return kUint16;
    case DType::kI16: return kInt16;
    case DType::kI32: return kInt32;
    case DType::kI64: return kInt64;
    default: break;
  }
  throw_failure("qnn export: no ONNX type for {}", dtype_name(t));
}

// Raw little-endian bytes of integer values in element type `t` (int4 two per byte, low nibble first).
std::string pack_integers(const std::vector<int64_t>& v, int32_t t) {
  std::string out;
  auto put = [&](auto x) { out.append(reinterpret_cast<const char*>(&x), sizeof(x)); };
  if (t == kInt4) {
    out.assign((v.size() + 1) / 2, '\0');
    for (size_t i = 0; i < v.size(); ++i)
      out[i / 2] = static_cast<char>(static_cast<uint8_t>(out[i / 2]) | ((static_cast<uint8_t>(v[i]) & 0xF) << (4 * (i % 2))));
    return out;
  }
  for (int64_t x : v) {
    switch (t) {
      case kUint8: put(static_cast<uint8_t>(x)); break;
      case kInt8: put(static_cast<int8_t>(x)); break;
      case kUint16: put(static_cast<uint16_t>(x)); break;
      case kInt16: put(static_cast<int16_t>(x)); break;
      case kInt32: put(static_cast<int32_t>(x)); break;
      case kInt64: put(static_cast<int64_t>(x)); break;
      default: throw_failure("qnn export: cannot pack integers as ONNX type {}", t);
    }
  }
  return out;
}

// Above `above` bytes of initializers, the large ones go to
// out.external_data in graph order, each at a multiple of 64 bytes (the rest zeros).
void move_to_external_data(wire::Graph& g, OnnxModel& out, uint64_t above) {
  uint64_t total = 0;
  for (const wire::Tensor& t : g.initializers) total += t.raw_data.size();
  if (total <= above) return;
  out.external_data.reserve(total + 64 * g.initializers.size());
  for (wire::Tensor& t : g.initializers) {
    if (t.raw_data.size() < kOnnxExternalMinBytes) continue;
    out.external_data.resize((out.external_data.size() + 63) / 64 * 64, '\0');
    t.external = wire::ExternalData{std::string(kOnnxExternalDataFile), out.external_data.size(), t.raw_data.size()};
    out.external_data += t.raw_data;
    std::string().swap(t.raw_data);  // the bytes live once
  }
}

class Exporter {
 public:
  Exporter(const pipeline::GraphBundle& bundle, const OnnxExportOptions& options)
      : bundle_(bundle), g_(*bundle.graph()), set_(*bundle.encodings()), options_(options), statics_(fold_static_values(bundle)) {
    for (const auto& op : g_.ops())
      if (op.kind == OpKind::kRmsNorm || op.kind == OpKind::kLayerNorm)
        for (size_t j = 1; j < op.operands.size(); ++j) on_grid_.insert(op.operands[j]);
  }

  OnnxModel run() {
    wire::Model model;
    model.ir_version = kIrVersion;
    model.producer_name = "genai";
    model.opset_imports.push_back({"", kOnnxOpset});
    gp_ = &model.graph;
    gp_->name = g_.name();
    qname_.assign(g_.values().size(), "");
    OnnxModel out;
    bind_inputs(out);
    name_outputs();
    for (const auto& op : g_.ops()) emit(op);
    bind_outputs(out);
    if (options_.elementwise_one_type) give_elementwise_ops_one_type(model.graph);
    move_to_external_data(model.graph, out, options_.external_data_above);
    out.bytes = wire::serialize(model);
    return out;
  }

 private:
  // ---- encodings -------------------------------------------------------------------------
  const Encoding& enc(ValueId v) const {
    const std::string& n = g_.value(v).name;
    auto it = set_.activations.find(n);
    if (it == set_.activations.end()) throw_failure("qnn export: graph {}: tensor {} has no encoding", g_.name(), n);
    check_encoding(it->second, n);
    return it->second;
  }
  void check_encoding(const Encoding& e, const std::string& n) const {
    if (e.is_float()) throw_failure("qnn export: graph {}: tensor {} has a float16 encoding", g_.name(), n);
    // ONNX QuantizeLinear saturates to the element type's range, so narrower ranges are not expressible.
    if (e.qmin != quant::qdtype_min(e.dtype) || e.qmax != quant::qdtype_max(e.dtype))
      throw_failure("qnn export: graph {}: tensor {} clamps to [{}, {}], narrower than {}", g_.name(), n, e.qmin, e.qmax,
                    quant::qdtype_name(e.dtype));
  }

  // ---- initializers ----------------------------------------------------------------------
  void add_initializer(const std::string& name, int32_t type, const std::vector<int64_t>& dims, std::string raw) {
    if (!initializers_.insert(name).second) return;  // one initializer per name
    gp_->initializers.push_back({dims, type, name, std::move(raw)});
  }
  void add_floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    std::string raw(v.size() * sizeof(float), '\0');
    if (!v.empty()) std::memcpy(raw.data(), v.data(), raw.size());
    add_initializer(name, kFloat, dims, std::move(raw));
  }
  void add_ints(const std::string& name, int32_t type, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    add_initializer(name, type, dims, pack_integers(v, type));
  }
  std::string int64s(const std::string& name, const std::vector<int64_t>& v) {
    add_ints(name, kInt64, {static_cast<int64_t>(v.size())}, v);
    return name;
  }

  // Scale and zero point initializers of one encoding, under `tag`.
  std::pair<std::string, std::string> qparams(const std::string& tag, const Encoding& e) {
    add_floats(tag + ".scale", {}, {e.scale});
    add_ints(tag + ".zero_point", onnx_type(e.dtype), {}, {e.zero_point});
    return {tag + ".scale", tag + ".zero_point"};
  }

  // ---- nodes -----------------------------------------------------------------------------
  // The node just added; the pointer holds only until the next node() (callers add attributes at once).
  wire::Node* node(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& output) {
    wire::Node& n = gp_->nodes.emplace_back();
    n.op_type = op_type;
    n.name = fmt::format("{}_{}", op_type, node_count_++);
    n.inputs = inputs;
    n.outputs = {output};
    return &n;
  }
  static void attr_int(wire::Node* n, const std::string& name, int64_t v) {
    wire::Attribute& a = n->attributes.emplace_back();
    a.name = name;
    a.type = wire::AttributeType::kInt;
    a.i = v;
  }
  static void attr_float(wire::Node* n, const std::string& name, float v) {
    wire::Attribute& a = n->attributes.emplace_back();
    a.name = name;
    a.type = wire::AttributeType::kFloat;
    a.f = v;
  }
  static void attr_string(wire::Node* n, const std::string& name, const std::string& v) {
    wire::Attribute& a = n->attributes.emplace_back();
    a.name = name;
    a.type = wire::AttributeType::kString;
    a.s = v;
  }
  static void attr_ints(wire::Node* n, const std::string& name, const std::vector<int64_t>& v) {
    wire::Attribute& a = n->attributes.emplace_back();
    a.name = name;
    a.type = wire::AttributeType::kInts;
    a.ints = v;
  }
  std::string fresh(const std::string& base) { return fmt::format("{}/{}", base, fresh_count_[base]++); }

  // DequantizeLinear of integer tensor `q` on `e` (tag names its parameters); a new node for
  // every use, as QDQ node units expect their own DQ.
  std::string dq(const std::string& q, const std::string& tag, const Encoding& e) {
    const auto [s, z] = qparams(tag, e);
    const std::string out = fresh(tag + ".dq");
    node("DequantizeLinear", {q, s, z}, out);
    return out;
  }
  // Quantizes float `x` on `e` into tensor `out`.
  void q(const std::string& x, const std::string& tag, const Encoding& e, const std::string& out) {
    const auto [s, z] = qparams(tag, e);
    node("QuantizeLinear", {x, s, z}, out);
  }
  // A float use of value `v` (int32 values are used as they are).
  std::string use(ValueId v) {
    const auto& val = g_.value(v);
    if (val.kind == ValueKind::kConstant && val.constant->dtype() == DType::kI32) {  // gather ids: as they are
      const Tensor& t = *val.constant;
      add_ints(val.name, kInt32, std::vector<int64_t>(t.shape().begin(), t.shape().end()),
               std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.numel()));
      return val.name;
    }
    if (val.kind == ValueKind::kWeight || val.kind == ValueKind::kConstant) return constant_operand(v);
    if (qname_[static_cast<size_t>(v)].empty())
      throw_failure("qnn export: graph {}: value {} used before it is defined", g_.name(), val.name);
    if (val.type.dtype != DType::kF32) return qname_[static_cast<size_t>(v)];
    return dq(qname_[static_cast<size_t>(v)], val.name, enc(v));
  }
  // Quantizes the float result `x` of op result `r` on its encoding and records the tensor.
  void define(ValueId r, const std::string& x) {
    const auto& val = g_.value(r);
    const std::string out = output_name_.count(r) ? output_name_.at(r) : val.name + ".q";
    q(x, val.name, enc(r), out);
    qname_[static_cast<size_t>(r)] = out;
  }
  // A float tensor of an intermediate result, quantized on `e` when intermediates are.
  std::string intermediate(const std::string& x, const std::string& tag, const Encoding& e) {
    if (!options_.quantize_intermediates) return x;
    const std::string qt = tag + ".q";
    q(x, tag, e, qt);
    return dq(qt, tag, e);
  }

  // A float tensor between two data-movement nodes, always quantized on `e` (each node then has
  // the DQ -> op -> Q form the QNN EP takes; moving data loses nothing on one encoding).
  std::string intermediate_qdq(const std::string& x, const std::string& tag, const Encoding& e) {
    const std::string qt = tag + ".q";
    q(x, tag, e, qt);
    return dq(qt, tag, e);
  }

  // The HTP's FullyConnected cannot give a result narrower than its input (a 16-bit x to an
  // 8-bit KV entry): the result goes through 16 bits on the same grid first (a Convert on the
  // HTP), which the emulation's single rounding matches but at exact ties.
  std::string narrowed(ValueId r, ValueId x, const std::string& y) {
    const Encoding& er = enc(r);
    if (quant::qdtype_bits(er.dtype) >= quant::qdtype_bits(enc(x).dtype) || er.dtype != QDType::kU8) return y;
    Encoding wide = er;
    wide.dtype = QDType::kU16;
    wide.qmin = 0;
    wide.qmax = 65535;
    wide.zero_point = er.zero_point * 257;
    wide.scale = er.scale / 257.0f;
    return intermediate(y, g_.value(r).name + ".wide", wide);
  }

  // ---- constants -------------------------------------------------------------------------
  Tensor constant_tensor(ValueId v) const {
    const auto& val = g_.value(v);
    if (val.kind == ValueKind::kWeight) return g_.weights()->f32(val.name);
    return val.constant->to_f32();
  }
  // A float constant read by a float op: exact scalar, uint16 tensor, or float32 (options).
  std::string constant_operand(ValueId v) {
    const auto& val = g_.value(v);
    const Tensor t = constant_tensor(v);
    const std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
    const float* p = t.data<float>();
    std::vector<float> f(p, p + t.numel());
    if (!options_.quantize_constants) {
      // A norm's weight and bias reach the HTP on their 16-bit grid, and the reference computes
      // with those values: the float form carries them too.
      if (on_grid_.count(v)) f = quant::on_constant_grid(f.data(), static_cast<int64_t>(f.size()));
      add_floats(val.name, dims, f);
      return val.name;
    }
    const std::string qt = val.name + ".q";
    if (t.numel() == 1) {  // exactly: (1 - 0) * c, (0 - 1) * |c|, or 0
      Encoding e;
      e.dtype = QDType::kU8;
      e.qmin = 0;
      e.qmax = 255;
      e.scale = f[0] == 0.0f ? 1.0f : std::fabs(f[0]);
      e.zero_point = f[0] < 0.0f ? 1 : 0;
      add_ints(qt, kUint8, dims, {f[0] > 0.0f ? 1 : 0});
      return dq(qt, val.name, e);
    }
    const Encoding e = quant::constant_encoding(f.data(), static_cast<int64_t>(f.size()));
    std::vector<int64_t> codes(f.size());
    for (size_t i = 0; i < f.size(); ++i) codes[i] = quant::quantize_value(f[i], e);
    add_ints(qt, kUint16, dims, codes);
    return dq(qt, val.name, e);
  }

  // ---- graph I/O -------------------------------------------------------------------------
  DType io_dtype(const std::string& name, const std::map<std::string, DType>& table, ValueId v) const {
    auto it = table.find(name);
    if (it != table.end()) return it->second;
    if (g_.value(v).type.dtype != DType::kF32) return g_.value(v).type.dtype;
    return quant::qdtype_storage(enc(v).dtype);
  }
  static wire::ValueInfo value_info(const std::string& name, DType dtype, const Shape& shape) {
    return {name, onnx_type(dtype), std::vector<int64_t>(shape.begin(), shape.end())};
  }
  void check_io_type(const std::string& name, DType dtype, ValueId v) const {
    if (g_.value(v).type.dtype != DType::kF32) {
      if (dtype != g_.value(v).type.dtype)
        throw_failure("qnn export: graph {}: I/O {} is {} but recorded as {}", g_.name(), name,
                      dtype_name(g_.value(v).type.dtype), dtype_name(dtype));
      return;
    }
    if (quant::qdtype_storage(enc(v).dtype) != dtype)
      throw_failure("qnn export: graph {}: I/O {} is recorded as {} but its encoding is {}", g_.name(), name,
                    dtype_name(dtype), quant::qdtype_name(enc(v).dtype));
  }
  void bind_inputs(OnnxModel& out) {
    const auto& table = bundle_.quant_io_dtypes()->inputs;
    for (size_t i = 0; i < g_.inputs().size(); ++i) {
      const ValueId v = g_.inputs()[i];
      const auto& val = g_.value(v);
      const DType dt = io_dtype(val.name, table, v);
      check_io_type(val.name, dt, v);
      const std::string name = onnx_input_name(i, val.name) + options_.io_name_suffix;
      gp_->inputs.push_back(value_info(name, dt, val.type.shape));
      qname_[static_cast<size_t>(v)] = name;
      out.inputs.push_back({name, val.name, dt, std::vector<int64_t>(val.type.shape.begin(), val.type.shape.end())});
    }
  }
  // Op results that are graph outputs are quantized straight into the output tensor (first name).
  void name_outputs() {
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      const auto& o = g_.outputs()[i];
      if (g_.value(o.value).kind == ValueKind::kOpResult && !output_name_.count(o.value))
        output_name_[o.value] = onnx_output_name(i, o.name) + options_.io_name_suffix;
    }
  }
  void bind_outputs(OnnxModel& out) {
    const auto& table = bundle_.quant_io_dtypes()->outputs;
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      const auto& o = g_.outputs()[i];
      const auto& val = g_.value(o.value);
      const DType dt = io_dtype(o.name, table, o.value);
      check_io_type(o.name, dt, o.value);
      const std::string name = onnx_output_name(i, o.name) + options_.io_name_suffix;
      if (qname_[static_cast<size_t>(o.value)] != name) node("Identity", {qname_[static_cast<size_t>(o.value)]}, name);
      gp_->outputs.push_back(value_info(name, dt, val.type.shape));
      out.outputs.push_back({name, o.name, dt, std::vector<int64_t>(val.type.shape.begin(), val.type.shape.end())});
    }
  }

  // ---- ops -------------------------------------------------------------------------------
  void emit(const graph::Op& op) {
    const ValueId r = op.result;
    const std::string& rn = g_.value(r).name;
    if (statics_.static_op[static_cast<size_t>(g_.value(r).producer)]) return emit_static(r);
    switch (op.kind) {
      case OpKind::kLinear: return emit_linear(op);
      case OpKind::kGather: return emit_gather(op);
      case OpKind::kRope: return emit_rope(op);
      case OpKind::kSilu: {
        const Encoding sig = quant::encoding_of(kIntermediate, kernels::htp_sigmoid_grid());
        const std::string s = fresh(rn + ".sigmoid");
        node("Sigmoid", {use(op.operands[0])}, s);
        const std::string y = fresh(rn + ".f");
        node("Mul", {use(op.operands[0]), intermediate(s, rn + ".sigmoid", sig)}, y);
        return define(r, y);
      }
      case OpKind::kTanh: {
        const std::string y = fresh(rn + ".f");
        const Shape& s = g_.value(r).type.shape;
        if (s.size() <= 4) {
          node("Tanh", {use(op.operands[0])}, y);
          return define(r, y);
        }
        // The QNN EP takes Tanh up to rank 4 (attention scores are 5-D here): as [1, rows, m, n],
        // the reshapes on the operand's and the result's encodings.
        int64_t rows = 1;
        for (size_t d = 0; d + 2 < s.size(); ++d) rows *= s[d];
        const ValueId x = op.operands[0];
        const std::string flat = fresh(rn + ".flat"), t = fresh(rn + ".tanh");
        node("Reshape", {use(x), int64s(rn + ".flat_shape", {1, rows, s[s.size() - 2], s.back()})}, flat);
        node("Tanh", {intermediate_qdq(flat, rn + ".flat", enc(x))}, t);
        node("Reshape", {intermediate_qdq(t, rn + ".tanh", enc(r)), int64s(rn + ".shape", std::vector<int64_t>(s.begin(), s.end()))}, y);
        return define(r, y);
      }
      case OpKind::kGeluTanh: {
        const std::string y = fresh(rn + ".f");
        attr_string(node("Gelu", {use(op.operands[0])}, y), "approximate", "tanh");
        return define(r, y);
      }
      case OpKind::kGelu: {
        const std::string y = fresh(rn + ".f");
        node("Gelu", {use(op.operands[0])}, y);
        return define(r, y);
      }
      case OpKind::kLayerNorm: {
        const std::string y = fresh(rn + ".f");
        auto* n = node("LayerNormalization", {use(op.operands[0]), use(op.operands[1]), use(op.operands[2])}, y);
        attr_int(n, "axis", -1);
        attr_float(n, "epsilon", static_cast<float>(graph::attr_float(op.attrs, "eps")));
        return define(r, y);
      }
      case OpKind::kRmsNorm: {
        const std::string y = fresh(rn + ".f");
        auto* n = node("RMSNormalization", {use(op.operands[0]), use(op.operands[1])}, y);
        attr_int(n, "axis", -1);
        attr_float(n, "epsilon", static_cast<float>(graph::attr_float(op.attrs, "eps")));
        if (!options_.floor_rms_norm) return define(r, y);
        add_floats(rn + ".floor_scale", {}, {enc(r).scale});
        const std::string t = fresh(rn + ".steps"), f = fresh(rn + ".floor"), yf = fresh(rn + ".f");
        node("Div", {y, rn + ".floor_scale"}, t);
        node("Floor", {t}, f);
        node("Mul", {f, rn + ".floor_scale"}, yf);
        return define(r, yf);
      }
      default: break;
    }
    std::vector<std::string> in;
    for (ValueId v : op.operands) in.push_back(use(v));
    const std::string y = fresh(rn + ".f");
    switch (op.kind) {
      case OpKind::kAdd: node("Add", in, y); break;
      case OpKind::kMul: node("Mul", in, y); break;
      case OpKind::kMatMul: node("MatMul", in, y); break;
      case OpKind::kSoftmax: attr_int(node("Softmax", in, y), "axis", -1); break;
      case OpKind::kConcat: attr_int(node("Concat", in, y), "axis", graph::attr_int(op.attrs, "axis")); break;
      case OpKind::kTranspose: {
        const auto& perm = graph::attr_ints(op.attrs, "perm");
        if (perm != std::vector<int64_t>{0, 2, 3, 1}) {
          attr_ints(node("Transpose", in, y), "perm", perm);
          break;
        }
        // The QNN EP takes no 4-D Transpose (0, 2, 3, 1) (ONNX Runtime merges two transposes
        // into one, so nor a pair): [1, A, B, C] -> [1, A, B*C] -> (0, 2, 1) -> [1, B*C, A] ->
        // [1, B, C, A], each step on the result's encoding.
        const Shape& x = g_.value(op.operands[0]).type.shape;
        const Encoding& e = enc(r);
        const std::string flat = fresh(rn + ".flat"), turned = fresh(rn + ".turned");
        node("Reshape", {in[0], int64s(rn + ".flat_shape", {x[0], x[1], x[2] * x[3]})}, flat);
        attr_ints(node("Transpose", {intermediate_qdq(flat, rn + ".flat", e)}, turned), "perm", {0, 2, 1});
        const Shape& out = g_.value(r).type.shape;
        node("Reshape", {intermediate_qdq(turned, rn + ".turned", e),
                         int64s(rn + ".out_shape", std::vector<int64_t>(out.begin(), out.end()))},
             y);
        break;
      }
      case OpKind::kReshape: {
        const Shape& s = g_.value(r).type.shape;
        in.push_back(int64s(rn + ".shape", std::vector<int64_t>(s.begin(), s.end())));
        node("Reshape", in, y);
        break;
      }
      case OpKind::kSlice:
        in.push_back(int64s(rn + ".starts", {graph::attr_int(op.attrs, "start")}));
        in.push_back(int64s(rn + ".ends", {graph::attr_int(op.attrs, "end")}));
        in.push_back(int64s(rn + ".axes", {graph::attr_int(op.attrs, "axis")}));
        node("Slice", in, y);
        break;
      default: throw_failure("qnn export: graph {}: op {} has no ONNX form", g_.name(), graph::op_kind_name(op.kind));
    }
    define(r, y);
  }

  // An input-independent result (static_values.h): its reference values as an integer
  // initializer on its encoding where something input-dependent reads it; no node at all.
  void emit_static(ValueId r) {
    auto it = statics_.frontier.find(r);
    if (it == statics_.frontier.end()) return;
    const auto& val = g_.value(r);
    const Encoding& e = enc(r);
    const Tensor& t = it->second;
    std::vector<int64_t> codes(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = quant::quantize_value(t.data<float>()[i], e);
    const std::string name = val.name + ".static";
    add_ints(name, onnx_type(e.dtype), std::vector<int64_t>(val.type.shape.begin(), val.type.shape.end()), codes);
    qname_[static_cast<size_t>(r)] = name;
  }

  // The linear's weights as DequantizeLinear of the bundle's integers, transposed to [in, out]
  // for MatMul: per channel (axis 1), per block (axis 0, block_size), or the LPBQ form when every
  // block scale is exactly an integer 1..255 times one float per channel.
  std::string weight_operand(const std::string& wname, const WeightEncoding& w) {
    if (w.is_float()) throw_failure("qnn export: graph {}: weight {} is float16", g_.name(), wname);
    const int64_t K = w.cols, N = w.rows, nb = w.blocks();
    const int32_t wt = onnx_type(w.dtype);
    const std::string qt = wname + ".q";
    if (!initializers_.count(qt)) add_initializer(qt, wt, {K, N}, transposed_codes(w, g_.weights()->get(wname), wt));
    const std::string out = fresh(wname + ".dq");
    if (w.block_size == 0) {
      std::vector<float> s(w.scales.begin(), w.scales.end());
      add_floats(wname + ".scale", {N}, s);
      add_ints(wname + ".zero_point", wt, {N}, std::vector<int64_t>(static_cast<size_t>(N), 0));
      attr_int(node("DequantizeLinear", {qt, wname + ".scale", wname + ".zero_point"}, out), "axis", 1);
      return out;
    }
    std::vector<float> s(static_cast<size_t>(nb * N));  // [blocks, N]
    for (int64_t n = 0; n < N; ++n)
      for (int64_t b = 0; b < nb; ++b) s[static_cast<size_t>(b * N + n)] = w.scales[static_cast<size_t>(n * nb + b)];
    add_ints(wname + ".zero_point", wt, {nb, N}, std::vector<int64_t>(static_cast<size_t>(nb * N), 0));
    std::string scale = wname + ".scale";
    std::vector<float> channel;
    std::vector<int64_t> k;
    if (lpbq_form(w, &channel, &k)) {
      add_ints(wname + ".block_scale.q", kUint8, {nb, N}, k);
      add_floats(wname + ".channel_scale", {N}, channel);
      add_ints(wname + ".block_scale.zero_point", kUint8, {N}, std::vector<int64_t>(static_cast<size_t>(N), 0));
      scale = fresh(wname + ".block_scale");
      attr_int(node("DequantizeLinear",
                    {wname + ".block_scale.q", wname + ".channel_scale", wname + ".block_scale.zero_point"}, scale),
               "axis", 1);
    } else {
      add_floats(scale, {nb, N}, s);
    }
    auto* n = node("DequantizeLinear", {qt, scale, wname + ".zero_point"}, out);
    attr_int(n, "axis", 0);
    attr_int(n, "block_size", w.block_size);
    return out;
  }
  // The weight's codes transposed to [K, N] as ONNX type `type` bytes, rounded a block of channels
  // at a time: a 3B model's head would be 5 GB as one int64 table.
  static std::string transposed_codes(const WeightEncoding& w, const Tensor& weight, int32_t type) {
    const int64_t K = w.cols, N = w.rows;
    if (type != kInt4 && type != kInt8 && type != kInt16)
      throw_failure("qnn export: weight codes as ONNX type {}", type);
    const int bytes = type == kInt4 ? 0 : type == kInt8 ? 1 : 2;  // 0: two codes per byte
    std::string raw(static_cast<size_t>(bytes == 0 ? (K * N + 1) / 2 : K * N * bytes), '\0');
    auto* out = reinterpret_cast<uint8_t*>(raw.data());
    constexpr int64_t kRows = 64;  // channels rounded at a time
    // Blocks write disjoint bytes: with 4-bit codes, channels n and n + 1 share a byte, so blocks
    // start at even channels and an odd N (a byte across rows k and k + 1) runs as one block.
    const int64_t block = type == kInt4 && N % 2 != 0 ? N : kRows;
    ThreadPool::global().parallel_for((N + block - 1) / block, [&](int64_t b0, int64_t b1) {
      std::vector<int16_t> codes(static_cast<size_t>(std::min(block, N) * K));
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t n0 = b * block, n1 = std::min(N, n0 + block);
        quant::weight_codes(w, weight, n0, n1, codes.data());
        for (int64_t n = n0; n < n1; ++n)
          for (int64_t k = 0; k < K; ++k) {
            const int16_t q = codes[static_cast<size_t>((n - n0) * K + k)];
            const int64_t i = k * N + n;
            if (bytes == 0) {
              out[i / 2] = static_cast<uint8_t>(out[i / 2] | ((static_cast<uint8_t>(q) & 0xF) << (4 * (i % 2))));
            } else if (bytes == 1) {
              out[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
            } else {
              const auto u = static_cast<uint16_t>(q);
              out[2 * i] = static_cast<uint8_t>(u & 0xff);
              out[2 * i + 1] = static_cast<uint8_t>(u >> 8);
            }
          }
      }
    });
    return raw;
  }

  // Per channel n: scale[n, b] == float(k[b, n]) * channel[n] exactly, k in 1..255.
  static bool lpbq_form(const WeightEncoding& w, std::vector<float>* channel, std::vector<int64_t>* k) {
    const int64_t N = w.rows, nb = w.blocks();
    channel->assign(static_cast<size_t>(N), 0.0f);
    k->assign(static_cast<size_t>(nb * N), 0);
    for (int64_t n = 0; n < N; ++n) {
      const float* sc = w.scales.data() + n * nb;
      const float top = *std::max_element(sc, sc + nb);
      bool found = false;
      for (int64_t kt = 1; kt <= 255 && !found; ++kt) {
        const float c = top / static_cast<float>(kt);
        if (!(c > 0.0f) || static_cast<float>(kt) * c != top) continue;
        found = true;
        for (int64_t b = 0; b < nb && found; ++b) {
          const float kb = std::nearbyint(sc[b] / c);
          found = kb >= 1.0f && kb <= 255.0f && kb * c == sc[b];
          (*k)[static_cast<size_t>(b * N + n)] = static_cast<int64_t>(kb);
        }
        (*channel)[static_cast<size_t>(n)] = c;
      }
      if (!found) return false;
    }
    return true;
  }

  void emit_linear(const graph::Op& op) {
    const ValueId r = op.result;
    const std::string& rn = g_.value(r).name;
    const std::string& wname = g_.value(op.operands[1]).name;
    auto it = set_.weights.find(wname);
    if (it == set_.weights.end()) throw_failure("qnn export: graph {}: weight {} has no encoding", g_.name(), wname);
    const WeightEncoding& w = *it->second;
    const std::string y = fresh(rn + ".f");
    node("MatMul", {use(op.operands[0]), weight_operand(wname, w)}, y);
    if (op.operands.size() < 3) return define(r, narrowed(r, op.operands[0], y));
    // Bias: int32 on the accumulator's scale (input scale x the channel's largest weight scale).
    const ValueId bv = op.operands[2];
    std::string bias;
    if (options_.quantize_constants) {
      const Tensor b = constant_tensor(bv);
      const float ex = enc(op.operands[0]).scale;
      const int64_t N = w.rows, nb = w.blocks();
      std::vector<float> s(static_cast<size_t>(N));
      std::vector<int64_t> codes(static_cast<size_t>(N));
      for (int64_t n = 0; n < N; ++n) {
        const float* sc = w.scales.data() + n * nb;
        s[static_cast<size_t>(n)] = ex * *std::max_element(sc, sc + nb);
        codes[static_cast<size_t>(n)] = static_cast<int64_t>(std::nearbyint(b.data<float>()[n] / s[static_cast<size_t>(n)]));
      }
      const std::string bn = g_.value(bv).name + "@" + rn;
      add_ints(bn + ".q", kInt32, {N}, codes);
      add_floats(bn + ".scale", {N}, s);
      add_ints(bn + ".zero_point", kInt32, {N}, std::vector<int64_t>(static_cast<size_t>(N), 0));
      bias = fresh(bn + ".dq");
      attr_int(node("DequantizeLinear", {bn + ".q", bn + ".scale", bn + ".zero_point"}, bias), "axis", 0);
    } else {
      bias = constant_operand(bv);
    }
    const std::string yb = fresh(rn + ".f");
    node("Add", {y, bias}, yb);
    define(r, narrowed(r, op.operands[0], yb));
  }

  // Gathers from a weight or constant table read from a table already on the result's encoding
  // (what quantizing the gathered rows gives, element by element), so the Gather moves integers
  // of one encoding; from an activation, the usual DQ -> Gather -> Q.
  void emit_gather(const graph::Op& op) {
    const ValueId r = op.result, tv = op.operands[0];
    const auto& table = g_.value(tv);
    const std::string& rn = g_.value(r).name;
    std::string src;
    if (table.kind == ValueKind::kWeight || table.kind == ValueKind::kConstant) {
      const Encoding& e = enc(r);
      const std::string qt = rn + ".table";
      const std::vector<int64_t> dims(table.type.shape.begin(), table.type.shape.end());
      if (table.kind == ValueKind::kWeight) {
        auto it = set_.weights.find(table.name);
        if (it == set_.weights.end())
          throw_failure("qnn export: graph {}: gathered weight {} has no encoding", g_.name(), table.name);
        if (!it->second->is_float()) {
          if (!initializers_.count(qt))
            add_initializer(qt, onnx_type(e.dtype), dims, table_on_encoding(*it->second, g_.weights()->get(table.name), e));
          src = dq(qt, rn, e);
        }
      }
      if (src.empty()) {  // a constant table, or a float16 one: its (rounded) values onto e
        const Tensor f = constant_tensor(tv);
        std::vector<float> vals(f.data<float>(), f.data<float>() + f.numel());
        if (table.kind == ValueKind::kWeight) vals = quant::dequantize_weight(*set_.weights.at(table.name), f.data<float>());
        std::vector<int64_t> codes(vals.size());
        for (size_t i = 0; i < vals.size(); ++i) codes[i] = quant::quantize_value(vals[i], e);
        add_ints(qt, onnx_type(e.dtype), dims, codes);
        src = dq(qt, rn, e);
      }
    } else {
      src = use(tv);
    }
    const std::string y = fresh(rn + ".f");
    attr_int(node("Gather", {src, use(op.operands[1])}, y), "axis", 0);
    define(r, y);
  }

  // A gathered weight table's values (its codes times its row scales, as dequantize_weight gives
  // them) quantized onto the gather's result encoding `e`, as ONNX bytes of e's type, a block of
  // rows at a time: a 3.8B model's embedding would be 2.5 GB of float32 and 4.9 GB of int64 codes
  // as whole tables.
  static std::string table_on_encoding(const WeightEncoding& w, const Tensor& weight, const Encoding& e) {
    const int32_t type = onnx_type(e.dtype);
    if (type == kInt4) throw_failure("qnn export: a gather result on a 4-bit encoding");
    const int64_t rows = w.rows, cols = w.cols;
    constexpr int64_t kRows = 64;
    std::vector<std::string> parts(static_cast<size_t>((rows + kRows - 1) / kRows));
    ThreadPool::global().parallel_for(static_cast<int64_t>(parts.size()), [&](int64_t b0, int64_t b1) {
      std::vector<int16_t> q(static_cast<size_t>(kRows * cols));
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t r0 = b * kRows, r1 = std::min(rows, r0 + kRows);
        quant::weight_codes(w, weight, r0, r1, q.data());
        std::vector<int64_t> codes(static_cast<size_t>((r1 - r0) * cols));
        for (size_t i = 0; i < codes.size(); ++i) {
          const int64_t r = r0 + static_cast<int64_t>(i) / cols, c = static_cast<int64_t>(i) % cols;
          codes[i] = quant::quantize_value(static_cast<float>(q[i]) * w.scale(r, c), e);
        }
        parts[static_cast<size_t>(b)] = pack_integers(codes, type);
      }
    });
    std::string raw;
    size_t total = 0;
    for (const std::string& p : parts) total += p.size();
    raw.reserve(total);
    for (std::string& p : parts) {
      raw += p;
      std::string().swap(p);
    }
    return raw;
  }

  // x*cos + rotate_half(x)*sin, rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2]); cos and sin
  // [B, S, D] meet x [B, H, S, D] through a reshape to [B, 1, S, D]. Intermediates: the halves
  // keep x's encoding, the negated half its mirror (exact), the rotated x and both products one
  // symmetric encoding covering x's range (|cos|, |sin| <= 1).
  void emit_rope(const graph::Op& op) {
    const ValueId r = op.result, x = op.operands[0];
    const std::string& rn = g_.value(r).name;
    const Shape& xs = g_.value(x).type.shape;
    const int64_t D = xs.back(), half = D / 2;
    const Encoding& ex = enc(x);
    Encoding neg = ex;
    neg.zero_point = static_cast<int32_t>(ex.qmin + ex.qmax - ex.zero_point);
    const Encoding sym = quant::encoding_of(kIntermediate, kernels::htp_rope_intermediate(quant::qparams(ex)));
    auto slice = [&](int64_t start, int64_t end, const std::string& tag) {
      const std::string y = fresh(tag);
      node("Slice", {use(x), int64s(tag + ".starts", {start}), int64s(tag + ".ends", {end}), int64s(rn + ".axes", {-1})}, y);
      return intermediate(y, tag, ex);
    };
    const std::string lo_half = slice(0, half, rn + ".x1"), hi_half = slice(half, D, rn + ".x2");
    const std::string negated = fresh(rn + ".neg_x2");
    node("Neg", {hi_half}, negated);
    const std::string rot = fresh(rn + ".rotated");
    attr_int(node("Concat", {intermediate(negated, rn + ".neg_x2", neg), lo_half}, rot), "axis", -1);
    const std::string rot_q = intermediate(rot, rn + ".rotated", sym);
    std::vector<int64_t> table_shape(xs.begin(), xs.end());
    table_shape[1] = 1;
    // The tables are tiled over the heads rather than broadcast: in a whole decoder the HTP
    // broadcast [B, 1, S, D] over 9 query heads wrongly for S > 1 (up to 17415 steps off in
    // prefill's layer 0; the same Mul alone, and the 3 key heads, were exact). Tile moves integers.
    auto table = [&](ValueId t) {
      const std::string tag = g_.value(t).name + "@" + rn;
      const bool activation = g_.value(t).type.dtype == DType::kF32 && g_.value(t).kind != ValueKind::kWeight &&
                              g_.value(t).kind != ValueKind::kConstant;
      const std::string y = fresh(tag + ".heads");
      node("Reshape", {use(t), int64s(rn + ".table_shape", table_shape)}, y);
      const std::string shaped = activation ? intermediate(y, tag + ".heads", enc(t)) : y;
      if (xs[1] == 1) return shaped;
      const std::string tiled = fresh(tag + ".tiled");
      node("Tile", {shaped, int64s(rn + ".table_reps", {1, xs[1], 1, 1})}, tiled);
      return activation ? intermediate(tiled, tag + ".tiled", enc(t)) : tiled;
    };
    const std::string xc = fresh(rn + ".x_cos"), rs = fresh(rn + ".rot_sin");
    node("Mul", {use(x), table(op.operands[1])}, xc);
    node("Mul", {rot_q, table(op.operands[2])}, rs);
    const std::string y = fresh(rn + ".f");
    node("Add", {intermediate(xc, rn + ".x_cos", sym), intermediate(rs, rn + ".rot_sin", sym)}, y);
    define(r, y);
  }

  const pipeline::GraphBundle& bundle_;
  const Graph& g_;
  const quant::EncodingSet& set_;
  const OnnxExportOptions& options_;
  const StaticValues statics_;
  wire::Graph* gp_ = nullptr;
  std::vector<std::string> qname_;            // per value: its integer (or int32) tensor
  std::map<ValueId, std::string> output_name_;  // op results quantized straight into an output
  std::set<std::string> initializers_;
  std::set<ValueId> on_grid_;  // norm weights and biases: sent on their 16-bit constant grid
  std::map<std::string, int> fresh_count_;
  int64_t node_count_ = 0;
};

}  // namespace

OnnxModel export_onnx_qdq(const pipeline::GraphBundle& bundle, const OnnxExportOptions& options) {
  if (!bundle.quantized() || !bundle.encodings() || bundle.encodings()->is_float())
    throw_input_error("--lowering qnn: graph {} is not quantized (use an integer --quant_recipe, not fp16)",
                      bundle.graph()->name());
  return Exporter(bundle, options).run();
}

}  // namespace genai::backends::qnn
