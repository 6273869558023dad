#include "formats/gguf_writer.h"

#include <cstring>

#include "core/atomic_file.h"
#include "core/error.h"
#include "formats/gguf_file.h"

namespace genai {
namespace {

class Buffer {
 public:
  template <typename T>
  void put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> bytes;
};

void put_value(Buffer& b, const GgufValue& v) {
  auto u = [&] { return std::get<uint64_t>(v.data); };
  auto i = [&] { return std::get<int64_t>(v.data); };
  auto f = [&] { return std::get<double>(v.data); };
  switch (v.type) {
    case GgufValueType::kUint8: b.put<uint8_t>(static_cast<uint8_t>(u())); break;
    case GgufValueType::kInt8: b.put<int8_t>(static_cast<int8_t>(i())); break;
    case GgufValueType::kUint16: b.put<uint16_t>(static_cast<uint16_t>(u())); break;
    case GgufValueType::kInt16: b.put<int16_t>(static_cast<int16_t>(i())); break;
    case GgufValueType::kUint32: b.put<uint32_t>(static_cast<uint32_t>(u())); break;
    case GgufValueType::kInt32: b.put<int32_t>(static_cast<int32_t>(i())); break;
    case GgufValueType::kFloat32: b.put<float>(static_cast<float>(f())); break;
    case GgufValueType::kUint64: b.put<uint64_t>(u()); break;
    case GgufValueType::kInt64: b.put<int64_t>(i()); break;
    case GgufValueType::kFloat64: b.put<double>(f()); break;
    case GgufValueType::kBool: b.put<uint8_t>(std::get<bool>(v.data) ? 1 : 0); break;
    case GgufValueType::kString: b.put_string(std::get<std::string>(v.data)); break;
    case GgufValueType::kArray: {
      const auto& items = std::get<std::vector<GgufValue>>(v.data);
      b.put<uint32_t>(static_cast<uint32_t>(v.array_type));
      b.put<uint64_t>(items.size());
      for (const auto& e : items) {
        if (e.type != v.array_type) throw_failure("internal: GGUF array element type differs from the array's");
        put_value(b, e);
      }
      break;
    }
  }
}

}  // namespace

std::vector<uint8_t> ggml_encode(GgmlType type, const float* values, int64_t n) {
  std::vector<uint8_t> out(ggml_nbytes(type, static_cast<uint64_t>(n)));
  ggml_quantize(type, values, out.data(), n);
  return out;
}

GgufWriter::GgufWriter(uint64_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw_failure("internal: GGUF alignment must be a power of two");
  if (alignment != kGgufDefaultAlignment) set("general.alignment", GgufValue::u32(static_cast<uint32_t>(alignment)));
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, const Shape& shape, Producer produce) {
  if (shape.empty()) throw_failure("internal: GGUF tensor {} has no dimensions", name);
  const auto& info = ggml_type_info(type);
  if (shape.back() % info.block_size != 0)
    throw_input_error("tensor {}: row length {} is not a multiple of the {} block size {}", name, shape.back(),
                      info.name, info.block_size);
  for (const auto& t : tensors_)
    if (t.name == name) throw_failure("internal: GGUF tensor {} added twice", name);
  tensors_.push_back({name, type, shape, ggml_nbytes(type, static_cast<uint64_t>(shape_numel(shape))), std::move(produce)});
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, const Shape& shape, std::vector<uint8_t> bytes) {
  auto shared = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  add_tensor(name, type, shape, [shared] { return *shared; });
}

void GgufWriter::add_tensor_f32(const std::string& name, GgmlType type, const Shape& shape, std::vector<float> values) {
  auto shared = std::make_shared<std::vector<float>>(std::move(values));
  add_tensor(name, type, shape,
             [shared, type] { return ggml_encode(type, shared->data(), static_cast<int64_t>(shared->size())); });
}

void GgufWriter::write(const std::filesystem::path& path) const {
  Buffer head;
  head.put<uint32_t>(kGgufMagic);
  head.put<uint32_t>(3);
  head.put<uint64_t>(tensors_.size());
  head.put<uint64_t>(metadata_.size());
  for (const auto& [k, v] : metadata_) {
    head.put_string(k);
    head.put<uint32_t>(static_cast<uint32_t>(v.type));
    put_value(head, v);
  }
  auto align = [&](uint64_t x) { return (x + alignment_ - 1) / alignment_ * alignment_; };
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    head.put_string(t.name);
    head.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) head.put<uint64_t>(static_cast<uint64_t>(*it));
    head.put<uint32_t>(static_cast<uint32_t>(t.type));
    head.put<uint64_t>(offset);
    offset = align(offset + t.nbytes);
  }
  AtomicFileWriter out(path);
  out.write(head.bytes);
  out.write_zeros(align(head.bytes.size()) - head.bytes.size());
  for (const auto& t : tensors_) {
    std::vector<uint8_t> data = t.produce();
    if (data.size() != t.nbytes)
      throw_failure("internal: tensor {} produced {} bytes, expected {}", t.name, data.size(), t.nbytes);
    out.write(data);
    out.write_zeros(align(t.nbytes) - t.nbytes);
  }
  out.commit();
}

}  // namespace genai
