// Whether loading checks content: every named-data blob against the content hash in its key, and
// every program and tokenizer of an artifact dir against the size and digest manifest.json
// records. On by default; --no_verify turns it off for the process (load-time-critical use), as
// --threads sizes the one thread pool.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/chunked_digest.h"

namespace genai::runtime {

void set_load_verification(bool on);
bool load_verification();

// What manifest.json records about one file of an artifact dir.
struct FileChecksum {
  uint64_t size = 0;
  DigestKind kind = DigestKind::kXxh3_128;  // core/chunked_digest.h
  std::string digest;                       // hex
  // Programs: method -> digest of its delegate payloads (pte/payload_digests.h), to name the
  // method whose payload is corrupted; empty in manifests written before it.
  std::map<std::string, std::string> payloads;
};

}  // namespace genai::runtime
