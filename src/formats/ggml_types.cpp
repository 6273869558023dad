#include "formats/ggml_types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/half.h"

namespace genai {
namespace {

constexpr int64_t kQK = 32;    // elements per block of the legacy quants
constexpr int64_t kQK_K = 256; // elements per super-block of the k-quants

struct Entry {
  GgmlType type;
  GgmlTypeInfo info;
};

constexpr std::array<Entry, 9> kTypes = {{
    {GgmlType::kF32, {1, 4, "F32"}},
    {GgmlType::kF16, {1, 2, "F16"}},
    {GgmlType::kQ4_0, {kQK, 2 + kQK / 2, "Q4_0"}},
    {GgmlType::kQ4_1, {kQK, 2 + 2 + kQK / 2, "Q4_1"}},
    {GgmlType::kQ8_0, {kQK, 2 + kQK, "Q8_0"}},
    {GgmlType::kQ4_K, {kQK_K, 2 + 2 + 12 + kQK_K / 2, "Q4_K"}},
    {GgmlType::kQ5_K, {kQK_K, 2 + 2 + 12 + kQK_K / 8 + kQK_K / 2, "Q5_K"}},
    {GgmlType::kQ6_K, {kQK_K, kQK_K / 2 + kQK_K / 4 + kQK_K / 16 + 2, "Q6_K"}},
    {GgmlType::kBF16, {1, 2, "BF16"}},
}};

// Names of the ggml ids we do not support, so messages say what the file holds.
std::string_view unsupported_name(uint32_t id) {
  switch (id) {
    case 6: return "Q5_0";
    case 7: return "Q5_1";
    case 9: return "Q8_1";
    case 10: return "Q2_K";
    case 11: return "Q3_K";
    case 15: return "Q8_K";
    case 16: return "IQ2_XXS";
    case 17: return "IQ2_XS";
    case 18: return "IQ3_XXS";
    case 19: return "IQ1_S";
    case 20: return "IQ4_NL";
    case 21: return "IQ3_S";
    case 22: return "IQ2_S";
    case 23: return "IQ4_XS";
    case 24: return "I8";
    case 25: return "I16";
    case 26: return "I32";
    case 27: return "I64";
    case 28: return "F64";
    case 29: return "IQ1_M";
    case 34: return "TQ1_0";
    case 35: return "TQ2_0";
    default: return {};
  }
}

inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

inline void store_half(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Q4_K / Q5_K: eight 6-bit scales and eight 6-bit mins packed into 12 bytes.
inline void k_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void dequant_q4_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int l = 0; l < kQK / 2; ++l) {
    y[l] = static_cast<float>((qs[l] & 0xF) - 8) * d;
    y[l + kQK / 2] = static_cast<float>((qs[l] >> 4) - 8) * d;
  }
}

void dequant_q4_1(const uint8_t* b, float* y) {
  const float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int l = 0; l < kQK / 2; ++l) {
    y[l] = static_cast<float>(qs[l] & 0xF) * d + m;
    y[l + kQK / 2] = static_cast<float>(qs[l] >> 4) * d + m;
  }
}

void dequant_q8_0(const uint8_t* b, float* y) {
  const float d = half_at(b);
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int l = 0; l < kQK; ++l) y[l] = static_cast<float>(qs[l]) * d;
}

// Q4_K: d, dmin, scales[12], qs[128]; 8 sub-blocks of 32, value = d*sc*q - dmin*m.
void dequant_q4_k(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qs = b + 16;
  for (int g = 0; g < 4; ++g) {  // 32 bytes -> two sub-blocks (low nibbles, then high nibbles)
    uint8_t sc, m;
    k_scale_min(2 * g, scales, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    k_scale_min(2 * g + 1, scales, &sc, &m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>(qs[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) y[32 + l] = d2 * static_cast<float>(qs[l] >> 4) - m2;
    qs += 32;
    y += 64;
  }
}

// Q5_K: d, dmin, scales[12], qh[32], qs[128]; bit j of qh[l] is the fifth bit of sub-block j.
void dequant_q5_k(const uint8_t* b, float* y) {
  const float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int g = 0; g < 4; ++g) {
    uint8_t sc, m;
    k_scale_min(2 * g, scales, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    k_scale_min(2 * g + 1, scales, &sc, &m);
    const float d2 = d * sc, m2 = dmin * m;
    const int lo_bit = 2 * g, hi_bit = 2 * g + 1;
    for (int l = 0; l < 32; ++l)
      y[l] = d1 * static_cast<float>((qs[l] & 0xF) | (((qh[l] >> lo_bit) & 1) << 4)) - m1;
    for (int l = 0; l < 32; ++l)
      y[32 + l] = d2 * static_cast<float>((qs[l] >> 4) | (((qh[l] >> hi_bit) & 1) << 4)) - m2;
    qs += 32;
    y += 64;
  }
}

// Q6_K: ql[128] low nibbles, qh[64] two high bits, scales[16] int8, d; value = d*scale*(q-32).
void dequant_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half) {  // 128 outputs from 64 ql bytes + 32 qh bytes
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * sc[is + 0] * static_cast<float>(q1);
      y[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
      y[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
      y[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// ggml's reference Q8_0: d = amax/127, q = round-half-away(x/d).
void quant_q8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int l = 0; l < kQK; ++l) amax = std::max(amax, std::fabs(x[l]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_half(b, d);
  for (int l = 0; l < kQK; ++l) b[2 + l] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[l] * id)));
}

// ggml's reference Q4_0: d = (signed value of largest magnitude) / -8, q = trunc(x/d + 8.5) clamped.
void quant_q4_0(const float* x, uint8_t* b) {
  float amax = 0.0f, max = 0.0f;
  for (int l = 0; l < kQK; ++l) {
    if (std::fabs(x[l]) > amax) {
      amax = std::fabs(x[l]);
      max = x[l];
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_half(b, d);
  for (int l = 0; l < kQK / 2; ++l) {
    const uint8_t lo = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[l] * id + 8.5f))));
    const uint8_t hi =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[l + kQK / 2] * id + 8.5f))));
    b[2 + l] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// ggml's reference Q4_1: d = (max-min)/15, m = min, q = trunc((x-min)/d + 0.5) clamped.
void quant_q4_1(const float* x, uint8_t* b) {
  float mn = x[0], mx = x[0];
  for (int l = 1; l < kQK; ++l) {
    mn = std::min(mn, x[l]);
    mx = std::max(mx, x[l]);
  }
  const float d = (mx - mn) / 15.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_half(b, d);
  store_half(b + 2, mn);
  for (int l = 0; l < kQK / 2; ++l) {
    const uint8_t lo = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>((x[l] - mn) * id + 0.5f))));
    const uint8_t hi =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>((x[l + kQK / 2] - mn) * id + 0.5f))));
    b[4 + l] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

}  // namespace

std::optional<GgmlType> ggml_type_from_id(uint32_t id) {
  for (const auto& e : kTypes)
    if (static_cast<uint32_t>(e.type) == id) return e.type;
  return std::nullopt;
}

const GgmlTypeInfo& ggml_type_info(GgmlType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e.info;
  throw_failure("internal: unknown ggml type {}", static_cast<uint32_t>(t));
}

std::string_view ggml_type_name(GgmlType t) { return ggml_type_info(t).name; }

std::string ggml_type_id_name(uint32_t id) {
  if (auto t = ggml_type_from_id(id)) return std::string(ggml_type_name(*t));
  if (auto n = unsupported_name(id); !n.empty()) return std::string(n);
  return fmt::format("id {}", id);
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  for (const auto& e : kTypes) {
    if (e.info.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size(); ++i)
      same = same && std::toupper(static_cast<unsigned char>(name[i])) == e.info.name[i];
    if (same) return e.type;
  }
  return std::nullopt;
}

std::string ggml_supported_type_names() {
  std::string s;
  for (const auto& e : kTypes) {
    if (!s.empty()) s += ", ";
    s += e.info.name;
  }
  return s;
}

uint64_t ggml_nbytes(GgmlType t, uint64_t n) {
  const auto& info = ggml_type_info(t);
  return n / static_cast<uint64_t>(info.block_size) * static_cast<uint64_t>(info.type_size);
}

void ggml_dequantize(GgmlType t, const uint8_t* src, float* dst, int64_t n) {
  const auto& info = ggml_type_info(t);
  if (n % info.block_size != 0) throw_failure("internal: {} elements not a multiple of the {} block", n, info.name);
  const int64_t blocks = n / info.block_size;
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case GgmlType::kF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = half_at(src + 2 * i);
      return;
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = bf16_to_f32(h);
      }
      return;
    default:
      break;
  }
  void (*fn)(const uint8_t*, float*) = nullptr;
  switch (t) {
    case GgmlType::kQ4_0: fn = dequant_q4_0; break;
    case GgmlType::kQ4_1: fn = dequant_q4_1; break;
    case GgmlType::kQ8_0: fn = dequant_q8_0; break;
    case GgmlType::kQ4_K: fn = dequant_q4_k; break;
    case GgmlType::kQ5_K: fn = dequant_q5_k; break;
    case GgmlType::kQ6_K: fn = dequant_q6_k; break;
    default: throw_failure("internal: no dequantizer for {}", info.name);
  }
  for (int64_t b = 0; b < blocks; ++b) fn(src + b * info.type_size, dst + b * info.block_size);
}

bool ggml_can_quantize(GgmlType t) {
  switch (t) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
      return true;
    default:
      return false;
  }
}

void ggml_quantize(GgmlType t, const float* src, uint8_t* dst, int64_t n) {
  const auto& info = ggml_type_info(t);
  if (n % info.block_size != 0) throw_failure("internal: {} elements not a multiple of the {} block", n, info.name);
  const int64_t blocks = n / info.block_size;
  switch (t) {
    case GgmlType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case GgmlType::kF16:
      for (int64_t i = 0; i < n; ++i) store_half(dst + 2 * i, src[i]);
      return;
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case GgmlType::kQ8_0:
      for (int64_t b = 0; b < blocks; ++b) quant_q8_0(src + b * kQK, dst + b * info.type_size);
      return;
    case GgmlType::kQ4_0:
      for (int64_t b = 0; b < blocks; ++b) quant_q4_0(src + b * kQK, dst + b * info.type_size);
      return;
    case GgmlType::kQ4_1:
      for (int64_t b = 0; b < blocks; ++b) quant_q4_1(src + b * kQK, dst + b * info.type_size);
      return;
    default:
      throw_failure("quantizing to {} is not supported (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1)", info.name);
  }
}

}  // namespace genai
