#include "formats/safetensors_file.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/half.h"
#include "core/mapped_file.h"

namespace genai {
namespace {

using nlohmann::json;

struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypes[] = {
    {"F32", DType::kF32}, {"F16", DType::kF16}, {"BF16", DType::kBF16}, {"F64", DType::kF64},
    {"I8", DType::kI8},   {"U8", DType::kU8},   {"I16", DType::kI16},   {"U16", DType::kU16},
    {"I32", DType::kI32}, {"U32", DType::kU32}, {"I64", DType::kI64},   {"U64", DType::kU64},
    {"BOOL", DType::kBool},
};

// nlohmann's recursive destruction of deeply nested input could exhaust the stack; a valid
// header nests three levels, so reject anything deeper than a small limit before parsing.
bool nesting_within(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > limit) return false;
    } else if (c == '}' || c == ']') --depth;
  }
  return true;
}

}  // namespace

bool safetensors_dtype_from_name(const std::string& name, DType* out) {
  for (const auto& d : kDTypes)
    if (name == d.name) {
      *out = d.dtype;
      return true;
    }
  return false;
}

std::string_view safetensors_dtype_name(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.name;
  return "?";
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  auto map = MappedFile::open(path);
  auto bytes = map->bytes();
  SafetensorsFile f = parse(bytes, path.string(), map);
  f.map_ = std::move(map);
  return f;
}

SafetensorsFile SafetensorsFile::parse(std::span<const uint8_t> bytes, std::string source,
                                       std::shared_ptr<const void> keepalive) {
  SafetensorsFile f;
  f.source_ = std::move(source);
  f.keepalive_ = std::move(keepalive);
  if (bytes.size() < 8) throw_input_error("{}: truncated: shorter than the 8-byte safetensors header length", f.source_);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kSafetensorsMaxHeader)
    throw_input_error("{}: safetensors header of {} bytes exceeds the {} byte limit", f.source_, n, kSafetensorsMaxHeader);
  if (n > bytes.size() - 8)
    throw_input_error("{}: truncated: safetensors header of {} bytes, file has {}", f.source_, n, bytes.size());
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8), static_cast<size_t>(n));
  if (!nesting_within(text, 8)) throw_input_error("{}: safetensors header JSON nests too deeply", f.source_);
  json header = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    throw_input_error("{}: safetensors header is not a JSON object", f.source_);
  f.data_ = bytes.subspan(static_cast<size_t>(8 + n));
  const uint64_t data_size = f.data_.size();

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) throw_input_error("{}: __metadata__ must be an object of strings", f.source_);
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          throw_input_error("{}: __metadata__ value of {} must be a string", f.source_, m.key());
        f.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) throw_input_error("{}: tensor {}: entry must be an object", f.source_, name);
    SafetensorsEntry e;
    e.name = name;
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string()) throw_input_error("{}: tensor {}: missing dtype", f.source_, name);
    e.dtype_name = dt->get<std::string>();
    if (!safetensors_dtype_from_name(e.dtype_name, &e.dtype))
      throw_input_error("{}: tensor {}: unsupported dtype {} (supported: F32, F16, BF16, F64, I8, U8, I16, U16, "
                        "I32, U32, I64, U64, BOOL)",
                        f.source_, name, e.dtype_name);
    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array() || sh->size() > 8)
      throw_input_error("{}: tensor {}: missing or invalid shape", f.source_, name);
    uint64_t numel = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) throw_input_error("{}: tensor {}: shape entries must be non-negative integers", f.source_, name);
      const uint64_t x = d.get<uint64_t>();
      if (x > (uint64_t{1} << 40) || (x != 0 && numel > (uint64_t{1} << 48) / x))
        throw_input_error("{}: tensor {}: shape too large", f.source_, name);
      numel *= x;
      e.shape.push_back(static_cast<int64_t>(x));
    }
    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      throw_input_error("{}: tensor {}: data_offsets must be [begin, end]", f.source_, name);
    e.begin = (*off)[0].get<uint64_t>();
    e.end = (*off)[1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size)
      throw_input_error("{}: tensor {}: data_offsets [{}, {}] outside the data section of {} bytes", f.source_, name,
                        e.begin, e.end, data_size);
    if (e.end - e.begin != numel * dtype_size(e.dtype))
      throw_input_error("{}: tensor {}: data_offsets span {} bytes but shape {} of {} needs {}", f.source_, name,
                        e.end - e.begin, shape_to_string(e.shape), e.dtype_name, numel * dtype_size(e.dtype));
    f.tensors_.push_back(std::move(e));
  }
  std::sort(f.tensors_.begin(), f.tensors_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 0; i < f.tensors_.size(); ++i) f.index_[f.tensors_[i].name] = i;
  std::vector<const SafetensorsEntry*> order;
  for (const auto& e : f.tensors_) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin < b->begin || (a->begin == b->begin && a->end < b->end); });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->end > order[i]->begin && order[i]->end > order[i]->begin)
      throw_input_error("{}: tensors {} and {} overlap", f.source_, order[i - 1]->name, order[i]->name);
  return f;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> SafetensorsFile::tensor_bytes(const SafetensorsEntry& e) const {
  return data_.subspan(static_cast<size_t>(e.begin), static_cast<size_t>(e.end - e.begin));
}

Tensor SafetensorsFile::tensor(const SafetensorsEntry& e) const {
  auto b = tensor_bytes(e);
  if (reinterpret_cast<uintptr_t>(b.data()) % dtype_size(e.dtype) == 0)
    return Tensor::view(e.dtype, e.shape, b.data(), keepalive_);
  Tensor t = Tensor::zeros(e.dtype, e.shape);
  if (!b.empty()) std::memcpy(t.mutable_raw(), b.data(), b.size());
  return t;
}

Tensor SafetensorsFile::tensor_float(const SafetensorsEntry& e) const {
  if (e.dtype == DType::kF16 || e.dtype == DType::kBF16) return tensor(e);
  return tensor_f32(e);
}

Tensor SafetensorsFile::tensor_f32(const SafetensorsEntry& e) const {
  if (e.dtype != DType::kF32 && e.dtype != DType::kF16 && e.dtype != DType::kBF16)
    throw_input_error("{}: tensor {}: dtype {} cannot be used as float weights (expected F32, F16 or BF16)", source_,
                      e.name, e.dtype_name);
  Tensor t = tensor(e);
  if (t.dtype() == DType::kF32) return t;
  Tensor out = t.to_f32();
  if (map_) map_->release(tensor_bytes(e));
  return out;
}

void write_safetensors(const std::filesystem::path& path, std::vector<SafetensorsTensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (i > 0 && tensors[i - 1].name == t.name) throw_failure("internal: safetensors tensor {} written twice", t.name);
    const uint64_t nbytes = static_cast<uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
    header[t.name] = {{"dtype", std::string(safetensors_dtype_name(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();  // std::map-backed: keys sorted
  text.append((8 - text.size() % 8) % 8, ' ');
  AtomicFileWriter out(path);
  const uint64_t n = text.size();
  out.write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&n), 8));
  out.write(text);
  for (const auto& t : tensors) {
    std::vector<uint8_t> data = t.produce();
    const uint64_t nbytes = static_cast<uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
    if (data.size() != nbytes)
      throw_failure("internal: tensor {} produced {} bytes, expected {}", t.name, data.size(), nbytes);
    out.write(data);
  }
  out.commit();
}

SafetensorsCheckpoint SafetensorsCheckpoint::open(const std::filesystem::path& dir) {
  SafetensorsCheckpoint c;
  const auto index_path = dir / "model.safetensors.index.json";
  const auto single = dir / "model.safetensors";
  if (std::filesystem::exists(index_path)) {
    auto map = MappedFile::open(index_path);
    auto bytes = map->bytes();
    json index = json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (index.is_discarded() || !index.is_object()) throw_input_error("{}: not valid JSON", index_path.string());
    auto wm = index.find("weight_map");
    if (wm == index.end() || !wm->is_object())
      throw_input_error("{}: missing weight_map object", index_path.string());
    std::map<std::string, size_t> file_of_shard;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      if (!it.value().is_string()) throw_input_error("{}: weight_map[{}] must be a file name", index_path.string(), it.key());
      const std::string shard = it.value().get<std::string>();
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
        throw_input_error("{}: weight_map[{}]: invalid shard file name '{}'", index_path.string(), it.key(), shard);
      if (!file_of_shard.count(shard)) {
        file_of_shard[shard] = c.files_.size();
        c.files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(dir / shard)));
      }
      const SafetensorsFile* file = c.files_[file_of_shard[shard]].get();
      const SafetensorsEntry* e = file->find(it.key());
      if (!e) throw_input_error("{}: tensor {} listed in {} is missing", file->source(), it.key(), index_path.string());
      c.by_name_[it.key()] = {file, e};
    }
  } else if (std::filesystem::exists(single)) {
    c.files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(single)));
    for (const auto& e : c.files_[0]->tensors()) c.by_name_[e.name] = {c.files_[0].get(), &e};
  } else {
    throw_input_error("{}: no model.safetensors or model.safetensors.index.json", dir.string());
  }
  return c;
}

SafetensorsCheckpoint::Located SafetensorsCheckpoint::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? Located{nullptr, nullptr} : it->second;
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : by_name_) out.push_back(k);
  return out;
}

void write_safetensors_checkpoint(const std::filesystem::path& dir, std::vector<SafetensorsTensorToWrite> tensors,
                                  uint64_t max_shard_bytes) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::vector<SafetensorsTensorToWrite>> shards(1);
  uint64_t size = 0, total = 0;
  for (auto& t : tensors) {
    const uint64_t nbytes = static_cast<uint64_t>(shape_numel(t.shape)) * dtype_size(t.dtype);
    if (!shards.back().empty() && size + nbytes > max_shard_bytes) {
      shards.emplace_back();
      size = 0;
    }
    size += nbytes;
    total += nbytes;
    shards.back().push_back(std::move(t));
  }
  std::filesystem::create_directories(dir);
  if (shards.size() == 1) {
    write_safetensors(dir / "model.safetensors", std::move(shards[0]));
    return;
  }
  json weight_map = json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
    for (const auto& t : shards[i]) weight_map[t.name] = file;
    write_safetensors(dir / file, std::move(shards[i]));
  }
  json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  write_file_atomic(dir / "model.safetensors.index.json", index.dump(2) + "\n");
}

}  // namespace genai
