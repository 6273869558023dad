#include "pte/payload_digests.h"

#include <vector>

#include "core/chunked_digest.h"

namespace genai::pte {

std::map<std::string, std::string> delegate_payload_digests(const Program& program) {
  std::map<std::string, std::string> out;
  for (const Method& m : program.methods) {
    if (m.delegates.empty()) continue;
    // One digest per payload, then one over those: methods that share a payload (kv_forward and
    // prefill_forward of one QNN context) get the same digest without hashing a copy.
    std::vector<uint8_t> digests;
    for (const Delegate& d : m.delegates) {
      const std::string hex = chunked_digest_hex(d.processed.bytes(), DigestKind::kXxh3_128);
      digests.insert(digests.end(), hex.begin(), hex.end());
    }
    out[m.name] = chunked_digest_hex(digests, DigestKind::kXxh3_128);
  }
  return out;
}

}  // namespace genai::pte
