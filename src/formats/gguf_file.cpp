#include "formats/gguf_file.h"

#include <algorithm>
#include <fstream>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/thread_pool.h"
#include "formats/byte_reader.h"

namespace genai {
namespace {

constexpr int kMaxArrayDepth = 8;    // nested arrays deeper than this are rejected
constexpr uint32_t kMaxDims = 4;     // GGML_MAX_DIMS
constexpr uint64_t kMaxNameLength = 1u << 16;

std::string read_string(ByteReader& r, std::string_view what) {
  const uint64_t n = r.read<uint64_t>(what);
  return std::string(r.read_bytes(n, what));
}

// Smallest encoded size of one value of type t (for bounding array lengths before allocating).
uint64_t min_encoded_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kString:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    case GgufValueType::kArray:
      return 12;
  }
  return 1;
}

GgufValue read_value(ByteReader& r, GgufValueType type, const std::string& key, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufValueType::kUint8: v.data = uint64_t{r.read<uint8_t>(key)}; break;
    case GgufValueType::kInt8: v.data = int64_t{r.read<int8_t>(key)}; break;
    case GgufValueType::kUint16: v.data = uint64_t{r.read<uint16_t>(key)}; break;
    case GgufValueType::kInt16: v.data = int64_t{r.read<int16_t>(key)}; break;
    case GgufValueType::kUint32: v.data = uint64_t{r.read<uint32_t>(key)}; break;
    case GgufValueType::kInt32: v.data = int64_t{r.read<int32_t>(key)}; break;
    case GgufValueType::kFloat32: v.data = double{r.read<float>(key)}; break;
    case GgufValueType::kUint64: v.data = r.read<uint64_t>(key); break;
    case GgufValueType::kInt64: v.data = r.read<int64_t>(key); break;
    case GgufValueType::kFloat64: v.data = r.read<double>(key); break;
    case GgufValueType::kBool: {
      const uint8_t b = r.read<uint8_t>(key);
      if (b > 1) throw_input_error("{}: metadata key {}: bool value {} is not 0 or 1", r.source(), key, b);
      v.data = b != 0;
      break;
    }
    case GgufValueType::kString: v.data = read_string(r, key); break;
    case GgufValueType::kArray: {
      if (depth >= kMaxArrayDepth)
        throw_input_error("{}: metadata key {}: arrays nested deeper than {}", r.source(), key, kMaxArrayDepth);
      const uint32_t raw = r.read<uint32_t>(key);
      if (!gguf_value_type_valid(raw))
        throw_input_error("{}: metadata key {}: invalid array element type {}", r.source(), key, raw);
      v.array_type = static_cast<GgufValueType>(raw);
      const uint64_t n = r.read<uint64_t>(key);
      if (n > r.remaining() / min_encoded_size(v.array_type))
        throw_input_error("{}: metadata key {}: array of {} elements does not fit in the file", r.source(), key, n);
      std::vector<GgufValue> items;
      items.reserve(static_cast<size_t>(n));
      for (uint64_t i = 0; i < n; ++i) items.push_back(read_value(r, v.array_type, key, depth + 1));
      v.data = std::move(items);
      break;
    }
  }
  return v;
}

}  // namespace

Shape GgufTensorInfo::shape() const {
  Shape s;
  for (auto it = ne.rbegin(); it != ne.rend(); ++it) s.push_back(static_cast<int64_t>(*it));
  return s;
}

int64_t GgufTensorInfo::numel() const {
  int64_t n = 1;
  for (uint64_t d : ne) n *= static_cast<int64_t>(d);
  return n;
}

GgufFile GgufFile::open(const std::filesystem::path& path) {
  auto map = MappedFile::open(path);
  auto bytes = map->bytes();
  GgufFile f = parse(bytes, path.string(), map);
  f.map_ = std::move(map);
  return f;
}

GgufFile GgufFile::parse(std::span<const uint8_t> bytes, std::string source, std::shared_ptr<const void> keepalive) {
  GgufFile f;
  f.source_ = std::move(source);
  f.keepalive_ = std::move(keepalive);
  f.bytes_ = bytes;
  ByteReader r(bytes, f.source_);
  if (bytes.size() < 4 || r.read<uint32_t>("magic") != kGgufMagic)
    throw_input_error("{}: not a GGUF file (missing 'GGUF' magic)", f.source_);
  f.version_ = r.read<uint32_t>("version");
  if (f.version_ != 2 && f.version_ != 3)
    throw_input_error("{}: unsupported GGUF version {} (supported: 2, 3)", f.source_, f.version_);
  const uint64_t n_tensors = r.read<uint64_t>("tensor count");
  const uint64_t n_kv = r.read<uint64_t>("metadata count");
  // Each KV takes >= 8 (key length) + 4 (type) + 1 bytes; each tensor info >= 8 + 4 + 4 + 8.
  if (n_kv > r.remaining() / 13) throw_input_error("{}: metadata count {} exceeds the file size", f.source_, n_kv);
  if (n_tensors > r.remaining() / 24)
    throw_input_error("{}: tensor count {} exceeds the file size", f.source_, n_tensors);

  f.metadata_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = read_string(r, "metadata key");
    const uint32_t raw = r.read<uint32_t>(key);
    if (!gguf_value_type_valid(raw))
      throw_input_error("{}: metadata key {}: invalid value type {}", f.source_, key, raw);
    GgufValue v = read_value(r, static_cast<GgufValueType>(raw), key, 0);
    if (f.metadata_index_.count(key)) throw_input_error("{}: duplicate metadata key {}", f.source_, key);
    f.metadata_index_[key] = f.metadata_.size();
    f.metadata_.emplace_back(std::move(key), std::move(v));
  }

  if (const GgufValue* a = f.find("general.alignment")) {
    auto v = a->as_int();
    if (!v || *v <= 0 || (*v & (*v - 1)) != 0 || *v > (1 << 20))
      throw_input_error("{}: general.alignment must be a power of two, got {}", f.source_, a->to_display_string());
    f.alignment_ = static_cast<uint64_t>(*v);
  }

  f.tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    t.name = read_string(r, "tensor name");
    if (t.name.size() > kMaxNameLength) throw_input_error("{}: tensor name longer than 64 KiB", f.source_);
    const uint32_t n_dims = r.read<uint32_t>(t.name);
    if (n_dims == 0 || n_dims > kMaxDims)
      throw_input_error("{}: tensor {}: {} dimensions (expected 1..{})", f.source_, t.name, n_dims, kMaxDims);
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = r.read<uint64_t>(t.name);
      if (ne == 0 || ne > (uint64_t{1} << 40) || numel > (uint64_t{1} << 48) / ne)
        throw_input_error("{}: tensor {}: invalid dimension {}", f.source_, t.name, ne);
      numel *= ne;
      t.ne.push_back(ne);
    }
    const uint32_t raw_type = r.read<uint32_t>(t.name);
    auto type = ggml_type_from_id(raw_type);
    if (!type)
      throw_input_error("{}: tensor {}: unsupported tensor type {} (supported: {})", f.source_, t.name,
                        ggml_type_id_name(raw_type), ggml_supported_type_names());
    t.type = *type;
    const auto& info = ggml_type_info(t.type);
    if (t.ne[0] % static_cast<uint64_t>(info.block_size) != 0)
      throw_input_error("{}: tensor {}: row length {} is not a multiple of the {} block size {}", f.source_, t.name,
                        t.ne[0], info.name, info.block_size);
    t.nbytes = ggml_nbytes(t.type, numel);
    t.offset = r.read<uint64_t>(t.name);
    if (t.offset % f.alignment_ != 0)
      throw_input_error("{}: tensor {}: data offset {} is not aligned to {}", f.source_, t.name, t.offset,
                        f.alignment_);
    if (f.tensor_index_.count(t.name)) throw_input_error("{}: duplicate tensor {}", f.source_, t.name);
    f.tensor_index_[t.name] = f.tensors_.size();
    f.tensors_.push_back(std::move(t));
  }

  // Data starts at the next multiple of the alignment.
  const uint64_t pos = r.pos();
  f.data_offset_ = (pos + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  if (f.data_offset_ > bytes.size() && !f.tensors_.empty())
    throw_input_error("{}: truncated: data section starts at {} beyond the file end {}", f.source_, f.data_offset_,
                      bytes.size());
  const uint64_t data_size = bytes.size() > f.data_offset_ ? bytes.size() - f.data_offset_ : 0;
  for (const auto& t : f.tensors_) {
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      throw_input_error("{}: truncated: tensor {} ({} bytes at data offset {}) extends beyond the file end",
                        f.source_, t.name, t.nbytes, t.offset);
  }
  // Tensor data must not overlap.
  std::vector<const GgufTensorInfo*> order;
  for (const auto& t : f.tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->offset + order[i - 1]->nbytes > order[i]->offset)
      throw_input_error("{}: tensors {} and {} overlap", f.source_, order[i - 1]->name, order[i]->name);
  return f;
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (!v->as_string()) throw_input_error("{}: metadata key {} must be a string, got {}", source_, key,
                                         gguf_value_type_name(v->type));
  return *v->as_string();
}

std::optional<int64_t> GgufFile::get_int(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto i = v->as_int();
  if (!i) throw_input_error("{}: metadata key {} must be an integer, got {}", source_, key, v->to_display_string());
  return i;
}

std::optional<double> GgufFile::get_number(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  auto d = v->as_number();
  if (!d) throw_input_error("{}: metadata key {} must be a number, got {}", source_, key, v->to_display_string());
  return d;
}

std::optional<bool> GgufFile::get_bool(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto b = v->as_bool()) return b;
  if (auto i = v->as_int()) return *i != 0;
  throw_input_error("{}: metadata key {} must be a bool, got {}", source_, key, v->to_display_string());
}

std::string GgufFile::require_string(const std::string& key) const {
  auto s = get_string(key);
  if (!s) throw_input_error("{}: missing metadata key {}", source_, key);
  return *s;
}

int64_t GgufFile::require_int(const std::string& key) const {
  auto i = get_int(key);
  if (!i) throw_input_error("{}: missing metadata key {}", source_, key);
  return *i;
}

namespace {
const std::vector<GgufValue>* array_of(const GgufFile& f, const std::string& key, const GgufValue* v) {
  if (!v) return nullptr;
  const auto* a = v->as_array();
  if (!a) throw_input_error("{}: metadata key {} must be an array, got {}", f.source(), key,
                            gguf_value_type_name(v->type));
  return a;
}
}  // namespace

std::vector<std::string> GgufFile::get_string_array(const std::string& key) const {
  std::vector<std::string> out;
  const auto* a = array_of(*this, key, find(key));
  if (!a) return out;
  out.reserve(a->size());
  for (const auto& e : *a) {
    if (!e.as_string()) throw_input_error("{}: metadata key {} must be an array of strings", source_, key);
    out.push_back(*e.as_string());
  }
  return out;
}

std::vector<float> GgufFile::get_float_array(const std::string& key) const {
  std::vector<float> out;
  const auto* a = array_of(*this, key, find(key));
  if (!a) return out;
  out.reserve(a->size());
  for (const auto& e : *a) {
    auto d = e.as_number();
    if (!d) throw_input_error("{}: metadata key {} must be an array of numbers", source_, key);
    out.push_back(static_cast<float>(*d));
  }
  return out;
}

std::vector<int32_t> GgufFile::get_int_array(const std::string& key) const {
  std::vector<int32_t> out;
  const auto* a = array_of(*this, key, find(key));
  if (!a) return out;
  out.reserve(a->size());
  for (const auto& e : *a) {
    auto i = e.as_int();
    if (!i || *i < INT32_MIN || *i > INT32_MAX)
      throw_input_error("{}: metadata key {} must be an array of 32-bit integers", source_, key);
    out.push_back(static_cast<int32_t>(*i));
  }
  return out;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensor_bytes(const GgufTensorInfo& t) const {
  return bytes_.subspan(static_cast<size_t>(data_offset_ + t.offset), static_cast<size_t>(t.nbytes));
}

Tensor GgufFile::tensor_f32(const GgufTensorInfo& t) const {
  auto bytes = tensor_bytes(t);
  if (t.type == GgmlType::kF32 && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) == 0)
    return Tensor::view(DType::kF32, t.shape(), bytes.data(), keepalive_);
  Tensor out = Tensor::zeros(DType::kF32, t.shape());
  float* dst = out.mutable_data<float>();
  const int64_t row = static_cast<int64_t>(t.ne[0]);
  const int64_t rows = t.numel() / row;
  const uint64_t row_bytes = ggml_nbytes(t.type, static_cast<uint64_t>(row));
  const uint8_t* src = bytes.data();
  const GgmlType type = t.type;
  ThreadPool::global().parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) ggml_dequantize(type, src + i * row_bytes, dst + i * row, row);
      },
      std::max<int64_t>(1, 65536 / row));
  if (map_) map_->release(bytes);
  return out;
}

Tensor GgufFile::tensor_float(const GgufTensorInfo& t) const {
  auto bytes = tensor_bytes(t);
  const DType half = t.type == GgmlType::kF16 ? DType::kF16 : t.type == GgmlType::kBF16 ? DType::kBF16 : DType::kF32;
  if (half != DType::kF32 && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint16_t) == 0)
    return Tensor::view(half, t.shape(), bytes.data(), keepalive_);
  return tensor_f32(t);
}

bool is_gguf_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  uint32_t magic = 0;
  if (!in.read(reinterpret_cast<char*>(&magic), 4)) return false;
  return magic == kGgufMagic;
}

}  // namespace genai
