// Per method, a digest of its delegate payloads (the processed bytes of each of its delegates, in
// order): what manifest.json records beside a program's whole-file digest, so that a corrupted
// payload is named by the method that runs it. Methods without delegates have none.
#pragma once

#include <map>
#include <string>

#include "pte/program.h"

namespace genai::pte {

// method name -> hex digest (core/chunked_digest.h, XXH3-128 over the payloads one after another).
std::map<std::string, std::string> delegate_payload_digests(const Program& program);

}  // namespace genai::pte
