#include "backends/qnn/qnn_graph_rename.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/error.h"

namespace genai::backends::qnn {
namespace {

// Longest prefix seen in front of a name inside one string is "PICKLE/256/" (11 bytes).
constexpr size_t kMaxPrefix = 64;

uint32_t load_u32_le(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 | static_cast<uint32_t>(b[at + 2]) << 16 |
         static_cast<uint32_t>(b[at + 3]) << 24;
}

void store_u32_le(std::span<uint8_t> b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

bool printable(uint8_t c) { return c >= 0x20 && c < 0x7f; }

// A stored string whose text ends with the name found at `at`: where its length word is and how
// long the prefix before the name is.
struct NameRecord {
  size_t length_at = 0;
  size_t prefix = 0;
};

std::optional<NameRecord> record_at(std::span<const uint8_t> b, size_t at, size_t name_size) {
  const size_t end = at + name_size;
  if (end >= b.size() || b[end] != 0) return std::nullopt;  // strings end in a NUL
  for (size_t prefix = 0; prefix <= kMaxPrefix && prefix + 4 <= at; ++prefix) {
    // A prefix is text ending in '/': without that rule a name would match inside a longer one.
    if (prefix > 0 && (!printable(b[at - prefix]) || b[at - 1] != '/')) break;
    const size_t length_at = at - prefix - 4;
    if (load_u32_le(b, length_at) == prefix + name_size) return NameRecord{length_at, prefix};
  }
  return std::nullopt;
}

// Every offset where `name`'s bytes occur.
std::vector<size_t> occurrences(std::span<const uint8_t> b, std::string_view name) {
  std::vector<size_t> at;
  if (name.empty()) return at;
  const auto* first = reinterpret_cast<const uint8_t*>(name.data());
  for (auto it = b.begin();;) {
    it = std::search(it, b.end(), first, first + name.size());
    if (it == b.end()) return at;
    at.push_back(static_cast<size_t>(it - b.begin()));
    ++it;
  }
}

}  // namespace

size_t count_qnn_name_records(std::span<const uint8_t> binary, std::string_view name) {
  size_t n = 0;
  for (size_t at : occurrences(binary, name))
    if (record_at(binary, at, name.size())) ++n;
  return n;
}

std::vector<uint8_t> rename_qnn_graphs(std::span<const uint8_t> binary, std::span<const QnnGraphRename> renames) {
  std::vector<uint8_t> out(binary.begin(), binary.end());
  for (const QnnGraphRename& r : renames) {
    if (r.to.empty() || r.from.empty()) throw_failure("QNN graph rename: an empty graph name ('{}' -> '{}')", r.from, r.to);
    if (r.to == r.from) continue;
    if (r.to.size() > r.from.size())
      throw_failure("QNN graph rename: '{}' ({} bytes) is longer than the graph's name '{}' ({} bytes) it would "
                    "replace in place",
                    r.to, r.to.size(), r.from, r.from.size());
    if (count_qnn_name_records(out, r.to) > 0)
      throw_failure("QNN graph rename: the context binary already has a string '{}'", r.to);
    std::vector<std::pair<size_t, NameRecord>> found;
    for (size_t at : occurrences(out, r.from)) {
      const auto rec = record_at(out, at, r.from.size());
      if (!rec)
        throw_failure("QNN graph rename: graph name '{}' occurs at byte {} of the context binary outside a "
                      "length-prefixed string; this QNN compiler's binary layout is not the one known here",
                      r.from, at);
      found.emplace_back(at, *rec);
    }
    if (found.empty()) throw_failure("QNN graph rename: the context binary has no graph named '{}'", r.from);
    for (const auto& [at, rec] : found) {
      store_u32_le(out, rec.length_at, static_cast<uint32_t>(rec.prefix + r.to.size()));
      std::memcpy(out.data() + at, r.to.data(), r.to.size());
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(at + r.to.size()),
                out.begin() + static_cast<std::ptrdiff_t>(at + r.from.size()), uint8_t{0});
    }
  }
  return out;
}

}  // namespace genai::backends::qnn
