// Payload verification and plan building. Everything read from the payload is checked before it
// is used: the flatbuffer structure (Verifier), enum ranges, tensor shapes and byte sizes, every
// tensor index of every op, operand types and shapes per op kind (so kernels never read or write
// outside a tensor), arena offsets against the planned size, caller-buffer bindings against the
// I/O sizes, and each named-data entry's size against its format.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "backends/exec/method_plan.h"
#include "backends/payload/op_scratch.h"
#include "core/error.h"

namespace genai::backends::exec {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 40;

struct TensorInfo {
  std::string name;
  fb::ElementType type = fb::ElementType::F32;
  fb::TensorKind kind = fb::TensorKind::Activation;
  fb::Storage storage = fb::Storage::Arena;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  uint64_t bytes = 0;
  bool has_quant = false;
  kernels::QParams q;
  Loc loc;
  // Storage::Data
  fb::DataFormat format = fb::DataFormat::Plain;
  int64_t block_size = 0;
  const uint8_t* data = nullptr;
  const float* scales = nullptr;
  const int32_t* block_sums = nullptr;
  const uint8_t* block_meta = nullptr;  // optional (packed, block-wise)
};

DType dtype_of(fb::ElementType t) {
  switch (t) {
    case fb::ElementType::F32: return DType::kF32;
    case fb::ElementType::F16: return DType::kF16;
    case fb::ElementType::U8: return DType::kU8;
    case fb::ElementType::U16: return DType::kU16;
    case fb::ElementType::I32: return DType::kI32;
    case fb::ElementType::I8: return DType::kI8;
    case fb::ElementType::I16: return DType::kI16;
  }
  return DType::kF32;
}

int packed_bits(fb::DataFormat f) {
  return f == fb::DataFormat::PackedInt4 ? 4 : f == fb::DataFormat::PackedInt8 ? 8 : 16;
}

template <typename E>
bool enum_ok(E e) {
  return static_cast<int>(e) >= static_cast<int>(E::MIN) && static_cast<int>(e) <= static_cast<int>(E::MAX);
}

class Decoder {
 public:
  Decoder(std::string_view label, const runtime::NamedDataLookup& named) : label_(label), named_(named) {}

  std::unique_ptr<MethodPlan> run(std::span<const uint8_t> payload);

 private:
  template <typename... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> f, Args&&... args) const {
    throw_input_error("{}: invalid payload: {}", label_, fmt::format(f, std::forward<Args>(args)...));
  }

  void decode_tensor(size_t index, const fb::Tensor* t);
  void bind_storage(size_t index, const fb::Tensor* t);
  void bind_data(TensorInfo& info, const fb::Tensor* t);
  const uint8_t* named(const flatbuffers::String* key, uint64_t expected, size_t align, const std::string& tensor,
                       std::string_view what);
  const TensorInfo& tensor(int32_t index, const std::string& op) const {
    if (index < 0 || static_cast<size_t>(index) >= tensors_.size())
      bad("op '{}' refers to tensor {} (the payload has {})", op, index, tensors_.size());
    return tensors_[static_cast<size_t>(index)];
  }
  void decode_op(const fb::Op* op, size_t index);
  void fuse_concat_into_matmul(const std::vector<bool>& io_output);
  Operand operand(const TensorInfo& t) const { return Operand{t.loc, t.type, t.q, t.numel}; }
  // The activation type of the program: uint8/uint16 with an encoding, or float32.
  bool value_type(const TensorInfo& t) const {
    return plan_->quantized ? is_quantized_type(t.type) && t.has_quant : t.type == fb::ElementType::F32;
  }
  bool float_operand(const TensorInfo& t) const { return value_type(t) || t.type == fb::ElementType::F32; }
  void check_writable(const TensorInfo& t, const std::string& op) const {
    if (t.storage != fb::Storage::Arena && t.storage != fb::Storage::Output)
      bad("op '{}' writes tensor '{}', which is not an arena or output tensor", op, t.name);
  }
  bool same_encoding(const TensorInfo& a, const TensorInfo& b) const {
    return a.type == b.type && a.has_quant == b.has_quant &&
           (!a.has_quant || (a.q.scale == b.q.scale && a.q.zero_point == b.q.zero_point && a.q.qmin == b.q.qmin &&
                             a.q.qmax == b.q.qmax));
  }

  std::string label_;
  const runtime::NamedDataLookup& named_;
  std::unique_ptr<MethodPlan> plan_;
  std::vector<TensorInfo> tensors_;
  size_t n_inputs_ = 0, n_outputs_ = 0;
};

const uint8_t* Decoder::named(const flatbuffers::String* key, uint64_t expected, size_t align,
                              const std::string& tensor, std::string_view what) {
  if (!key) bad("tensor '{}' has no {} key", tensor, what);
  const std::string_view k(key->c_str(), key->size());
  const std::span<const uint8_t> bytes = named_ ? named_(k) : std::span<const uint8_t>();
  if (bytes.empty() && expected > 0) bad("tensor '{}': named data '{}' ({}) is missing", tensor, k, what);
  if (bytes.size() != expected)
    bad("tensor '{}': named data '{}' ({}) has {} bytes, expected {}", tensor, k, what, bytes.size(), expected);
  if (expected == 0) return nullptr;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % align == 0) return bytes.data();
  // Misaligned for the element type: the one case where weights are copied.
  auto copy = std::make_unique<uint8_t[]>(bytes.size());
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  plan_->owned.push_back(std::move(copy));
  return plan_->owned.back().get();
}

void Decoder::decode_tensor(size_t index, const fb::Tensor* t) {
  if (!t) bad("tensor {} is null", index);
  TensorInfo info;
  info.name = t->name()->str();
  if (!enum_ok(t->type())) bad("tensor '{}' has element type {}", info.name, static_cast<int>(t->type()));
  if (!enum_ok(t->kind())) bad("tensor '{}' has kind {}", info.name, static_cast<int>(t->kind()));
  if (!enum_ok(t->storage())) bad("tensor '{}' has storage {}", info.name, static_cast<int>(t->storage()));
  info.type = t->type();
  info.kind = t->kind();
  info.storage = t->storage();
  if (t->shape()) {
    if (t->shape()->size() > kMaxRank) bad("tensor '{}' has rank {} (at most {})", info.name, t->shape()->size(), kMaxRank);
    // The Verifier checks a vector's length field, not 8-byte alignment of its int64 elements.
    if (reinterpret_cast<uintptr_t>(t->shape()->Data()) % alignof(int64_t) != 0)
      bad("tensor '{}' has a misaligned shape", info.name);
    for (int64_t d : *t->shape()) info.shape.push_back(d);
  }
  info.numel = 1;
  for (int64_t d : info.shape) {
    if (d < 0 || d > kMaxElements) bad("tensor '{}' has dimension {}", info.name, d);
    if (d != 0 && info.numel > kMaxElements / d) bad("tensor '{}' is too large", info.name);
    info.numel *= d;
  }
  info.bytes = static_cast<uint64_t>(info.numel) * element_size(info.type);
  if (const fb::QuantParams* q = t->quant()) {
    if (!is_quantized_type(info.type)) bad("tensor '{}' has an encoding but element type {}", info.name, fb::EnumNameElementType(info.type));
    const int32_t type_max = info.type == fb::ElementType::U8 ? 255 : 65535;
    if (!(std::isfinite(q->scale()) && q->scale() > 0.0f) || q->qmin() < 0 || q->qmax() > type_max ||
        q->qmin() > q->qmax() || q->zero_point() < q->qmin() || q->zero_point() > q->qmax())
      bad("tensor '{}' has an invalid encoding (scale {}, zero point {}, range [{}, {}])", info.name, q->scale(),
          q->zero_point(), q->qmin(), q->qmax());
    info.has_quant = true;
    info.q = kernels::QParams{q->scale(), q->zero_point(), q->qmin(), q->qmax()};
  }
  tensors_[index] = std::move(info);
}

void Decoder::bind_data(TensorInfo& info, const fb::Tensor* t) {
  const fb::WeightData* w = t->weight();
  if (!w) bad("data tensor '{}' has no weight data", info.name);
  if (!enum_ok(w->format())) bad("tensor '{}' has data format {}", info.name, static_cast<int>(w->format()));
  info.format = w->format();
  info.block_size = w->block_size();
  if (info.format == fb::DataFormat::Plain) {
    info.data = named(w->data(), info.bytes, element_size(info.type), info.name, "data");
    return;
  }
  if (info.shape.size() != 2) bad("weight '{}' in format {} is not 2-D", info.name, fb::EnumNameDataFormat(info.format));
  const int64_t rows = info.shape[0], cols = info.shape[1];
  if (info.block_size < 0 || (info.block_size > 0 && cols % info.block_size != 0) || (info.block_size == 0 && cols == 0))
    bad("weight '{}' has block size {} for {} columns", info.name, info.block_size, cols);
  const int64_t blocks = info.block_size > 0 ? cols / info.block_size : 1;
  const uint64_t per_row = static_cast<uint64_t>(rows) * static_cast<uint64_t>(blocks) * 4;
  info.scales = reinterpret_cast<const float*>(named(w->scales(), per_row, 4, info.name, "scales"));
  switch (info.format) {
    case fb::DataFormat::PackedInt8:
    case fb::DataFormat::PackedInt4:
    case fb::DataFormat::PackedInt16: {
      const int bits = packed_bits(info.format);
      if (info.type != (bits == 16 ? fb::ElementType::I16 : fb::ElementType::I8))
        bad("packed weight '{}' has element type {}", info.name, fb::EnumNameElementType(info.type));
      info.data = named(w->data(), kernels::packed_linear_bytes(rows, cols, bits), 1, info.name, "data");
      info.block_sums = reinterpret_cast<const int32_t*>(named(w->block_sums(), per_row, 4, info.name, "block sums"));
      if (w->block_meta()) {
        if (info.block_size == 0) bad("weight '{}' has block meta but no blocks", info.name);
        info.block_meta = named(w->block_meta(), kernels::block_meta_bytes(rows, cols, info.block_size), 4, info.name,
                                "block meta");
      }
      break;
    }
    case fb::DataFormat::ScaledInt16:
      if (info.type != fb::ElementType::I16) bad("weight '{}' has element type {} for int16 data", info.name, fb::EnumNameElementType(info.type));
      info.data = named(w->data(), info.bytes, 2, info.name, "data");
      break;
    case fb::DataFormat::ScaledInt8:
      if (info.type != fb::ElementType::I8) bad("table '{}' has element type {} for int8 data", info.name, fb::EnumNameElementType(info.type));
      info.data = named(w->data(), info.bytes, 1, info.name, "data");
      break;
    default:
      break;
  }
}

void Decoder::bind_storage(size_t index, const fb::Tensor* t) {
  TensorInfo& info = tensors_[index];
  switch (info.storage) {
    case fb::Storage::Arena:
      if (t->offset() > plan_->planned_bytes || info.bytes > plan_->planned_bytes - t->offset())
        bad("tensor '{}' ({} bytes at offset {}) lies outside the {}-byte arena", info.name, info.bytes, t->offset(),
            plan_->planned_bytes);
      if (t->offset() % 4 != 0) bad("tensor '{}' is at unaligned arena offset {}", info.name, t->offset());
      info.loc = Loc{1, t->offset()};
      break;
    case fb::Storage::Input:
    case fb::Storage::Output: {
      const bool input = info.storage == fb::Storage::Input;
      const auto& ios = input ? plan_->inputs : plan_->outputs;
      const int32_t k = t->io_index();
      if (k < 0 || static_cast<size_t>(k) >= ios.size())
        bad("tensor '{}' is bound to {} {} (the method has {})", info.name, input ? "input" : "output", k, ios.size());
      if (info.bytes > ios[static_cast<size_t>(k)].bytes)
        bad("tensor '{}' ({} bytes) does not fit {} '{}' ({} bytes)", info.name, info.bytes, input ? "input" : "output",
            ios[static_cast<size_t>(k)].desc.name, ios[static_cast<size_t>(k)].bytes);
      info.loc = Loc{static_cast<uint32_t>(2 + (input ? 0 : n_inputs_) + static_cast<size_t>(k)), 0};
      break;
    }
    case fb::Storage::Data:
      if (info.kind != fb::TensorKind::Weight && info.kind != fb::TensorKind::Constant)
        bad("tensor '{}' of kind {} is stored in named data", info.name, fb::EnumNameTensorKind(info.kind));
      bind_data(info, t);
      info.loc = Loc{0, reinterpret_cast<uintptr_t>(info.data)};
      break;
  }
}

// Row-major strides of `shape` broadcast to `out` (size-1 and missing axes stride 0).
std::array<int64_t, kMaxRank> broadcast_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& out) {
  std::array<int64_t, kMaxRank> st{};
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i + out.size() - shape.size()] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
  return st;
}

bool broadcast_to(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// `small` repeats along the leading axes of `out`: its shape without leading 1s is a suffix of out.
bool is_suffix(const std::vector<int64_t>& small, const std::vector<int64_t>& out) {
  size_t lead = 0;
  while (lead < small.size() && small[lead] == 1) ++lead;
  const size_t n = small.size() - lead;
  if (n > out.size()) return false;
  for (size_t i = 0; i < n; ++i)
    if (small[lead + i] != out[out.size() - n + i]) return false;
  return true;
}

void Decoder::decode_op(const fb::Op* op, size_t index) {
  if (!op) bad("op {} is null", index);
  if (!enum_ok(op->kind())) bad("op {} has kind {}", index, static_cast<int>(op->kind()));
  Step s;
  s.name = op->name() ? op->name()->str() : fmt::format("#{}", index);
  s.quantized = plan_->quantized;
  const fb::OpKind kind = op->kind();
  const char* kind_name = fb::EnumNameOpKind(kind);
  std::vector<const TensorInfo*> in;
  if (op->inputs())
    for (int32_t i : *op->inputs()) in.push_back(&tensor(i, s.name));
  const TensorInfo& out = tensor(op->output(), s.name);
  auto arity = [&](size_t lo, size_t hi) {
    if (in.size() < lo || in.size() > hi) bad("op '{}' ({}) has {} inputs", s.name, kind_name, in.size());
  };
  auto need = [&](bool ok, std::string_view what) {
    if (!ok) bad("op '{}' ({}): {}", s.name, kind_name, what);
  };
  for (const TensorInfo* t : in)
    if (t == &out) bad("op '{}' ({}) reads its own output", s.name, kind_name);
  s.out = operand(out);
  s.n_in = static_cast<int>(std::min<size_t>(in.size(), 3));
  if (op->inputs()) s.input_ids.assign(op->inputs()->begin(), op->inputs()->end());
  s.output_id = op->output();
  for (int i = 0; i < s.n_in; ++i) s.in[static_cast<size_t>(i)] = operand(*in[static_cast<size_t>(i)]);

  // Scratch reserved by the plan must cover what the op uses.
  std::vector<OperandInfo> infos;
  for (const TensorInfo* t : in) infos.push_back({t->type, t->numel});
  const uint64_t needed = op_scratch_bytes(kind, plan_->quantized ? fb::Precision::Quantized : fb::Precision::Float16,
                                           infos, {out.type, out.numel});
  if (needed > 0) {
    if (op->scratch_bytes() < needed || op->scratch_offset() > plan_->planned_bytes ||
        needed > plan_->planned_bytes - op->scratch_offset() || op->scratch_offset() % 4 != 0)
      bad("op '{}' ({}) needs {} scratch bytes, the payload reserves {} at offset {} of {}", s.name, kind_name, needed,
          op->scratch_bytes(), op->scratch_offset(), plan_->planned_bytes);
    s.scratch = op->scratch_offset();
    s.scratch_bytes = needed;
  }

  switch (kind) {
    case fb::OpKind::Reshape:
    case fb::OpKind::Transpose: {
      arity(1, 1);
      const TensorInfo& x = *in[0];
      need(same_encoding(x, out), "operand and result differ in type or encoding");
      s.esize = element_size(x.type);
      if (kind == fb::OpKind::Reshape) {
        need(x.numel == out.numel, "element counts differ");
        s.kind = x.loc == out.loc ? StepKind::kNone : StepKind::kCopy;
        s.length = out.bytes;
        break;
      }
      const auto* perm = op->perm();
      need(perm && perm->size() == x.shape.size() && out.shape.size() == x.shape.size(), "bad permutation");
      std::array<bool, kMaxRank> seen{};
      std::array<int64_t, kMaxRank> in_strides{};
      int64_t st = 1;
      for (size_t d = x.shape.size(); d-- > 0;) {
        in_strides[d] = st;
        st *= x.shape[d];
      }
      bool identity = true;
      int64_t last = -1;
      s.rank = static_cast<int>(x.shape.size());
      for (size_t d = 0; d < perm->size(); ++d) {
        const int32_t p = perm->Get(static_cast<flatbuffers::uoffset_t>(d));
        need(p >= 0 && static_cast<size_t>(p) < x.shape.size() && !seen[static_cast<size_t>(p)], "bad permutation");
        seen[static_cast<size_t>(p)] = true;
        need(out.shape[d] == x.shape[static_cast<size_t>(p)], "result shape is not the permuted operand shape");
        s.dims[d] = out.shape[d];
        s.stride_a[d] = in_strides[static_cast<size_t>(p)];
        if (x.shape[static_cast<size_t>(p)] != 1) {
          if (p < last) identity = false;
          last = p;
        }
      }
      if (x.loc == out.loc) {
        need(identity, "a transpose that moves bytes cannot write over its operand");
        s.kind = StepKind::kNone;
      } else {
        s.kind = identity ? StepKind::kCopy : StepKind::kTranspose;
        s.length = out.bytes;
      }
      break;
    }
    case fb::OpKind::Concat: {
      arity(1, 1024);
      const int32_t axis = op->axis();
      need(axis >= 0 && static_cast<size_t>(axis) < out.shape.size(), "axis out of range");
      int64_t total = 0;
      for (const TensorInfo* t : in) {
        need(same_encoding(*t, out), "operands differ in type or encoding from the result");
        need(t->shape.size() == out.shape.size(), "operand ranks differ");
        for (size_t d = 0; d < out.shape.size(); ++d)
          if (d != static_cast<size_t>(axis)) need(t->shape[d] == out.shape[d], "operand shapes differ off the axis");
        total += t->shape[static_cast<size_t>(axis)];
      }
      need(total == out.shape[static_cast<size_t>(axis)], "result length along the axis is not the sum");
      s.esize = element_size(out.type);
      int64_t outer = 1, inner = 1;
      for (int32_t d = 0; d < axis; ++d) outer *= out.shape[static_cast<size_t>(d)];
      for (size_t d = static_cast<size_t>(axis) + 1; d < out.shape.size(); ++d) inner *= out.shape[d];
      s.outer = outer;
      s.out_row = static_cast<uint64_t>(out.shape[static_cast<size_t>(axis)] * inner) * s.esize;
      for (const TensorInfo* t : in) {
        s.chunks.push_back(static_cast<uint64_t>(t->shape[static_cast<size_t>(axis)] * inner) * s.esize);
        need(t->loc.base != out.loc.base || t->loc.offset + t->bytes <= out.loc.offset ||
                 out.loc.offset + out.bytes <= t->loc.offset,
             "an operand overlaps the result");
      }
      for (const TensorInfo* t : in) s.sources.push_back(t->loc);
      s.axis = axis;
      s.kind = StepKind::kConcat;
      break;
    }
    case fb::OpKind::Slice: {
      arity(1, 1);
      const TensorInfo& x = *in[0];
      need(same_encoding(x, out), "operand and result differ in type or encoding");
      const int32_t axis = op->axis();
      need(axis >= 0 && static_cast<size_t>(axis) < x.shape.size() && out.shape.size() == x.shape.size(), "axis out of range");
      for (size_t d = 0; d < x.shape.size(); ++d)
        if (d != static_cast<size_t>(axis)) need(x.shape[d] == out.shape[d], "shapes differ off the axis");
      const int64_t len = out.shape[static_cast<size_t>(axis)], start = op->start();
      need(start >= 0 && start <= x.shape[static_cast<size_t>(axis)] && len <= x.shape[static_cast<size_t>(axis)] - start,
           "slice outside the operand");
      s.esize = element_size(x.type);
      int64_t outer = 1, inner = 1;
      for (int32_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<size_t>(d)];
      for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
      s.outer = outer;
      s.in_row = static_cast<uint64_t>(x.shape[static_cast<size_t>(axis)] * inner) * s.esize;
      s.start = static_cast<uint64_t>(start * inner) * s.esize;
      s.length = static_cast<uint64_t>(len * inner) * s.esize;
      s.kind = StepKind::kSlice;
      break;
    }
    case fb::OpKind::Gather: {
      arity(2, 2);
      const TensorInfo &table = *in[0], &idx = *in[1];
      need(table.storage == fb::Storage::Data && table.shape.size() == 2, "the table must be 2-D named data");
      need(idx.type == fb::ElementType::I32, "indices must be int32");
      need(value_type(out), "result type is not the program's activation type");
      s.table_rows = table.shape[0];
      s.width = table.shape[1];
      need(out.shape.size() == idx.shape.size() + 1 && out.shape.back() == s.width &&
               std::equal(idx.shape.begin(), idx.shape.end(), out.shape.begin()),
           "result shape is not indices + [width]");
      s.index_name = idx.name;
      s.table_format = table.format;
      s.weights = table.data;
      s.scales = table.scales;
      s.block_size = table.block_size;
      s.esize = element_size(out.type);
      if (table.format == fb::DataFormat::Plain && same_encoding(table, out)) {
        s.kind = StepKind::kGatherRows;
      } else {
        const bool plain_ok = table.format == fb::DataFormat::Plain &&
                              (table.type == fb::ElementType::F32 || table.type == fb::ElementType::F16);
        const bool scaled_ok = table.format == fb::DataFormat::ScaledInt8 || table.format == fb::DataFormat::ScaledInt16;
        need(plain_ok || scaled_ok, "unsupported table format");
        s.kind = StepKind::kGatherConvert;
      }
      break;
    }
    case fb::OpKind::Linear: {
      arity(2, 3);
      const TensorInfo &x = *in[0], &w = *in[1];
      need(value_type(x) && value_type(out), "operand or result type is not the program's activation type");
      need(w.storage == fb::Storage::Data && w.shape.size() == 2, "the weight must be 2-D named data");
      s.out_features = w.shape[0];
      s.in_features = w.shape[1];
      need(!x.shape.empty() && x.shape.back() == s.in_features, "input features differ from the weight");
      need(out.shape.size() == x.shape.size() && out.shape.back() == s.out_features &&
               std::equal(x.shape.begin(), x.shape.end() - 1, out.shape.begin()),
           "result shape is not [..., out_features]");
      s.rows = s.in_features > 0 ? x.numel / s.in_features : 0;
      if (in.size() == 3) {
        const TensorInfo& b = *in[2];
        need(b.storage == fb::Storage::Data && b.type == fb::ElementType::F32 && b.numel == s.out_features,
             "the bias must be float32 [out_features] named data");
        s.bias = reinterpret_cast<const float*>(b.data);
      }
      if (plan_->quantized) {
        need(w.format == fb::DataFormat::PackedInt8 || w.format == fb::DataFormat::PackedInt4 ||
                 w.format == fb::DataFormat::PackedInt16,
             "quantized linear weights must be packed int4/int8/int16");
        s.kind = StepKind::kLinearPacked;
        s.packed.rows = s.out_features;
        s.packed.cols = s.in_features;
        s.packed.bits = packed_bits(w.format);
        s.packed.block_size = w.block_size;
        s.packed.data = w.data;
        s.packed.scales = w.scales;
        s.packed.block_sums = w.block_sums;
        s.packed.block_meta = w.block_meta;
      } else {
        need(w.format == fb::DataFormat::Plain && w.type == fb::ElementType::F16, "float16 program weights must be float16");
        s.kind = StepKind::kLinearF16;
        s.weights = w.data;
      }
      break;
    }
    case fb::OpKind::MatMul: {
      arity(2, 2);
      const TensorInfo &a = *in[0], &b = *in[1];
      need(value_type(a) && value_type(b) && value_type(out), "operand or result type is not the program's activation type");
      need(a.shape.size() >= 2 && b.shape.size() >= 2 && out.shape.size() >= 2, "operands must be at least 2-D");
      s.M = a.shape[a.shape.size() - 2];
      s.K = a.shape.back();
      s.N = b.shape.back();
      need(b.shape[b.shape.size() - 2] == s.K, "inner dimensions differ");
      const std::vector<int64_t> ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
      std::vector<int64_t> batch;
      need(broadcast_to(ab, bb, &batch), "batch dimensions do not broadcast");
      std::vector<int64_t> expect = batch;
      expect.push_back(s.M);
      expect.push_back(s.N);
      need(expect == out.shape, "result shape is not batch + [M, N]");
      const auto sa = broadcast_strides(ab, batch), sb = broadcast_strides(bb, batch);
      int64_t n_batch = 1;
      for (int64_t d : batch) n_batch *= d;
      std::array<int64_t, kMaxRank> idx{};
      for (int64_t i = 0; i < n_batch; ++i) {
        int64_t oa = 0, ob = 0;
        for (size_t d = 0; d < batch.size(); ++d) {
          oa += idx[d] * sa[d];
          ob += idx[d] * sb[d];
        }
        s.batches.push_back({oa * s.M * s.K, ob * s.K * s.N, i * s.M * s.N});
        for (size_t d = batch.size(); d-- > 0;) {
          if (++idx[d] < batch[d]) break;
          idx[d] = 0;
        }
      }
      s.kind = plan_->quantized ? StepKind::kMatMulQ : StepKind::kMatMulF;
      break;
    }
    case fb::OpKind::RmsNorm: {
      arity(2, 2);
      const TensorInfo &x = *in[0], &w = *in[1];
      need(float_operand(x) && value_type(out), "operand or result type is not a float or activation type");
      need(!x.shape.empty() && x.shape == out.shape, "result shape differs from the operand");
      need(w.type == fb::ElementType::F32 && w.numel == x.shape.back(), "the weight must be float32 [dim]");
      s.width = x.shape.back();
      s.rows = s.width > 0 ? x.numel / s.width : 0;
      s.eps = op->eps();
      s.kind = StepKind::kRmsNorm;
      break;
    }
    case fb::OpKind::Silu:
    case fb::OpKind::Softmax: {
      arity(1, 1);
      const TensorInfo& x = *in[0];
      need(float_operand(x) && value_type(out), "operand or result type is not a float or activation type");
      need(x.shape == out.shape && !x.shape.empty(), "result shape differs from the operand");
      s.width = x.shape.back();
      s.rows = s.width > 0 ? x.numel / s.width : 0;
      s.kind = kind == fb::OpKind::Silu ? StepKind::kSilu : StepKind::kSoftmax;
      break;
    }
    case fb::OpKind::Add:
    case fb::OpKind::Mul: {
      arity(2, 2);
      const TensorInfo &a = *in[0], &b = *in[1];
      need(float_operand(a) && float_operand(b) && value_type(out), "operand or result type is not a float or activation type");
      std::vector<int64_t> shape;
      need(broadcast_to(a.shape, b.shape, &shape) && shape == out.shape, "result shape is not the broadcast shape");
      need(out.shape.size() <= static_cast<size_t>(kMaxRank), "rank too large");
      if (a.numel == out.numel && b.numel == out.numel) s.broadcast = Broadcast::kSame;
      else if (b.numel == 1 && a.numel == out.numel) s.broadcast = Broadcast::kScalarB;
      else if (a.numel == 1 && b.numel == out.numel) s.broadcast = Broadcast::kScalarA;
      else if (a.numel == out.numel && b.numel > 0 && is_suffix(b.shape, out.shape)) s.broadcast = Broadcast::kRepeatB;
      else if (b.numel == out.numel && a.numel > 0 && is_suffix(a.shape, out.shape)) s.broadcast = Broadcast::kRepeatA;
      else s.broadcast = Broadcast::kGeneral;
      if (s.broadcast == Broadcast::kRepeatB) {
        s.inner = b.numel;
        s.outer = out.numel / b.numel;
      } else if (s.broadcast == Broadcast::kRepeatA) {
        s.inner = a.numel;
        s.outer = out.numel / a.numel;
      }
      s.rank = static_cast<int>(out.shape.size());
      for (size_t d = 0; d < out.shape.size(); ++d) s.dims[d] = out.shape[d];
      s.stride_a = broadcast_strides(a.shape, out.shape);
      s.stride_b = broadcast_strides(b.shape, out.shape);
      s.kind = kind == fb::OpKind::Add ? StepKind::kAdd : StepKind::kMul;
      break;
    }
    case fb::OpKind::Rope: {
      arity(3, 3);
      const TensorInfo &x = *in[0], &c = *in[1], &sn = *in[2];
      need(float_operand(x) && float_operand(c) && float_operand(sn) && value_type(out),
           "operand or result type is not a float or activation type");
      need(x.shape.size() == 4 && x.shape == out.shape, "x must be [B, H, S, D] like the result");
      s.batch = x.shape[0];
      s.heads = x.shape[1];
      s.seq = x.shape[2];
      s.head_dim = x.shape[3];
      const std::vector<int64_t> table{s.batch, s.seq, s.head_dim};
      need(c.shape == table && sn.shape == table, "cos/sin must be [B, S, D]");
      need(s.head_dim % 2 == 0, "head dimension must be even");
      s.kind = StepKind::kRope;
      break;
    }
  }
  if (s.kind != StepKind::kNone) check_writable(out, s.name);  // views write nothing
  plan_->steps.push_back(std::move(s));
}

// concat(cache, new), read (through views) only by a one-row integer matmul as its b operand
// [.., K, N], along N (the keys: q·kᵀ) or along K (the values: p·v): the matmul reads both parts
// in place and the copy of the whole cache disappears. The sums are exact integers, so the
// result does not depend on how they are split.
void Decoder::fuse_concat_into_matmul(const std::vector<bool>& io_output) {
  auto& steps = plan_->steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& cat = steps[i];
    if (cat.kind != StepKind::kConcat || cat.sources.size() != 2) continue;
    const TensorInfo& c = tensors_[static_cast<size_t>(cat.output_id)];
    std::vector<bool> view(tensors_.size(), false);
    view[static_cast<size_t>(cat.output_id)] = true;
    bool materialized = io_output[static_cast<size_t>(cat.output_id)];
    Step* user = nullptr;
    int users = 0;
    for (size_t j = i + 1; j < steps.size(); ++j) {
      Step& s = steps[j];
      bool reads = false;
      for (int32_t id : s.input_ids) reads |= view[static_cast<size_t>(id)];
      if (!reads) continue;
      if (s.kind == StepKind::kNone && s.input_ids.size() == 1) {
        view[static_cast<size_t>(s.output_id)] = true;
        materialized |= io_output[static_cast<size_t>(s.output_id)];
        continue;
      }
      ++users;
      user = &s;
    }
    if (materialized || users != 1 || !user || user->kind != StepKind::kMatMulQ || user->M != 1) continue;
    if (view[static_cast<size_t>(user->input_ids[0])] || !view[static_cast<size_t>(user->input_ids[1])]) continue;
    const size_t rank = c.shape.size();
    if (rank < 2 || c.shape.back() != user->N || user->K <= 0 || user->N <= 0) continue;
    const int64_t per_batch = user->K * user->N;
    if (c.numel % per_batch != 0) continue;
    const int64_t part0 = static_cast<int64_t>(cat.chunks[0] / cat.esize), part1 = static_cast<int64_t>(cat.chunks[1] / cat.esize);
    std::array<Segment, 2> seg{};
    if (cat.axis == static_cast<int>(rank) - 1 && part0 + part1 == user->N) {  // along N
      seg[0] = {cat.sources[0], user->K * part0, part0, 0, user->K, 0, part0};
      seg[1] = {cat.sources[1], user->K * part1, part1, 0, user->K, part0, part1};
    } else if (cat.axis == static_cast<int>(rank) - 2 && c.shape[rank - 2] == user->K && part0 % user->N == 0 &&
               part1 % user->N == 0 && (part0 + part1) / user->N == user->K) {  // along K
      const int64_t k0 = part0 / user->N, k1 = part1 / user->N;
      seg[0] = {cat.sources[0], k0 * user->N, user->N, 0, k0, 0, user->N};
      seg[1] = {cat.sources[1], k1 * user->N, user->N, k0, k1, 0, user->N};
    } else {
      continue;
    }
    // Both operands must stay intact until the matmul: no step in between may write over them
    // (the lowering keeps them alive that long; a payload from elsewhere might not).
    const size_t user_index = static_cast<size_t>(user - steps.data());
    bool clobbered = false;
    for (size_t k = i + 1; k < user_index && !clobbered; ++k) {
      const Step& s = steps[k];
      if (s.kind == StepKind::kNone) continue;
      for (size_t src = 0; src < 2; ++src) {
        const TensorInfo& t = tensors_[static_cast<size_t>(cat.input_ids[src])];
        auto overlaps = [&](const Loc& l, uint64_t bytes) {
          return l.base == t.loc.base && l.offset < t.loc.offset + t.bytes && t.loc.offset < l.offset + bytes;
        };
        clobbered |= overlaps(s.out.loc, tensors_[static_cast<size_t>(s.output_id)].bytes) ||
                     (s.scratch_bytes > 0 && overlaps(Loc{1, s.scratch}, s.scratch_bytes));
      }
    }
    if (clobbered) continue;
    user->segments = seg;
    user->work.assign(user->batches.size() * static_cast<size_t>(split_work_words(user->K, user->N)), 0);
    user->kind = StepKind::kMatMulSplit;
    cat.kind = StepKind::kNone;
  }
}

std::unique_ptr<MethodPlan> Decoder::run(std::span<const uint8_t> payload) {
  // The flatbuffer is read from an aligned private copy (the payload may sit anywhere in a file);
  // nothing points into it after init.
  std::vector<uint64_t> aligned((payload.size() + 7) / 8);
  if (!payload.empty()) std::memcpy(aligned.data(), payload.data(), payload.size());
  const auto* buf = reinterpret_cast<const uint8_t*>(aligned.data());
  if (payload.size() < 8 || !flatbuffers::BufferHasIdentifier(buf, fb::MethodIdentifier()))
    bad("not a genai payload (identifier '{}' missing)", kPayloadIdentifier);
  flatbuffers::Verifier verifier(buf, payload.size(), 64, 10'000'000);
  if (!fb::VerifyMethodBuffer(verifier)) bad("the flatbuffer does not verify ({} bytes)", payload.size());
  const fb::Method* m = fb::GetMethod(buf);
  if (m->version() != kPayloadVersion) bad("format version {} (this build reads {})", m->version(), kPayloadVersion);
  if (!enum_ok(m->precision())) bad("precision {}", static_cast<int>(m->precision()));
  if (!m->tensors() || !m->ops() || !m->inputs() || !m->outputs()) bad("tensors, ops, inputs or outputs missing");

  plan_ = std::make_unique<MethodPlan>();
  plan_->label = label_;
  plan_->name = m->name() ? m->name()->str() : std::string();
  plan_->quantized = m->precision() == fb::Precision::Quantized;
  plan_->planned_bytes = m->planned_bytes();
  plan_->lower_bound_bytes = m->lower_bound_bytes();
  if (plan_->planned_bytes > (uint64_t{1} << 44)) bad("planned arena of {} bytes", plan_->planned_bytes);

  tensors_.resize(m->tensors()->size());
  for (flatbuffers::uoffset_t i = 0; i < m->tensors()->size(); ++i) decode_tensor(i, m->tensors()->Get(i));

  n_inputs_ = m->inputs()->size();
  n_outputs_ = m->outputs()->size();
  auto decode_io = [&](const fb::Io* io, size_t k, bool input) {
    if (!io) bad("{} {} is null", input ? "input" : "output", k);
    const int32_t t = io->tensor();
    if (t < 0 || static_cast<size_t>(t) >= tensors_.size())
      bad("{} '{}' refers to tensor {}", input ? "input" : "output", io->name()->str(), t);
    const TensorInfo& info = tensors_[static_cast<size_t>(t)];
    IoBinding b;
    b.desc = runtime::IoDesc{io->name()->str(), dtype_of(info.type), info.shape};
    b.bytes = info.bytes;
    b.copy = io->copy();
    return b;
  };
  for (flatbuffers::uoffset_t i = 0; i < n_inputs_; ++i) plan_->inputs.push_back(decode_io(m->inputs()->Get(i), i, true));
  for (flatbuffers::uoffset_t j = 0; j < n_outputs_; ++j)
    plan_->outputs.push_back(decode_io(m->outputs()->Get(j), j, false));
  for (flatbuffers::uoffset_t i = 0; i < m->tensors()->size(); ++i) bind_storage(i, m->tensors()->Get(i));

  // I/O bindings: in place (the tensor is that caller buffer) or copied through the arena.
  for (size_t k = 0; k < n_inputs_ + n_outputs_; ++k) {
    const bool input = k < n_inputs_;
    const size_t i = input ? k : k - n_inputs_;
    const fb::Io* io = input ? m->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))
                             : m->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    IoBinding& b = input ? plan_->inputs[i] : plan_->outputs[i];
    const TensorInfo& t = tensors_[static_cast<size_t>(io->tensor())];
    if (b.copy) {
      if (input && t.storage != fb::Storage::Arena)
        bad("input '{}' is copied but its tensor '{}' is not in the arena", b.desc.name, t.name);
      b.loc = t.loc;
    } else {
      const fb::Storage want = input ? fb::Storage::Input : fb::Storage::Output;
      if (t.storage != want || t.loc.base != 2 + (input ? 0 : n_inputs_) + i)
        bad("{} '{}' is used in place but its tensor '{}' is not bound to it", input ? "input" : "output", b.desc.name,
            t.name);
    }
    (input ? plan_->input_descs : plan_->output_descs).push_back(b.desc);
  }

  for (flatbuffers::uoffset_t i = 0; i < m->ops()->size(); ++i) decode_op(m->ops()->Get(i), i);
  // Opt-in: the exact split accumulation (execute.cpp, doubles) is still slower than the
  // matmul kernel plus the cache copy it saves (measured: report / docs/payload.md).
  const char* fuse = std::getenv("GENAI_BACKEND_FUSE_KV");
  if (!fuse || !*fuse || std::string_view(fuse) == "0") return std::move(plan_);
  std::vector<bool> io_output(tensors_.size(), false);
  for (flatbuffers::uoffset_t j = 0; j < n_outputs_; ++j) io_output[static_cast<size_t>(m->outputs()->Get(j)->tensor())] = true;
  fuse_concat_into_matmul(io_output);
  return std::move(plan_);
}

}  // namespace

std::unique_ptr<MethodPlan> decode_method(std::span<const uint8_t> payload, const runtime::NamedDataLookup& named_data,
                                          std::string_view label) {
  return Decoder(label, named_data).run(payload);
}

}  // namespace genai::backends::exec
