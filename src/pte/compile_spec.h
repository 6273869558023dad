// One backend compile spec as a .pte stores it: an opaque value under a key. The QNN options
// flatbuffer travels under the key "qnn_compile_spec".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace genai {

struct CompileSpec {
  std::string key;
  std::vector<uint8_t> value;
  bool operator==(const CompileSpec&) const = default;
};

inline constexpr const char* kQnnCompileSpecKey = "qnn_compile_spec";

namespace pte {
using genai::CompileSpec;  // programs store it: pte::CompileSpec names the same type
}  // namespace pte

}  // namespace genai
