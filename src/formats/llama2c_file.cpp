#include "formats/llama2c_file.h"

#include <cstring>
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/mapped_file.h"

namespace genai {

namespace {
constexpr size_t kHeaderBytes = 7 * sizeof(int32_t);
constexpr int32_t kMaxDim = 1 << 20;
}  // namespace

std::vector<Llama2cArray> llama2c_layout(const Llama2cHeader& h) {
  const int64_t L = h.n_layers, D = h.dim, F = h.hidden_dim, V = h.vocab_size, hs = h.head_size();
  const int64_t q = static_cast<int64_t>(h.n_heads) * hs, kv = static_cast<int64_t>(h.n_kv_heads) * hs;
  std::vector<Llama2cArray> a = {
      {"token_embedding_table", {V, D}},
      {"rms_att_weight", {L, D}},
      {"wq", {L, q, D}},
      {"wk", {L, kv, D}},
      {"wv", {L, kv, D}},
      {"wo", {L, D, q}},
      {"rms_ffn_weight", {L, D}},
      {"w1", {L, F, D}},
      {"w2", {L, D, F}},
      {"w3", {L, F, D}},
      {"rms_final_weight", {D}},
      {"freq_cis_real", {h.seq_len, hs / 2}},
      {"freq_cis_imag", {h.seq_len, hs / 2}},
  };
  if (!h.shared_classifier) a.push_back({"wcls", {V, D}});
  return a;
}

Llama2cFile Llama2cFile::open(const std::filesystem::path& path) {
  auto map = MappedFile::open(path);
  auto bytes = map->bytes();
  return parse(bytes, path.string(), std::move(map));
}

Llama2cFile Llama2cFile::parse(std::span<const uint8_t> bytes, std::string source, std::shared_ptr<const void> keepalive) {
  Llama2cFile f;
  f.source_ = std::move(source);
  f.keepalive_ = std::move(keepalive);
  if (bytes.size() < kHeaderBytes)
    throw_input_error("{}: truncated: llama2.c checkpoint shorter than its {}-byte header", f.source_, kHeaderBytes);
  int32_t h[7];
  std::memcpy(h, bytes.data(), kHeaderBytes);
  Llama2cHeader& H = f.header_;
  H.dim = h[0];
  H.hidden_dim = h[1];
  H.n_layers = h[2];
  H.n_heads = h[3];
  H.n_kv_heads = h[4];
  H.shared_classifier = h[5] > 0;
  H.vocab_size = h[5] == INT32_MIN ? 0 : (h[5] < 0 ? -h[5] : h[5]);
  H.seq_len = h[6];
  const char* names[] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  const int32_t vals[] = {H.dim, H.hidden_dim, H.n_layers, H.n_heads, H.n_kv_heads, H.vocab_size, H.seq_len};
  for (int i = 0; i < 7; ++i)
    if (vals[i] <= 0 || vals[i] > kMaxDim)
      throw_input_error("{}: llama2.c header field {} = {} is out of range (1..{})", f.source_, names[i], vals[i], kMaxDim);
  if (H.dim % H.n_heads != 0 || H.n_heads % H.n_kv_heads != 0 || H.head_size() % 2 != 0)
    throw_input_error("{}: llama2.c header: dim {} / n_heads {} / n_kv_heads {} are inconsistent", f.source_, H.dim,
                      H.n_heads, H.n_kv_heads);
  const auto layout = llama2c_layout(H);
  uint64_t floats = 0;
  for (const auto& a : layout) floats += static_cast<uint64_t>(shape_numel(a.shape));
  // Header fields up to 2^20 keep every count below 2^64, but floats * 4 could still wrap: cap it.
  const uint64_t expected = floats > bytes.size() ? UINT64_MAX : kHeaderBytes + floats * 4;
  if (bytes.size() != expected)
    throw_input_error("{}: llama2.c checkpoint is {} bytes but its header (dim {}, hidden_dim {}, layers {}, heads {}, "
                      "kv heads {}, vocab {}, seq_len {}, {} classifier) implies {}{}",
                      f.source_, bytes.size(), H.dim, H.hidden_dim, H.n_layers, H.n_heads, H.n_kv_heads, H.vocab_size,
                      H.seq_len, H.shared_classifier ? "shared" : "separate",
                      expected == UINT64_MAX ? std::string("more than the file holds") : std::to_string(expected),
                      bytes.size() < expected ? " (truncated)" : "");
  const float* p = reinterpret_cast<const float*>(bytes.data() + kHeaderBytes);
  for (const auto& a : layout) {
    f.arrays_.emplace_back(a, p);
    p += shape_numel(a.shape);
  }
  return f;
}

bool Llama2cFile::has(const std::string& name) const {
  for (const auto& [a, p] : arrays_)
    if (a.name == name) return true;
  return false;
}

Tensor Llama2cFile::array(const std::string& name) const {
  for (const auto& [a, p] : arrays_)
    if (a.name == name) {
      if (reinterpret_cast<uintptr_t>(p) % alignof(float) == 0) return Tensor::view(DType::kF32, a.shape, p, keepalive_);
      Tensor t = Tensor::zeros(DType::kF32, a.shape);
      std::memcpy(t.mutable_raw(), p, t.nbytes());
      return t;
    }
  throw_input_error("{}: llama2.c checkpoint has no array {}", source_, name);
}

void write_llama2c(const std::filesystem::path& path, const Llama2cHeader& header,
                   const std::function<std::vector<float>(const Llama2cArray&)>& produce) {
  int32_t h[7] = {header.dim,        header.hidden_dim,
                  header.n_layers,   header.n_heads,
                  header.n_kv_heads, header.shared_classifier ? header.vocab_size : -header.vocab_size,
                  header.seq_len};
  AtomicFileWriter out(path);
  out.write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(h), sizeof(h)));
  for (const auto& a : llama2c_layout(header)) {
    std::vector<float> v = produce(a);
    if (static_cast<int64_t>(v.size()) != shape_numel(a.shape))
      throw_failure("internal: llama2.c array {} has {} values, expected {}", a.name, v.size(), shape_numel(a.shape));
    out.write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
  }
  out.commit();
}

}  // namespace genai
