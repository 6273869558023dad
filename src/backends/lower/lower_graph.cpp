#include "backends/lower/lower_graph.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "backends/lower/kv_fusion.h"
#include "backends/payload/op_scratch.h"
#include "backends/payload/payload_format.h"
#include "core/sha256.h"
#include "compile/memory_planner.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "graph/graph.h"
#include "kernels/packed_layout.h"
#include "kernels/packed_linear.h"
#include "quant/encoding_set.h"

namespace genai::backends {
namespace {

static_assert(std::endian::native == std::endian::little, "payload data is little-endian");

using graph::OpKind;
using graph::ValueId;
using graph::ValueKind;

// How an op reads a weight or constant; one value can be read in several ways (a tied
// embedding is a gather table and a linear weight), each its own payload tensor.
// kNormWeight: a norm's weight or bias, which an integer program carries on its 16-bit constant
// grid (quant::on_constant_grid), as the HTP receives it.
enum class Role { kLinearWeight, kLinearBias, kGatherTable, kNormWeight, kFloat };

fb::OpKind op_kind(OpKind k) {
  switch (k) {
    case OpKind::kGather: return fb::OpKind::Gather;
    case OpKind::kRmsNorm: return fb::OpKind::RmsNorm;
    case OpKind::kLinear: return fb::OpKind::Linear;
    case OpKind::kAdd: return fb::OpKind::Add;
    case OpKind::kMul: return fb::OpKind::Mul;
    case OpKind::kSilu: return fb::OpKind::Silu;
    case OpKind::kRope: return fb::OpKind::Rope;
    case OpKind::kMatMul: return fb::OpKind::MatMul;
    case OpKind::kSoftmax: return fb::OpKind::Softmax;
    case OpKind::kConcat: return fb::OpKind::Concat;
    case OpKind::kReshape: return fb::OpKind::Reshape;
    case OpKind::kTranspose: return fb::OpKind::Transpose;
    case OpKind::kSlice: return fb::OpKind::Slice;
    case OpKind::kGeluTanh: return fb::OpKind::GeluTanh;
    case OpKind::kGelu: return fb::OpKind::Gelu;
    case OpKind::kTanh: return fb::OpKind::Tanh;
    case OpKind::kLayerNorm: return fb::OpKind::LayerNorm;
  }
  throw_failure("lower: unknown op kind {}", static_cast<int>(k));
}

template <typename T>
std::vector<uint8_t> bytes_of(const T* data, size_t n) {
  std::vector<uint8_t> out(n * sizeof(T));
  if (n) std::memcpy(out.data(), data, out.size());
  return out;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

class Lowering {
 public:
  Lowering(const pipeline::GraphBundle& bundle, const compile::LoweringTarget& target, ProgramPrecision precision,
           SharedWeightData* shared)
      : g_(*bundle.graph()), bundle_(bundle), target_(target), fp_(precision == ProgramPrecision::kFloat16),
        shared_(shared) {
    enc_ = bundle.encodings().get();
    if (!fp_) {
      if (!bundle.quantized() || !enc_ || enc_->is_float())
        throw_failure("lower: graph {} has no integer encodings for a quantized program", g_.name());
    }
  }

  compile::LoweredMethod run(std::string_view method_name, std::string_view delegate_id);

 private:
  const quant::Encoding& encoding(const std::string& name) const {
    auto it = enc_->activations.find(name);
    if (it == enc_->activations.end()) throw_failure("lower: graph {}: tensor {} has no encoding", g_.name(), name);
    if (it->second.is_float())
      throw_failure("lower: graph {}: tensor {} is float16 in a quantized program", g_.name(), name);
    return it->second;
  }

  void set_quant(fb::TensorT& t, const quant::Encoding& e) {
    t.type = e.dtype == quant::QDType::kU8 ? fb::ElementType::U8 : fb::ElementType::U16;
    if (e.dtype != quant::QDType::kU8 && e.dtype != quant::QDType::kU16)
      throw_failure("lower: graph {}: tensor {} has activation type {} (uint8/uint16 only)", g_.name(), t.name,
                    quant::qdtype_name(e.dtype));
    t.quant = std::make_unique<fb::QuantParams>(e.scale, e.zero_point, static_cast<int32_t>(e.qmin),
                                                static_cast<int32_t>(e.qmax));
  }

  std::string add_data(const std::string& name, std::string_view tag, std::vector<uint8_t> bytes) {
    std::string key = fmt::format("{}.{}.{}", name, tag, sha256_hex(std::span<const uint8_t>(bytes)).substr(0, 16));
    if (!named_.count(key)) named_.emplace(key, pte::NamedData{key, pte::Blob(std::move(bytes))});
    return key;
  }

  // Removes the dropped ops and every tensor no op or I/O refers to any more, renumbering the rest.
  void drop_unused(std::vector<std::unique_ptr<fb::OpT>>& fops, const std::vector<bool>& dropped,
                   std::vector<std::unique_ptr<fb::IoT>>& ins, std::vector<std::unique_ptr<fb::IoT>>& outs) {
    std::vector<std::unique_ptr<fb::OpT>> kept;
    for (size_t i = 0; i < fops.size(); ++i)
      if (!dropped[i]) kept.push_back(std::move(fops[i]));
    fops = std::move(kept);
    std::vector<bool> used(tensors_.size(), false);
    for (const auto& o : fops) {
      used[static_cast<size_t>(o->output)] = true;
      for (int in : o->inputs) used[static_cast<size_t>(in)] = true;
    }
    for (const auto& io : ins) used[static_cast<size_t>(io->tensor)] = true;
    for (const auto& io : outs) used[static_cast<size_t>(io->tensor)] = true;
    std::vector<int> index(tensors_.size(), -1);
    std::vector<std::unique_ptr<fb::TensorT>> tensors;
    for (size_t t = 0; t < tensors_.size(); ++t) {
      if (!used[t]) continue;
      index[t] = static_cast<int>(tensors.size());
      tensors.push_back(std::move(tensors_[t]));
    }
    tensors_ = std::move(tensors);
    for (auto& o : fops) {
      o->output = index[static_cast<size_t>(o->output)];
      for (int& in : o->inputs) in = index[static_cast<size_t>(in)];
    }
    for (auto& io : ins) io->tensor = index[static_cast<size_t>(io->tensor)];
    for (auto& io : outs) io->tensor = index[static_cast<size_t>(io->tensor)];
  }

  int new_tensor(std::unique_ptr<fb::TensorT> t) {
    tensors_.push_back(std::move(t));
    return static_cast<int>(tensors_.size() - 1);
  }

  std::vector<float> float_values(const graph::Value& v) const {
    Tensor t = v.kind == ValueKind::kConstant ? *v.constant : g_.weights()->f32(v.name);
    if (t.dtype() != DType::kF32) t = t.to_f32();
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
  }

  const quant::WeightEncoding* weight_encoding(const std::string& name) const {
    if (!enc_) return nullptr;
    auto it = enc_->weights.find(name);
    return it == enc_->weights.end() ? nullptr : it->second.get();
  }

  int data_tensor(ValueId id, Role role, const graph::Op& user);
  std::unique_ptr<fb::TensorT> weight_data_tensor(const graph::Value& v, Role role, const graph::Op& user);
  void activation_type(fb::TensorT& t, const graph::Value& v);

  // The passes of run(), in order.
  void add_value_tensors();
  void add_ops();
  void set_attributes(fb::OpT& o, const graph::Op& op) const;
  void check_passthrough_encodings(const fb::OpT& o, const graph::Op& op) const;
  void fuse_kv_caches();
  void find_views();
  void find_lifetimes();
  static DType io_dtype(const fb::TensorT& t);
  void check_io_dtype(const char* what, const std::string& name, DType d, bool input) const;
  void bind_inputs(compile::LoweredMethod& m);
  void bind_outputs(compile::LoweredMethod& m);
  compile::MemoryPlan plan_arena();
  compile::LoweredMethod pack(std::string_view method_name, std::string_view delegate_id,
                              const compile::MemoryPlan& plan, compile::LoweredMethod m);
  fb::Precision precision() const { return fp_ ? fb::Precision::Float16 : fb::Precision::Quantized; }

  const graph::Graph& g_;
  const pipeline::GraphBundle& bundle_;
  const compile::LoweringTarget& target_;
  const bool fp_;
  const quant::EncodingSet* enc_ = nullptr;
  SharedWeightData* const shared_;  // null: this method's weights are its own
  std::vector<std::unique_ptr<fb::TensorT>> tensors_;
  std::map<std::pair<ValueId, Role>, int> data_tensors_;
  std::map<std::string, pte::NamedData> named_;
  // What the passes build: the tensor of each value (-1: weights and constants, which get one
  // per role), the ops, which of them KV fusion dropped, each tensor's storage root (itself, or
  // the tensor a view reads), the roots' lifetimes in op indices, and the method's I/O.
  std::vector<int> value_tensor_;
  std::vector<std::unique_ptr<fb::OpT>> fops_;
  std::vector<bool> dropped_;
  std::vector<int> root_;
  std::vector<int64_t> first_, last_;
  std::vector<std::unique_ptr<fb::IoT>> ins_, outs_;
};

void Lowering::activation_type(fb::TensorT& t, const graph::Value& v) {
  t.shape = v.type.shape;
  if (v.type.dtype == DType::kI32) {
    t.type = fb::ElementType::I32;
    return;
  }
  if (v.type.dtype != DType::kF32)
    throw_failure("lower: graph {}: value {} has type {} (float32 and int32 only)", g_.name(), v.name,
                  dtype_name(v.type.dtype));
  if (fp_) {
    t.type = fb::ElementType::F32;
    return;
  }
  set_quant(t, encoding(v.name));
}

int Lowering::data_tensor(ValueId id, Role role, const graph::Op& user) {
  auto found = data_tensors_.find({id, role});
  if (found != data_tensors_.end()) return found->second;
  const graph::Value& v = g_.value(id);
  // A weight read the same way by an earlier method of the program (the same stored tensor, role,
  // encoding and precision) takes that method's tensor and named data as they are: a LoRA
  // adapter's methods, whose weights add the adapter's factors to the base's, share the base's.
  std::string shared_key;
  if (shared_ && v.kind == ValueKind::kWeight) {
    shared_key = fmt::format("{}\n{}\n{}\n{}\n{}", v.name, static_cast<int>(role), g_.weights()->get(v.name).raw(),
                             fmt::ptr(weight_encoding(v.name)), fp_);
    if (const SharedWeightData::Entry* hit = shared_->find(shared_key)) {
      for (const pte::NamedData& d : hit->data) named_.emplace(d.key, d);
      const int index = new_tensor(std::make_unique<fb::TensorT>(hit->tensor));
      data_tensors_[{id, role}] = index;
      return index;
    }
  }
  std::unique_ptr<fb::TensorT> t = weight_data_tensor(v, role, user);
  if (!shared_key.empty()) {
    SharedWeightData::Entry entry{*t, {}};
    for (const std::string* key : {&t->weight->data, &t->weight->scales, &t->weight->block_sums, &t->weight->block_meta})
      if (!key->empty()) entry.data.push_back(named_.at(*key));
    shared_->insert(shared_key, std::move(entry));
  }
  const int index = new_tensor(std::move(t));
  data_tensors_[{id, role}] = index;
  return index;
}

// Rounds a linear weight's codes and packs them for the kernels a block of output channels at a
// time, straight into the packed bytes: neither the weight's float32 values nor its codes ever
// exist whole (a 1B decoder's would be 5 GB and 2.5 GB). Blocks are whole 16-channel groups, so
// the bytes equal packing the whole matrix at once.
struct PackedWeight {
  std::vector<uint8_t> data;
  std::vector<int32_t> block_sums;
};
PackedWeight pack_weight(const quant::WeightEncoding& we, const Tensor& stored, int bits) {
  const int64_t rows = we.rows, cols = we.cols, nb = we.blocks();
  constexpr int64_t kBlockRows = 4 * kernels::layout::kGroup;
  PackedWeight out;
  out.data.resize(kernels::packed_linear_bytes(rows, cols, bits));
  out.block_sums.resize(static_cast<size_t>(rows * nb));
  const int64_t group_bytes = kernels::layout::group_bytes(cols, bits);
  ThreadPool::global().parallel_for(
      (rows + kBlockRows - 1) / kBlockRows,
      [&](int64_t b0, int64_t b1) {
        std::vector<int16_t> q;
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t r0 = b * kBlockRows, r1 = std::min(rows, r0 + kBlockRows);
          q.resize(static_cast<size_t>((r1 - r0) * cols));
          quant::weight_codes(we, stored, r0, r1, q.data());
          kernels::pack_linear_weights(q.data(), r1 - r0, cols, bits,
                                       out.data.data() + r0 / kernels::layout::kGroup * group_bytes);
          const auto sums = kernels::linear_block_sums(q.data(), r1 - r0, cols, we.block_size);
          std::copy(sums.begin(), sums.end(), out.block_sums.begin() + r0 * nb);
        }
      },
      1);
  return out;
}

// A gather table's codes as the payload stores them (int8 for 4- and 8-bit tables, else int16),
// rounded a block of rows at a time.
template <typename T>
std::vector<uint8_t> table_codes(const quant::WeightEncoding& we, const Tensor& stored) {
  std::vector<uint8_t> out(static_cast<size_t>(we.rows * we.cols) * sizeof(T));
  T* dst = reinterpret_cast<T*>(out.data());
  ThreadPool::global().parallel_for(
      we.rows,
      [&](int64_t r0, int64_t r1) {
        std::vector<int16_t> q(static_cast<size_t>((r1 - r0) * we.cols));
        quant::weight_codes(we, stored, r0, r1, q.data());
        std::transform(q.begin(), q.end(), dst + r0 * we.cols, [](int16_t c) { return static_cast<T>(c); });
      },
      64);
  return out;
}

std::unique_ptr<fb::TensorT> Lowering::weight_data_tensor(const graph::Value& v, Role role, const graph::Op& user) {
  auto t = std::make_unique<fb::TensorT>();
  t->name = v.name;
  t->shape = v.type.shape;
  t->kind = v.kind == ValueKind::kWeight ? fb::TensorKind::Weight : fb::TensorKind::Constant;
  t->storage = fb::Storage::Data;
  t->weight = std::make_unique<fb::WeightDataT>();
  fb::WeightDataT& w = *t->weight;
  w.format = fb::DataFormat::Plain;
  if (v.type.dtype == DType::kI32) {  // constant indices (a vision encoder's position ids), as they are
    if (v.kind != ValueKind::kConstant || role != Role::kFloat)
      throw_failure("lower: graph {}: int32 value {} is not a constant operand", g_.name(), v.name);
    t->type = fb::ElementType::I32;
    w.data = add_data(v.name, "i32", bytes_of(v.constant->data<int32_t>(), static_cast<size_t>(v.constant->numel())));
    return t;
  }
  // The weight as stored (16-bit views stay views), and its float32 values for the roles that
  // need them whole.
  const Tensor& stored = v.kind == ValueKind::kConstant ? *v.constant : g_.weights()->get(v.name);
  std::optional<std::vector<float>> floats;
  auto values = [&]() -> const std::vector<float>& {
    if (!floats) floats = float_values(v);
    return *floats;
  };
  auto f16_bits = [&]() {
    std::vector<uint16_t> h(values().size());
    for (size_t i = 0; i < h.size(); ++i) h[i] = f32_to_f16(values()[i]);
    return h;
  };
  auto rounded_f32 = [&]() {
    std::vector<float> r(values().size());
    for (size_t i = 0; i < r.size(); ++i) r[i] = f16_to_f32(f32_to_f16(values()[i]));
    return r;
  };

  switch (role) {
    case Role::kLinearWeight: {
      if (v.type.shape.size() != 2) throw_failure("lower: linear weight {} is not 2-D", v.name);
      const int64_t rows = v.type.shape[0], cols = v.type.shape[1];
      if (fp_) {  // the QDQ reference rounds float16 weights from the float originals
        const auto h = f16_bits();
        t->type = fb::ElementType::F16;
        w.data = add_data(v.name, "f16", bytes_of(h.data(), h.size()));
        break;
      }
      const quant::WeightEncoding* we = weight_encoding(v.name);
      if (!we || we->is_float() || we->rows != rows || we->cols != cols)
        throw_failure("lower: graph {}: linear weight {} has no integer encoding of shape [{}, {}]", g_.name(), v.name,
                      rows, cols);
      const int bits = quant::qdtype_bits(we->dtype);
      if (bits != 4 && bits != 8 && bits != 16)
        throw_failure("lower: linear weight {} has {} bits (4, 8, 16 supported)", v.name, bits);
      w.block_size = we->block_size;
      PackedWeight packed = pack_weight(*we, stored, bits);
      t->type = bits == 16 ? fb::ElementType::I16 : fb::ElementType::I8;
      w.format = bits == 4 ? fb::DataFormat::PackedInt4 : bits == 8 ? fb::DataFormat::PackedInt8 : fb::DataFormat::PackedInt16;
      w.data = add_data(v.name, fmt::format("packed{}", bits), std::move(packed.data));
      if (we->block_size > 0) {
        // Block-wise: scales and sums only regrouped (the kernels' loads), not also as plain
        // arrays: at block 16 each copy is half a byte per weight, as much as 4-bit codes.
        std::vector<uint8_t> meta(kernels::block_meta_bytes(rows, cols, we->block_size));
        kernels::pack_block_meta(we->scales.data(), packed.block_sums.data(), rows, cols, we->block_size, meta.data());
        w.block_meta = add_data(v.name, "block_meta", std::move(meta));
      } else {
        w.scales = add_data(v.name, "scales", bytes_of(we->scales.data(), we->scales.size()));
        w.block_sums = add_data(v.name, "block_sums", bytes_of(packed.block_sums.data(), packed.block_sums.size()));
      }
      break;
    }
    case Role::kGatherTable: {
      if (v.type.shape.size() != 2) throw_failure("lower: gather table {} is not 2-D", v.name);
      const graph::Value& result = g_.value(user.result);
      if (fp_) {
        if (v.kind == ValueKind::kWeight) {
          const auto h = f16_bits();
          t->type = fb::ElementType::F16;
          w.data = add_data(v.name, "f16", bytes_of(h.data(), h.size()));
        } else {  // constant tables (RoPE): float16-rounded floats, gathered by row copy
          const auto r = rounded_f32();
          t->type = fb::ElementType::F32;
          w.data = add_data(v.name, "f16r", bytes_of(r.data(), r.size()));
        }
        break;
      }
      if (v.kind == ValueKind::kConstant) {
        // Quantizing the table to the result's encoding then gathering rows equals gathering
        // float rows then quantizing: the gather becomes a row copy of integers.
        const quant::Encoding& e = encoding(result.name);
        set_quant(*t, e);
        if (t->type == fb::ElementType::U8) {
          std::vector<uint8_t> q(values().size());
          for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>(quant::quantize_value(values()[i], e));
          w.data = add_data(v.name, "u8", std::move(q));
        } else {
          std::vector<uint16_t> q(values().size());
          for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint16_t>(quant::quantize_value(values()[i], e));
          w.data = add_data(v.name, "u16", bytes_of(q.data(), q.size()));
        }
        break;
      }
      const quant::WeightEncoding* we = weight_encoding(v.name);
      if (!we || we->is_float() || we->rows != v.type.shape[0] || we->cols != v.type.shape[1])
        throw_failure("lower: graph {}: gather table {} has no integer encoding", g_.name(), v.name);
      const int bits = quant::qdtype_bits(we->dtype);
      w.block_size = we->block_size;
      w.scales = add_data(v.name, "scales", bytes_of(we->scales.data(), we->scales.size()));
      if (bits <= 8) {
        t->type = fb::ElementType::I8;
        w.format = fb::DataFormat::ScaledInt8;
        w.data = add_data(v.name, "table_i8", table_codes<int8_t>(*we, stored));
      } else {
        t->type = fb::ElementType::I16;
        w.format = fb::DataFormat::ScaledInt16;
        w.data = add_data(v.name, "table_i16", table_codes<int16_t>(*we, stored));
      }
      break;
    }
    case Role::kNormWeight: {
      const auto r = fp_ ? values() : quant::on_constant_grid(values().data(), static_cast<int64_t>(values().size()));
      t->type = fb::ElementType::F32;
      w.data = add_data(v.name, fp_ ? "f32" : "f32u16", bytes_of(r.data(), r.size()));
      break;
    }
    case Role::kLinearBias:
      if (fp_) {  // the QDQ reference adds the float16-rounded bias
        const auto r = rounded_f32();
        t->type = fb::ElementType::F32;
        w.data = add_data(v.name, "f16r", bytes_of(r.data(), r.size()));
        break;
      }
      [[fallthrough]];
    case Role::kFloat:
      t->type = fb::ElementType::F32;
      w.data = add_data(v.name, "f32", bytes_of(values().data(), values().size()));
      break;
  }
  // Done with this weight: a 16-bit view's file pages leave the resident set.
  if (v.kind == ValueKind::kWeight) g_.weights()->release(v.name);
  return t;
}

// The lowering runs as passes over the members below, in this order; each pass reads what the
// ones before it produced.
compile::LoweredMethod Lowering::run(std::string_view method_name, std::string_view delegate_id) {
  add_value_tensors();
  add_ops();
  fuse_kv_caches();
  find_views();
  find_lifetimes();
  compile::LoweredMethod m;
  bind_inputs(m);
  bind_outputs(m);
  const compile::MemoryPlan plan = plan_arena();
  return pack(method_name, delegate_id, plan, std::move(m));
}

// Activations and inputs: one tensor per value, index = value id (weights/constants get their
// real tensors, per role, when an op reads them).
void Lowering::add_value_tensors() {
  const auto& values = g_.values();
  value_tensor_.assign(values.size(), -1);
  for (size_t i = 0; i < values.size(); ++i) {
    const graph::Value& v = values[i];
    auto t = std::make_unique<fb::TensorT>();
    t->name = v.name;
    if (v.kind == ValueKind::kInput || v.kind == ValueKind::kOpResult) {
      activation_type(*t, v);
      t->kind = v.kind == ValueKind::kInput ? fb::TensorKind::Input : fb::TensorKind::Activation;
      value_tensor_[i] = new_tensor(std::move(t));
    }
  }
}

// Ops, with weight/constant operands resolved per role, and their attributes.
void Lowering::add_ops() {
  const auto& values = g_.values();
  for (const graph::Op& op : g_.ops()) {
    auto o = std::make_unique<fb::OpT>();
    o->kind = op_kind(op.kind);
    o->name = values[static_cast<size_t>(op.result)].name;
    o->output = value_tensor_[static_cast<size_t>(op.result)];
    for (size_t j = 0; j < op.operands.size(); ++j) {
      const ValueId id = op.operands[j];
      const graph::Value& v = values[static_cast<size_t>(id)];
      if (v.kind == ValueKind::kWeight || v.kind == ValueKind::kConstant) {
        Role role = Role::kFloat;
        if (op.kind == OpKind::kLinear) role = j == 1 ? Role::kLinearWeight : Role::kLinearBias;
        if (op.kind == OpKind::kGather && j == 0) role = Role::kGatherTable;
        if ((op.kind == OpKind::kRmsNorm || op.kind == OpKind::kLayerNorm) && j > 0) role = Role::kNormWeight;
        o->inputs.push_back(data_tensor(id, role, op));
      } else {
        o->inputs.push_back(value_tensor_[static_cast<size_t>(id)]);
      }
    }
    set_attributes(*o, op);
    if (!fp_) check_passthrough_encodings(*o, op);
    fops_.push_back(std::move(o));
  }
}

void Lowering::set_attributes(fb::OpT& o, const graph::Op& op) const {
  const auto& in0 = g_.values()[static_cast<size_t>(op.operands[0])];
  switch (op.kind) {
    case OpKind::kRmsNorm:
    case OpKind::kLayerNorm:
      o.eps = static_cast<float>(graph::attr_float(op.attrs, "eps"));
      break;
    case OpKind::kConcat: {
      int64_t axis = graph::attr_int(op.attrs, "axis");
      if (axis < 0) axis += static_cast<int64_t>(in0.type.shape.size());
      o.axis = static_cast<int32_t>(axis);
      break;
    }
    case OpKind::kSlice: {
      int64_t axis = graph::attr_int(op.attrs, "axis");
      if (axis < 0) axis += static_cast<int64_t>(in0.type.shape.size());
      o.axis = static_cast<int32_t>(axis);
      o.start = graph::attr_int(op.attrs, "start");
      break;
    }
    case OpKind::kTranspose:
      for (int64_t p : graph::attr_ints(op.attrs, "perm")) o.perm.push_back(static_cast<int32_t>(p));
      break;
    default:
      break;
  }
}

// Passthrough ops move integers: their operands must share the result's encoding.
void Lowering::check_passthrough_encodings(const fb::OpT& o, const graph::Op& op) const {
  if (op.kind != OpKind::kConcat && op.kind != OpKind::kReshape && op.kind != OpKind::kTranspose &&
      op.kind != OpKind::kSlice)
    return;
  const fb::TensorT& r = *tensors_[static_cast<size_t>(o.output)];
  for (int in : o.inputs) {
    const fb::TensorT& x = *tensors_[static_cast<size_t>(in)];
    const bool same = x.type == r.type && (!x.quant) == (!r.quant) &&
                      (!x.quant || (x.quant->scale() == r.quant->scale() &&
                                    x.quant->zero_point() == r.quant->zero_point() &&
                                    x.quant->qmin() == r.quant->qmin() && x.quant->qmax() == r.quant->qmax()));
    if (!same)
      throw_failure("lower: graph {}: {} '{}' reads '{}' on a different encoding", g_.name(),
                    graph::op_kind_name(op.kind), r.name, x.name);
  }
}

// The KV-concat decision (kv_fusion.h): fused matmuls read the cache in place; the concat and
// its views are dropped (indices stay: lifetimes are op positions until pack()).
void Lowering::fuse_kv_caches() {
  dropped_.assign(fops_.size(), false);
  if (fp_ || target_.kv_fusion == KvFusion::kNone) return;
  std::vector<bool> is_output(tensors_.size(), false);
  for (const auto& out : g_.outputs()) is_output[static_cast<size_t>(value_tensor_[static_cast<size_t>(out.value)])] = true;
  dropped_ = fuse_kv_concats(fops_, tensors_, is_output, target_.kv_fusion);
}

// Views: reshapes, and transposes that keep the bytes in place, share their operand's storage.
void Lowering::find_views() {
  root_.resize(tensors_.size());
  for (size_t t = 0; t < root_.size(); ++t) root_[t] = static_cast<int>(t);
  for (size_t i = 0; i < fops_.size(); ++i) {
    const fb::OpT& o = *fops_[i];
    if (dropped_[i]) continue;
    bool view = o.kind == fb::OpKind::Reshape;
    if (o.kind == fb::OpKind::Transpose) view = transpose_keeps_bytes(tensors_[static_cast<size_t>(o.inputs[0])]->shape, o.perm);
    if (view) root_[static_cast<size_t>(o.output)] = root_[static_cast<size_t>(o.inputs[0])];
  }
}

// Lifetimes of every root, in op indices (-1: live on entry; n_ops: read after the last op).
void Lowering::find_lifetimes() {
  first_.assign(tensors_.size(), 0);
  last_.assign(tensors_.size(), -2);
  for (size_t i = 0; i < fops_.size(); ++i) {
    if (dropped_[i]) continue;
    const fb::OpT& o = *fops_[i];
    const size_t r = static_cast<size_t>(root_[static_cast<size_t>(o.output)]);
    if (r == static_cast<size_t>(o.output)) first_[r] = static_cast<int64_t>(i);
    last_[r] = std::max(last_[r], static_cast<int64_t>(i));
    for (int in : o.inputs) {
      const size_t ri = static_cast<size_t>(root_[static_cast<size_t>(in)]);
      last_[ri] = std::max(last_[ri], static_cast<int64_t>(i));
    }
  }
}

DType Lowering::io_dtype(const fb::TensorT& t) {
  switch (t.type) {
    case fb::ElementType::I32: return DType::kI32;
    case fb::ElementType::U8: return DType::kU8;
    case fb::ElementType::U16: return DType::kU16;
    default: return DType::kF32;
  }
}

// A quantized program's I/O dtype must be the one quant_io_dtypes promised the runtime.
void Lowering::check_io_dtype(const char* what, const std::string& name, DType d, bool input) const {
  if (fp_ || !bundle_.quant_io_dtypes()) return;
  const auto& promised = input ? bundle_.quant_io_dtypes()->inputs : bundle_.quant_io_dtypes()->outputs;
  auto it = promised.find(name);
  if (it != promised.end() && it->second != d)
    throw_failure("lower: graph {}: {} {} is {} in the program but {} in quant_io_dtypes", g_.name(), what, name,
                  dtype_name(d), dtype_name(it->second));
}

// Method inputs: the caller's buffers with shared buffers on; otherwise copied into the arena
// before the first op.
void Lowering::bind_inputs(compile::LoweredMethod& m) {
  for (size_t i = 0; i < g_.inputs().size(); ++i) {
    const ValueId id = g_.inputs()[i];
    const int t = value_tensor_[static_cast<size_t>(id)];
    fb::TensorT& tt = *tensors_[static_cast<size_t>(t)];
    auto io = std::make_unique<fb::IoT>();
    io->name = tt.name;
    io->tensor = t;
    if (target_.shared_buffer) {
      tt.storage = fb::Storage::Input;
      tt.io_index = static_cast<int32_t>(i);
    } else {
      io->copy = true;
      first_[static_cast<size_t>(t)] = -1;
      last_[static_cast<size_t>(t)] = std::max<int64_t>(last_[static_cast<size_t>(t)], 0);
    }
    const DType d = io_dtype(tt);
    check_io_dtype("input", tt.name, d, /*input=*/true);
    m.inputs.push_back({tt.name, d, tt.shape});
    ins_.push_back(std::move(io));
  }
}

// Method outputs: written in place into the caller's buffer when shared buffers are on and the
// value's storage is free to bind; otherwise copied out of the arena after the last op.
void Lowering::bind_outputs(compile::LoweredMethod& m) {
  const int64_t n_ops = static_cast<int64_t>(fops_.size());
  std::vector<bool> bound(tensors_.size(), false);
  for (size_t j = 0; j < g_.outputs().size(); ++j) {
    const auto& out = g_.outputs()[j];
    const int t = value_tensor_[static_cast<size_t>(out.value)];
    const size_t r = static_cast<size_t>(root_[static_cast<size_t>(t)]);
    fb::TensorT& rt = *tensors_[r];
    auto io = std::make_unique<fb::IoT>();
    io->name = out.name;
    io->tensor = t;
    if (target_.shared_buffer && rt.kind == fb::TensorKind::Activation && !bound[r]) {
      bound[r] = true;
      rt.storage = fb::Storage::Output;
      rt.io_index = static_cast<int32_t>(j);
      rt.kind = fb::TensorKind::Output;
    } else {
      io->copy = true;
      last_[r] = n_ops;
    }
    const fb::TensorT& tt = *tensors_[static_cast<size_t>(t)];
    const DType d = io_dtype(tt);
    check_io_dtype("output", out.name, d, /*input=*/false);
    m.outputs.push_back({out.name, d, tt.shape});
    outs_.push_back(std::move(io));
  }
}

// Memory plan: every arena root, then each op's float temporaries (alive during that op only);
// views then take their root's storage.
compile::MemoryPlan Lowering::plan_arena() {
  std::vector<compile::BufferRequest> requests;
  std::vector<int> request_tensor;
  for (size_t t = 0; t < tensors_.size(); ++t) {
    const fb::TensorT& tt = *tensors_[t];
    if (tt.storage != fb::Storage::Arena || root_[t] != static_cast<int>(t)) continue;
    if (tt.kind != fb::TensorKind::Activation && tt.kind != fb::TensorKind::Input) continue;
    if (last_[t] < -1) continue;  // never read, never written (an unused input)
    const uint64_t size = static_cast<uint64_t>(numel(tt.shape)) * element_size(tt.type);
    requests.push_back({size, first_[t], std::max(last_[t], first_[t])});
    request_tensor.push_back(static_cast<int>(t));
  }
  for (size_t i = 0; i < fops_.size(); ++i) {
    fb::OpT& o = *fops_[i];
    if (dropped_[i]) continue;
    std::vector<OperandInfo> infos;
    for (int in : o.inputs) infos.push_back({tensors_[static_cast<size_t>(in)]->type, numel(tensors_[static_cast<size_t>(in)]->shape)});
    const fb::TensorT& ot = *tensors_[static_cast<size_t>(o.output)];
    o.scratch_bytes = op_scratch_bytes(o.kind, precision(), infos, {ot.type, numel(ot.shape)});
    if (o.scratch_bytes == 0) continue;
    requests.push_back({o.scratch_bytes, static_cast<int64_t>(i), static_cast<int64_t>(i)});
    request_tensor.push_back(-1 - static_cast<int>(i));
  }
  const compile::MemoryPlan plan = compile::plan_memory(requests, 64);
  for (size_t k = 0; k < requests.size(); ++k) {
    const int who = request_tensor[k];
    if (who >= 0) tensors_[static_cast<size_t>(who)]->offset = plan.offsets[k];
    else fops_[static_cast<size_t>(-1 - who)]->scratch_offset = plan.offsets[k];
  }
  for (size_t t = 0; t < tensors_.size(); ++t) {
    const size_t r = static_cast<size_t>(root_[t]);
    if (r == t) continue;
    tensors_[t]->storage = tensors_[r]->storage;
    tensors_[t]->offset = tensors_[r]->offset;
    tensors_[t]->io_index = tensors_[r]->io_index;
  }
  return plan;
}

// Packing: the fused-away ops and their tensors leave, the rest becomes the payload.
compile::LoweredMethod Lowering::pack(std::string_view method_name, std::string_view delegate_id,
                                      const compile::MemoryPlan& plan, compile::LoweredMethod m) {
  if (std::find(dropped_.begin(), dropped_.end(), true) != dropped_.end()) drop_unused(fops_, dropped_, ins_, outs_);
  fb::MethodT method;
  method.version = kPayloadVersion;
  method.name = std::string(method_name);
  method.precision = precision();
  method.tensors = std::move(tensors_);
  method.ops = std::move(fops_);
  method.inputs = std::move(ins_);
  method.outputs = std::move(outs_);
  method.planned_bytes = plan.total_bytes;
  method.lower_bound_bytes = plan.lower_bound_bytes;
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(fb::Method::Pack(builder, &method), fb::MethodIdentifier());

  m.delegate_id = std::string(delegate_id);
  m.payload = pte::Blob(std::vector<uint8_t>(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()));
  for (auto& [key, data] : named_) m.named_data.push_back(std::move(data));
  m.planned_bytes = plan.total_bytes;
  m.lower_bound_bytes = plan.lower_bound_bytes;
  return m;
}

}  // namespace

compile::LoweredMethod lower_graph(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                   const compile::LoweringTarget& target, std::string_view delegate_id,
                                   ProgramPrecision precision, SharedWeightData* shared) {
  if (!bundle.graph()) throw_failure("lower: method {} has no graph", method_name);
  return Lowering(bundle, target, precision, shared).run(method_name, delegate_id);
}

const SharedWeightData::Entry* SharedWeightData::find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void SharedWeightData::insert(const std::string& key, Entry entry) { entries_.emplace(key, std::move(entry)); }

}  // namespace genai::backends
