// Payload verification and plan building. Everything read from the payload is checked before it
// is used: the flatbuffer structure (Verifier), enum ranges, tensor shapes and byte sizes, every
// tensor index of every op, operand types and shapes per op kind (so kernels never read or write
// outside a tensor), arena offsets against the planned size, caller-buffer bindings against the
// I/O sizes, and each named-data entry's size against its format.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "backends/exec/method_plan.h"
#include "backends/payload/op_scratch.h"
#include "core/error.h"
#include "kernels/broadcast.h"

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

struct OpContext;

class Decoder {
 public:
  friend struct OpContext;
  Decoder(std::string_view label, const runtime::NamedDataLookup& named) : label_(label), named_(named) {}

  std::unique_ptr<MethodPlan> run(std::span<const uint8_t> payload);

  // One per op kind (kOpDecoders): checks the operands and fills the step's parameters.
  void decode_gather(OpContext& c) const;
  void decode_rows(OpContext& c) const;  // rms_norm, layer_norm, silu, gelu_tanh, tanh, softmax
  void decode_linear(OpContext& c) const;
  void decode_binary(OpContext& c) const;  // add, mul
  void decode_rope(OpContext& c) const;
  void decode_matmul(OpContext& c) const;
  void decode_concat(OpContext& c) const;
  void decode_reshape(OpContext& c) const;
  void decode_transpose(OpContext& c) const;
  void decode_slice(OpContext& c) const;
  void decode_matmul_concat(OpContext& c) const;

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
  static bool overlaps(const TensorInfo& a, const TensorInfo& b) {
    return a.loc.base == b.loc.base && a.loc.offset < b.loc.offset + b.bytes && b.loc.offset < a.loc.offset + a.bytes;
  }

  std::unique_ptr<MethodPlan> plan_;
  uint32_t version_ = 0;
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
  // A packed block-wise weight may carry its scales and block sums only as block meta (one copy).
  const bool packed = info.format == fb::DataFormat::PackedInt8 || info.format == fb::DataFormat::PackedInt4 ||
                      info.format == fb::DataFormat::PackedInt16;
  const bool meta_only = packed && info.block_size > 0 && w->block_meta() && !w->scales() && !w->block_sums();
  if (!meta_only) info.scales = reinterpret_cast<const float*>(named(w->scales(), per_row, 4, info.name, "scales"));
  switch (info.format) {
    case fb::DataFormat::PackedInt8:
    case fb::DataFormat::PackedInt4:
    case fb::DataFormat::PackedInt16: {
      const int bits = packed_bits(info.format);
      if (info.type != (bits == 16 ? fb::ElementType::I16 : fb::ElementType::I8))
        bad("packed weight '{}' has element type {}", info.name, fb::EnumNameElementType(info.type));
      info.data = named(w->data(), kernels::packed_linear_bytes(rows, cols, bits), 1, info.name, "data");
      if (!meta_only)
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

// The element counts before and after `axis`: {product of the leading axes, of the trailing axes}.
std::pair<int64_t, int64_t> around_axis(const std::vector<int64_t>& shape, int32_t axis) {
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return {outer, inner};
}

// Per-entry offsets of a batched matmul whose batch axes broadcast (GQA without copies).
std::vector<kernels::MatmulBatch> matmul_batches(const std::vector<int64_t>& a_batch, const std::vector<int64_t>& b_batch,
                                                 const std::vector<int64_t>& batch, int64_t M, int64_t K, int64_t N) {
  const auto sa = kernels::broadcast_strides(a_batch, batch.size()), sb = kernels::broadcast_strides(b_batch, batch.size());
  int64_t n_batch = 1;
  for (int64_t d : batch) n_batch *= d;
  std::vector<kernels::MatmulBatch> batches;
  std::array<int64_t, kMaxRank> idx{};
  for (int64_t i = 0; i < n_batch; ++i) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    batches.push_back({oa * M * K, ob * K * N, i * M * N});
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return batches;
}

// Everything one op's decoder reads and checks.
struct OpContext {
  const Decoder& decoder;
  const fb::Op* op;
  fb::OpKind kind;
  std::string name;
  std::vector<const TensorInfo*> in;
  const TensorInfo* out = nullptr;
  Step step;
  bool view = false;  // no step: the result is its operand's bytes

  void arity(size_t lo, size_t hi) const {
    if (in.size() < lo || in.size() > hi) decoder.bad("op '{}' ({}) has {} inputs", name, fb::EnumNameOpKind(kind), in.size());
  }
  void need(bool ok, std::string_view what) const {
    if (!ok) decoder.bad("op '{}' ({}): {}", name, fb::EnumNameOpKind(kind), what);
  }
  template <typename P>
  P& params(StepKind k) {
    step.kind = k;
    return step.params.emplace<P>();
  }
};

void Decoder::decode_reshape(OpContext& c) const {
  c.arity(1, 1);
  const TensorInfo &x = *c.in[0], &out = *c.out;
  c.need(same_encoding(x, out), "operand and result differ in type or encoding");
  c.need(x.numel == out.numel, "element counts differ");
  if (x.loc == out.loc) c.view = true;
  else c.params<CopyParams>(StepKind::kCopy).bytes = out.bytes;
}

void Decoder::decode_transpose(OpContext& c) const {
  c.arity(1, 1);
  const TensorInfo &x = *c.in[0], &out = *c.out;
  c.need(same_encoding(x, out), "operand and result differ in type or encoding");
  const auto* perm = c.op->perm();
  c.need(perm && perm->size() == x.shape.size() && out.shape.size() == x.shape.size(), "bad permutation");
  std::array<bool, kMaxRank> seen{};
  std::array<int64_t, kMaxRank> in_strides{};
  int64_t st = 1;
  for (size_t d = x.shape.size(); d-- > 0;) {
    in_strides[d] = st;
    st *= x.shape[d];
  }
  TransposeParams t;
  t.rank = static_cast<int>(x.shape.size());
  t.esize = element_size(x.type);
  bool identity = true;
  int64_t last = -1;
  for (size_t d = 0; d < perm->size(); ++d) {
    const int32_t p = perm->Get(static_cast<flatbuffers::uoffset_t>(d));
    c.need(p >= 0 && static_cast<size_t>(p) < x.shape.size() && !seen[static_cast<size_t>(p)], "bad permutation");
    seen[static_cast<size_t>(p)] = true;
    c.need(out.shape[d] == x.shape[static_cast<size_t>(p)], "result shape is not the permuted operand shape");
    t.dims[d] = out.shape[d];
    t.strides[d] = in_strides[static_cast<size_t>(p)];
    if (x.shape[static_cast<size_t>(p)] != 1) {
      if (p < last) identity = false;
      last = p;
    }
  }
  if (x.loc == out.loc) {
    c.need(identity, "a transpose that moves bytes cannot write over its operand");
    c.view = true;
  } else if (identity) {
    c.params<CopyParams>(StepKind::kCopy).bytes = out.bytes;
  } else {
    c.params<TransposeParams>(StepKind::kTranspose) = t;
  }
}

void Decoder::decode_concat(OpContext& c) const {
  c.arity(1, 1024);
  const TensorInfo& out = *c.out;
  const int32_t axis = c.op->axis();
  c.need(axis >= 0 && static_cast<size_t>(axis) < out.shape.size(), "axis out of range");
  int64_t total = 0;
  for (const TensorInfo* t : c.in) {
    c.need(same_encoding(*t, out), "operands differ in type or encoding from the result");
    c.need(t->shape.size() == out.shape.size(), "operand ranks differ");
    for (size_t d = 0; d < out.shape.size(); ++d)
      if (d != static_cast<size_t>(axis)) c.need(t->shape[d] == out.shape[d], "operand shapes differ off the axis");
    total += t->shape[static_cast<size_t>(axis)];
  }
  c.need(total == out.shape[static_cast<size_t>(axis)], "result length along the axis is not the sum");
  ConcatParams& p = c.params<ConcatParams>(StepKind::kConcat);
  const uint64_t esize = element_size(out.type);
  const auto [outer, inner] = around_axis(out.shape, axis);
  p.outer = outer;
  p.out_row = static_cast<uint64_t>(out.shape[static_cast<size_t>(axis)] * inner) * esize;
  for (const TensorInfo* t : c.in) {
    p.chunks.push_back(static_cast<uint64_t>(t->shape[static_cast<size_t>(axis)] * inner) * esize);
    c.need(!overlaps(*t, out), "an operand overlaps the result");
    p.sources.push_back(t->loc);
  }
}

void Decoder::decode_slice(OpContext& c) const {
  c.arity(1, 1);
  const TensorInfo &x = *c.in[0], &out = *c.out;
  c.need(same_encoding(x, out), "operand and result differ in type or encoding");
  const int32_t axis = c.op->axis();
  c.need(axis >= 0 && static_cast<size_t>(axis) < x.shape.size() && out.shape.size() == x.shape.size(), "axis out of range");
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (d != static_cast<size_t>(axis)) c.need(x.shape[d] == out.shape[d], "shapes differ off the axis");
  const int64_t len = out.shape[static_cast<size_t>(axis)], start = c.op->start();
  c.need(start >= 0 && start <= x.shape[static_cast<size_t>(axis)] && len <= x.shape[static_cast<size_t>(axis)] - start,
         "slice outside the operand");
  SliceParams& p = c.params<SliceParams>(StepKind::kSlice);
  const uint64_t esize = element_size(x.type);
  const auto [outer, inner] = around_axis(x.shape, axis);
  p.outer = outer;
  p.in_row = static_cast<uint64_t>(x.shape[static_cast<size_t>(axis)] * inner) * esize;
  p.start = static_cast<uint64_t>(start * inner) * esize;
  p.length = static_cast<uint64_t>(len * inner) * esize;
}

void Decoder::decode_gather(OpContext& c) const {
  c.arity(2, 2);
  const TensorInfo &table = *c.in[0], &idx = *c.in[1], &out = *c.out;
  c.need(table.storage == fb::Storage::Data && table.shape.size() == 2, "the table must be 2-D named data");
  c.need(idx.type == fb::ElementType::I32, "indices must be int32");
  c.need(value_type(out), "result type is not the program's activation type");
  GatherParams g;
  g.table_rows = table.shape[0];
  g.width = table.shape[1];
  c.need(out.shape.size() == idx.shape.size() + 1 && out.shape.back() == g.width &&
             std::equal(idx.shape.begin(), idx.shape.end(), out.shape.begin()),
         "result shape is not indices + [width]");
  g.index_name = idx.name;
  g.format = table.format;
  g.table_type = table.type;
  g.table = table.data;
  g.scales = table.scales;
  g.block_size = table.block_size;
  g.esize = element_size(out.type);
  if (table.format == fb::DataFormat::Plain && same_encoding(table, out)) {
    c.params<GatherParams>(StepKind::kGatherRows) = std::move(g);
    return;
  }
  const bool plain_ok =
      table.format == fb::DataFormat::Plain && (table.type == fb::ElementType::F32 || table.type == fb::ElementType::F16);
  const bool scaled_ok = table.format == fb::DataFormat::ScaledInt8 || table.format == fb::DataFormat::ScaledInt16;
  c.need(plain_ok || scaled_ok, "unsupported table format");
  c.params<GatherParams>(StepKind::kGatherConvert) = std::move(g);
}

void Decoder::decode_linear(OpContext& c) const {
  c.arity(2, 3);
  const TensorInfo &x = *c.in[0], &w = *c.in[1], &out = *c.out;
  c.need(value_type(x) && value_type(out), "operand or result type is not the program's activation type");
  c.need(w.storage == fb::Storage::Data && w.shape.size() == 2, "the weight must be 2-D named data");
  const int64_t out_features = w.shape[0], in_features = w.shape[1];
  c.need(!x.shape.empty() && x.shape.back() == in_features, "input features differ from the weight");
  c.need(out.shape.size() == x.shape.size() && out.shape.back() == out_features &&
             std::equal(x.shape.begin(), x.shape.end() - 1, out.shape.begin()),
         "result shape is not [..., out_features]");
  const int64_t rows = in_features > 0 ? x.numel / in_features : 0;
  const float* bias = nullptr;
  if (c.in.size() == 3) {
    const TensorInfo& b = *c.in[2];
    c.need(b.storage == fb::Storage::Data && b.type == fb::ElementType::F32 && b.numel == out_features,
           "the bias must be float32 [out_features] named data");
    bias = reinterpret_cast<const float*>(b.data);
  }
  if (plan_->quantized) {
    c.need(w.format == fb::DataFormat::PackedInt8 || w.format == fb::DataFormat::PackedInt4 ||
               w.format == fb::DataFormat::PackedInt16,
           "quantized linear weights must be packed int4/int8/int16");
    LinearPackedParams& p = c.params<LinearPackedParams>(StepKind::kLinearPacked);
    p.rows = rows;
    p.bias = bias;
    p.weights = kernels::PackedLinear{out_features, in_features, packed_bits(w.format), w.block_size, w.data,
                                      w.scales,     w.block_sums, w.block_meta};
  } else {
    c.need(w.format == fb::DataFormat::Plain && w.type == fb::ElementType::F16, "float16 program weights must be float16");
    LinearF16Params& p = c.params<LinearF16Params>(StepKind::kLinearF16);
    p.rows = rows;
    p.in_features = in_features;
    p.out_features = out_features;
    p.weights = reinterpret_cast<const uint16_t*>(w.data);
    p.bias = bias;
  }
}

void Decoder::decode_matmul(OpContext& c) const {
  c.arity(2, 2);
  const TensorInfo &a = *c.in[0], &b = *c.in[1], &out = *c.out;
  c.need(value_type(a) && value_type(b) && value_type(out), "operand or result type is not the program's activation type");
  c.need(a.shape.size() >= 2 && b.shape.size() >= 2 && out.shape.size() >= 2, "operands must be at least 2-D");
  MatMulParams& p = c.params<MatMulParams>(plan_->quantized ? StepKind::kMatMulQ : StepKind::kMatMulF);
  p.M = a.shape[a.shape.size() - 2];
  p.K = a.shape.back();
  p.N = b.shape.back();
  c.need(b.shape[b.shape.size() - 2] == p.K, "inner dimensions differ");
  const std::vector<int64_t> ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> batch;
  c.need(broadcast_to(ab, bb, &batch), "batch dimensions do not broadcast");
  std::vector<int64_t> expect = batch;
  expect.push_back(p.M);
  expect.push_back(p.N);
  c.need(expect == out.shape, "result shape is not batch + [M, N]");
  p.batches = matmul_batches(ab, bb, batch, p.M, p.K, p.N);
}

// a [.., 1, K] times b = concat(b0, b1, axis) seen as b_shape [.., K, N] (the same bytes), the
// concat along N (b's last axis: keys) or along K (values). Both parts are read in place.
void Decoder::decode_matmul_concat(OpContext& c) const {
  c.arity(3, 3);
  c.need(version_ >= 2, "needs payload version 2");
  c.need(plan_->quantized, "only in quantized programs");
  const TensorInfo &a = *c.in[0], &b0 = *c.in[1], &b1 = *c.in[2], &out = *c.out;
  c.need(value_type(a) && value_type(b0) && value_type(out), "operand or result type is not the program's activation type");
  c.need(same_encoding(b0, b1), "the parts of b differ in type or encoding");
  const auto* bs = c.op->b_shape();
  c.need(bs && bs->size() >= 2 && bs->size() <= static_cast<size_t>(kMaxRank), "b_shape missing or of bad rank");
  c.need(reinterpret_cast<uintptr_t>(bs->Data()) % alignof(int64_t) == 0, "misaligned b_shape");
  const std::vector<int64_t> b_shape(bs->begin(), bs->end());
  int64_t b_numel = 1;
  for (int64_t d : b_shape) {
    c.need(d > 0 && d <= kMaxElements && b_numel <= kMaxElements / d, "bad b_shape");
    b_numel *= d;
  }
  c.need(a.shape.size() >= 2 && out.shape.size() >= 2 && a.shape[a.shape.size() - 2] == 1, "a must be one row [.., 1, K]");
  MatMulConcatParams& p = c.params<MatMulConcatParams>(StepKind::kMatMulConcat);
  p.K = a.shape.back();
  p.N = b_shape.back();
  c.need(b_shape[b_shape.size() - 2] == p.K, "inner dimensions differ");
  const std::vector<int64_t> ab(a.shape.begin(), a.shape.end() - 2), bb(b_shape.begin(), b_shape.end() - 2);
  std::vector<int64_t> batch;
  c.need(broadcast_to(ab, bb, &batch), "batch dimensions do not broadcast");
  std::vector<int64_t> expect = batch;
  expect.push_back(1);
  expect.push_back(p.N);
  c.need(expect == out.shape, "result shape is not batch + [1, N]");
  // The concat's shape: the parts agree off the axis; its bytes are b's.
  const int32_t axis = c.op->axis();
  const size_t rank = b0.shape.size();
  c.need(rank >= 2 && b1.shape.size() == rank && (axis == static_cast<int32_t>(rank) - 1 || axis == static_cast<int32_t>(rank) - 2),
         "the concat axis must be one of the parts' last two");
  for (size_t d = 0; d < rank; ++d)
    if (d != static_cast<size_t>(axis)) c.need(b0.shape[d] == b1.shape[d], "the parts differ off the axis");
  c.need(b0.numel + b1.numel == b_numel && b0.shape.back() > 0 && b1.shape.back() > 0, "the parts do not make up b");
  const int64_t K = p.K, N = p.N;
  if (axis == static_cast<int32_t>(rank) - 1) {  // along N: each part [.., K, n_i]
    const int64_t n0 = b0.shape.back(), n1 = b1.shape.back();
    c.need(b0.shape[rank - 2] == K && n0 + n1 == N, "the parts are not [.., K, n] with n summing to N");
    p.segments[0] = {nullptr, K * n0, n0, 0, K, 0, n0};
    p.segments[1] = {nullptr, K * n1, n1, 0, K, n0, n1};
  } else {  // along K: each part [.., k_i, N]
    const int64_t k0 = b0.shape[rank - 2], k1 = b1.shape[rank - 2];
    c.need(b0.shape.back() == N && k0 + k1 == K, "the parts are not [.., k, N] with k summing to K");
    p.segments[0] = {nullptr, k0 * N, N, 0, k0, 0, N};
    p.segments[1] = {nullptr, k1 * N, N, k0, k1, 0, N};
  }
  p.batches = matmul_batches(ab, bb, batch, 1, K, N);
  p.work.assign(p.batches.size() * static_cast<size_t>(kernels::split_matmul_work(K, N)), 0.0);
}

void Decoder::decode_rows(OpContext& c) const {
  const bool layer_norm = c.kind == fb::OpKind::LayerNorm, norm = layer_norm || c.kind == fb::OpKind::RmsNorm;
  const int operands = layer_norm ? 3 : norm ? 2 : 1;
  c.arity(operands, operands);
  const TensorInfo &x = *c.in[0], &out = *c.out;
  c.need(float_operand(x) && value_type(out), "operand or result type is not a float or activation type");
  c.need(!x.shape.empty() && x.shape == out.shape, "result shape differs from the operand");
  if (norm) c.need(c.in[1]->type == fb::ElementType::F32 && c.in[1]->numel == x.shape.back(), "the weight must be float32 [dim]");
  if (layer_norm)
    c.need(c.in[2]->type == fb::ElementType::F32 && c.in[2]->numel == x.shape.back(), "the bias must be float32 [dim]");
  const StepKind k = layer_norm                          ? StepKind::kLayerNorm
                     : norm                              ? StepKind::kRmsNorm
                     : c.kind == fb::OpKind::Silu        ? StepKind::kSilu
                     : c.kind == fb::OpKind::GeluTanh    ? StepKind::kGeluTanh
                     : c.kind == fb::OpKind::Gelu        ? StepKind::kGelu
                     : c.kind == fb::OpKind::Tanh        ? StepKind::kTanh
                                                         : StepKind::kSoftmax;
  RowsParams& p = c.params<RowsParams>(k);
  p.width = x.shape.back();
  p.rows = p.width > 0 ? x.numel / p.width : 0;
  if (norm) p.eps = c.op->eps();
}

void Decoder::decode_binary(OpContext& c) const {
  c.arity(2, 2);
  const TensorInfo &a = *c.in[0], &b = *c.in[1], &out = *c.out;
  c.need(float_operand(a) && float_operand(b) && value_type(out), "operand or result type is not a float or activation type");
  std::vector<int64_t> shape;
  c.need(broadcast_to(a.shape, b.shape, &shape) && shape == out.shape, "result shape is not the broadcast shape");
  c.need(out.shape.size() <= static_cast<size_t>(kMaxRank), "rank too large");
  BinaryParams& p = c.params<BinaryParams>(c.kind == fb::OpKind::Add ? StepKind::kAdd : StepKind::kMul);
  if (a.numel == out.numel && b.numel == out.numel) p.broadcast = Broadcast::kSame;
  else if (b.numel == 1 && a.numel == out.numel) p.broadcast = Broadcast::kScalarB;
  else if (a.numel == 1 && b.numel == out.numel) p.broadcast = Broadcast::kScalarA;
  else if (a.numel == out.numel && b.numel > 0 && is_suffix(b.shape, out.shape)) p.broadcast = Broadcast::kRepeatB;
  else if (b.numel == out.numel && a.numel > 0 && is_suffix(a.shape, out.shape)) p.broadcast = Broadcast::kRepeatA;
  else p.broadcast = Broadcast::kGeneral;
  if (p.broadcast == Broadcast::kRepeatB) {
    p.inner = b.numel;
    p.outer = out.numel / b.numel;
  } else if (p.broadcast == Broadcast::kRepeatA) {
    p.inner = a.numel;
    p.outer = out.numel / a.numel;
  }
  p.rank = static_cast<int>(out.shape.size());
  for (size_t d = 0; d < out.shape.size(); ++d) p.dims[d] = out.shape[d];
  kernels::broadcast_strides(a.shape.data(), a.shape.size(), out.shape.size(), p.stride_a.data());
  kernels::broadcast_strides(b.shape.data(), b.shape.size(), out.shape.size(), p.stride_b.data());
}

void Decoder::decode_rope(OpContext& c) const {
  c.arity(3, 3);
  const TensorInfo &x = *c.in[0], &cs = *c.in[1], &sn = *c.in[2], &out = *c.out;
  c.need(float_operand(x) && float_operand(cs) && float_operand(sn) && value_type(out),
         "operand or result type is not a float or activation type");
  c.need(x.shape.size() == 4 && x.shape == out.shape, "x must be [B, H, S, D] like the result");
  RopeParams& p = c.params<RopeParams>(StepKind::kRope);
  p.batch = x.shape[0];
  p.heads = x.shape[1];
  p.seq = x.shape[2];
  p.head_dim = x.shape[3];
  const std::vector<int64_t> table{p.batch, p.seq, p.head_dim};
  c.need(cs.shape == table && sn.shape == table, "cos/sin must be [B, S, D]");
  c.need(p.head_dim % 2 == 0, "head dimension must be even");
}

// One decoder per payload op kind, in OpKind order.
using OpDecoder = void (Decoder::*)(OpContext&) const;
constexpr std::array<OpDecoder, static_cast<size_t>(fb::OpKind::MAX) + 1> kOpDecoders = {
    &Decoder::decode_gather,   &Decoder::decode_rows,       &Decoder::decode_linear,  &Decoder::decode_binary,
    &Decoder::decode_binary,   &Decoder::decode_rows,       &Decoder::decode_rope,    &Decoder::decode_matmul,
    &Decoder::decode_rows,     &Decoder::decode_concat,     &Decoder::decode_reshape, &Decoder::decode_transpose,
    &Decoder::decode_slice,    &Decoder::decode_matmul_concat, &Decoder::decode_rows,    &Decoder::decode_rows,
    &Decoder::decode_rows,     &Decoder::decode_rows};
static_assert(fb::OpKind::MAX == fb::OpKind::Gelu, "a new op kind needs its decoder in kOpDecoders");

void Decoder::decode_op(const fb::Op* op, size_t index) {
  if (!op) bad("op {} is null", index);
  if (!enum_ok(op->kind())) bad("op {} has kind {}", index, static_cast<int>(op->kind()));
  OpContext c{*this, op, op->kind(), op->name() ? op->name()->str() : fmt::format("#{}", index), {}, nullptr, {}, false};
  const char* kind_name = fb::EnumNameOpKind(c.kind);
  if (op->inputs())
    for (int32_t i : *op->inputs()) c.in.push_back(&tensor(i, c.name));
  c.out = &tensor(op->output(), c.name);
  for (const TensorInfo* t : c.in)
    if (t == c.out) bad("op '{}' ({}) reads its own output", c.name, kind_name);
  Step& s = c.step;
  s.name = c.name;
  s.quantized = plan_->quantized;
  s.out = operand(*c.out);
  s.n_in = static_cast<int>(std::min<size_t>(c.in.size(), 3));
  for (int i = 0; i < s.n_in; ++i) s.in[static_cast<size_t>(i)] = operand(*c.in[static_cast<size_t>(i)]);

  // Scratch reserved by the plan must cover what the op uses.
  std::vector<OperandInfo> infos;
  for (const TensorInfo* t : c.in) infos.push_back({t->type, t->numel});
  const uint64_t needed = op_scratch_bytes(c.kind, plan_->quantized ? fb::Precision::Quantized : fb::Precision::Float16,
                                           infos, {c.out->type, c.out->numel});
  if (needed > 0) {
    if (op->scratch_bytes() < needed || op->scratch_offset() > plan_->planned_bytes ||
        needed > plan_->planned_bytes - op->scratch_offset() || op->scratch_offset() % 4 != 0)
      bad("op '{}' ({}) needs {} scratch bytes, the payload reserves {} at offset {} of {}", c.name, kind_name, needed,
          op->scratch_bytes(), op->scratch_offset(), plan_->planned_bytes);
    s.scratch = op->scratch_offset();
  }

  (this->*kOpDecoders[static_cast<size_t>(c.kind)])(c);
  if (c.view) return;  // views write nothing and need no step
  check_writable(*c.out, s.name);
  plan_->steps.push_back(std::move(s));
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
  version_ = m->version();
  if (version_ < kOldestPayloadVersion || version_ > kPayloadVersion)
    bad("format version {} (this build reads {} to {})", version_, kOldestPayloadVersion, kPayloadVersion);
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
  return std::move(plan_);
}

}  // namespace

std::unique_ptr<MethodPlan> decode_method(std::span<const uint8_t> payload, const runtime::NamedDataLookup& named_data,
                                          std::string_view label) {
  return Decoder(label, named_data).run(payload);
}

}  // namespace genai::backends::exec
