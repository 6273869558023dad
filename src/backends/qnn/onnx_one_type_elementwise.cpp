#include "backends/qnn/onnx_one_type_elementwise.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace genai::backends::qnn {
namespace {

// TensorProto.DataType values of the integer types a node unit can carry.
enum : int32_t { kElemFloat = 1, kElemUint8 = 2, kElemInt8 = 3, kElemUint16 = 4, kElemInt16 = 5 };

int type_bits(int32_t t) {
  switch (t) {
    case kElemUint8:
    case kElemInt8: return 8;
    case kElemUint16:
    case kElemInt16: return 16;
    default: return 0;
  }
}
bool type_signed(int32_t t) { return t == kElemInt8 || t == kElemInt16; }
int32_t wide_type(bool is_signed) { return is_signed ? kElemInt16 : kElemUint16; }
// 8-bit code c sits at code c * factor of the 16-bit grid (255 * 257 = 65535, -128 * 256 = -32768).
int64_t widen_factor(bool is_signed) { return is_signed ? 256 : 257; }

int64_t integer_at(const wire::Tensor& t, size_t i) {
  const char* p = t.raw_data.data();
  switch (t.data_type) {
    case kElemUint8: return static_cast<uint8_t>(p[i]);
    case kElemInt8: return static_cast<int8_t>(p[i]);
    case kElemUint16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case kElemInt16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    default: throw_failure("qnn export: initializer {} is not an 8- or 16-bit integer tensor", t.name);
  }
}
size_t element_count(const wire::Tensor& t) { return t.raw_data.size() / static_cast<size_t>(type_bits(t.data_type) / 8); }

// 16-bit little-endian codes.
std::string pack16(const std::vector<int64_t>& v, bool is_signed) {
  std::string out;
  for (int64_t x : v) {
    const uint16_t u = is_signed ? static_cast<uint16_t>(static_cast<int16_t>(x)) : static_cast<uint16_t>(x);
    out.append(reinterpret_cast<const char*>(&u), 2);
  }
  return out;
}

class OneTypePass {
 public:
  explicit OneTypePass(wire::Graph& g) : g_(g) {
    for (size_t i = 0; i < g_.initializers.size(); ++i) init_at_[g_.initializers[i].name] = i;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      for (const auto& o : g_.nodes[i].outputs) producer_[o] = i;
      for (const auto& in : g_.nodes[i].inputs) consumers_[in].push_back(i);
    }
    for (const auto& o : g_.outputs) consumers_[o.name].push_back(g_.nodes.size());  // a graph output: no node
  }

  int run() {
    std::vector<wire::Node> nodes;
    nodes.reserve(g_.nodes.size());
    int changed = 0;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const auto unit = node_unit(i);
      if (!unit) {
        nodes.push_back(g_.nodes[i]);
        continue;
      }
      ++changed;
      wire::Node op = g_.nodes[i];
      for (size_t k = 0; k < op.inputs.size(); ++k)
        if (type_bits(unit->operand_types[k]) < 16) op.inputs[k] = widen_operand(*unit->operands[k], nodes);
      if (type_bits(unit->result_type) == 16) {
        nodes.push_back(std::move(op));
        continue;
      }
      // The op gives the wide grid of its result's encoding; a Convert then gives the result.
      const std::string y = op.outputs[0];
      op.outputs[0] = y + "/wide.f";
      const auto [s, z] = wide_qparams(*unit->result_q);
      const std::string wq = y + "/wide.q";
      nodes.push_back(std::move(op));
      nodes.push_back(make_node("QuantizeLinear", {y + "/wide.f", s, z}, wq));
      nodes.push_back(make_node("DequantizeLinear", {wq, s, z}, y));
    }
    g_.nodes = std::move(nodes);
    return changed;
  }

 private:
  struct Unit {
    std::vector<const wire::Node*> operands;  // the DequantizeLinear of each operand
    std::vector<int32_t> operand_types;
    const wire::Node* result_q = nullptr;  // the one QuantizeLinear of the result
    int32_t result_type = 0;
  };

  // Node i as an elementwise node unit with mixed 8- and 16-bit types of one signedness, or nullopt.
  std::optional<Unit> node_unit(size_t i) const {
    const wire::Node& n = g_.nodes[i];
    static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div"};
    const bool binary = kBinary.count(n.op_type) && n.inputs.size() == 2;
    if ((!binary && n.op_type != "Concat") || n.outputs.size() != 1) return std::nullopt;
    Unit u;
    for (const auto& in : n.inputs) {
      const wire::Node* dq = produced_by(in, "DequantizeLinear");
      if (!dq) return std::nullopt;
      u.operands.push_back(dq);
      u.operand_types.push_back(zero_point_type(*dq));
    }
    const auto uses = consumers_.find(n.outputs[0]);
    if (uses == consumers_.end() || uses->second.size() != 1 || uses->second[0] >= g_.nodes.size()) return std::nullopt;
    u.result_q = &g_.nodes[uses->second[0]];
    if (u.result_q->op_type != "QuantizeLinear") return std::nullopt;
    u.result_type = zero_point_type(*u.result_q);
    std::set<int> bits;
    std::set<bool> signs;
    for (int32_t t : u.operand_types) {
      bits.insert(type_bits(t));
      signs.insert(type_signed(t));
    }
    bits.insert(type_bits(u.result_type));
    signs.insert(type_signed(u.result_type));
    if (bits.count(0) || signs.size() != 1 || bits.size() == 1) return std::nullopt;
    return u;
  }

  const wire::Node* produced_by(const std::string& tensor, const char* op_type) const {
    const auto it = producer_.find(tensor);
    if (it == producer_.end() || g_.nodes[it->second].op_type != op_type) return nullptr;
    return &g_.nodes[it->second];
  }
  const wire::Tensor* initializer(const std::string& name) const {
    const auto it = init_at_.find(name);
    return it == init_at_.end() ? nullptr : &g_.initializers[it->second];
  }
  // The integer type of a Q/DQ's quantized side: its zero point's (0 when it has none).
  int32_t zero_point_type(const wire::Node& qdq) const {
    if (qdq.inputs.size() < 3) return 0;
    const wire::Tensor* z = initializer(qdq.inputs[2]);
    return z ? z->data_type : 0;
  }

  // Scale and zero point of the 16-bit grid that holds a Q/DQ's 8-bit grid (per-tensor only).
  std::pair<std::string, std::string> wide_qparams(const wire::Node& qdq) {
    const wire::Tensor* s = initializer(qdq.inputs[1]);
    const wire::Tensor* z = initializer(qdq.inputs[2]);
    if (!s || s->data_type != kElemFloat || s->raw_data.size() != sizeof(float) || element_count(*z) != 1)
      throw_failure("qnn export: {} {} has no per-tensor encoding to widen", qdq.op_type, qdq.name);
    const bool is_signed = type_signed(z->data_type);
    const std::string sn = s->name + ".wide", zn = z->name + ".wide";
    if (!init_at_.count(sn)) {  // (adding initializers moves them: read s and z first)
      float scale;
      std::memcpy(&scale, s->raw_data.data(), sizeof(float));
      scale /= static_cast<float>(widen_factor(is_signed));
      std::string raw(sizeof(float), '\0');
      std::memcpy(raw.data(), &scale, sizeof(float));
      const std::string zero = pack16({integer_at(*z, 0) * widen_factor(is_signed)}, is_signed);
      add_initializer({{}, kElemFloat, sn, raw});
      add_initializer({{}, wide_type(is_signed), zn, zero});
    }
    return {sn, zn};
  }

  // A 16-bit float tensor holding the 8-bit operand `dq` dequantizes, made by nodes appended to `nodes`.
  std::string widen_operand(const wire::Node& dq, std::vector<wire::Node>& nodes) {
    const wire::Tensor* x = initializer(dq.inputs[0]);
    if (!x) {  // an activation: requantized onto the wide grid (exact)
      const auto [s, z] = wide_qparams(dq);
      const std::string q = fresh(dq.outputs[0] + "/wide.q");
      nodes.push_back(make_node("QuantizeLinear", {dq.outputs[0], s, z}, q));
      const std::string out = fresh(dq.outputs[0] + "/wide");
      nodes.push_back(make_node("DequantizeLinear", {q, s, z}, out));
      return out;
    }
    // A constant: codes and zero point times 2^k, the scale over 2^k (exact), k as large as the
    // 16-bit range allows. (Kept at the same codes, a scalar is code 1 on a scale of |c|, and
    // QNN's compiler for QCM6490 and SAR2230P then fails to allocate memory when the input's
    // scale x |c| is just above the result's: 23 GB and QNN_COMMON_ERROR_MEM_ALLOC on granite's
    // residual multiplier. At code 32768 the requantization is far from that band.)
    const wire::Tensor codes = *x, zero = *initializer(dq.inputs[2]), scale = *initializer(dq.inputs[1]);
    if (scale.data_type != kElemFloat) throw_failure("qnn export: the scale of {} is not float", codes.name);
    const bool is_signed = type_signed(zero.data_type);
    const std::string name = codes.name + ".16";
    if (!init_at_.count(name)) {  // (copies above: adding initializers moves them)
      std::vector<int64_t> v(element_count(codes)), z(element_count(zero));
      int64_t top = 0;
      for (size_t i = 0; i < v.size(); ++i) top = std::max(top, std::abs(v[i] = integer_at(codes, i)));
      for (size_t i = 0; i < z.size(); ++i) top = std::max(top, std::abs(z[i] = integer_at(zero, i)));
      const int64_t limit = is_signed ? 32767 : 65535;
      int64_t factor = 1;
      while (top * factor * 2 <= limit && factor < (int64_t{1} << 15)) factor *= 2;
      for (auto& c : v) c *= factor;
      for (auto& c : z) c *= factor;
      std::string raw = scale.raw_data;
      for (size_t i = 0; i + sizeof(float) <= raw.size(); i += sizeof(float)) {
        float f;
        std::memcpy(&f, raw.data() + i, sizeof(float));
        f /= static_cast<float>(factor);
        std::memcpy(raw.data() + i, &f, sizeof(float));
      }
      add_initializer({codes.dims, wide_type(is_signed), name, pack16(v, is_signed)});
      add_initializer({scale.dims, kElemFloat, name + ".scale", raw});
      add_initializer({zero.dims, wide_type(is_signed), name + ".zero_point", pack16(z, is_signed)});
    }
    wire::Node n = dq;
    n.inputs = {name, name + ".scale", name + ".zero_point"};
    n.outputs = {fresh(dq.outputs[0] + "/16")};
    n.name = n.outputs[0];
    nodes.push_back(n);
    return n.outputs[0];
  }

  void add_initializer(wire::Tensor t) {
    init_at_[t.name] = g_.initializers.size();
    g_.initializers.push_back(std::move(t));
  }
  wire::Node make_node(const char* op_type, std::vector<std::string> inputs, const std::string& output) {
    wire::Node n;
    n.op_type = op_type;
    n.inputs = std::move(inputs);
    n.outputs = {output};
    n.name = output;
    return n;
  }
  std::string fresh(const std::string& base) { return fmt::format("{}/{}", base, fresh_[base]++); }

  wire::Graph& g_;
  std::map<std::string, size_t> init_at_, producer_;
  std::map<std::string, std::vector<size_t>> consumers_;
  std::map<std::string, int> fresh_;
};

}  // namespace

int give_elementwise_ops_one_type(wire::Graph& graph) { return OneTypePass(graph).run(); }

}  // namespace genai::backends::qnn
