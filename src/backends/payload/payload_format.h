// Constants of our delegate payload (schema/genai_payload.fbs, docs/payload.md): the flatbuffer
// file identifier, the format version a reader accepts, and the delegate ids that carry it.
#pragma once

#include <cstdint>
#include <string_view>

#include "schema/genai_payload_generated.h"

namespace genai::backends {

namespace fb = genai::payload_fb;

inline constexpr std::string_view kPayloadIdentifier = "GNPL";
// The version written. Bumped on any change an older reader would misread; a reader accepts every
// version from kOldestPayloadVersion on. 2: op kind MatMulConcat (and Op.b_shape).
inline constexpr uint32_t kPayloadVersion = 2;
inline constexpr uint32_t kOldestPayloadVersion = 1;

inline constexpr std::string_view kHtpDelegateId = "GenaiHtpBackend";
inline constexpr std::string_view kGpuDelegateId = "GenaiGpuBackend";

// Bytes per element of a payload element type (1..4).
inline uint64_t element_size(fb::ElementType t) {
  switch (t) {
    case fb::ElementType::F32:
    case fb::ElementType::I32:
      return 4;
    case fb::ElementType::F16:
    case fb::ElementType::U16:
    case fb::ElementType::I16:
      return 2;
    case fb::ElementType::U8:
    case fb::ElementType::I8:
      return 1;
  }
  return 0;
}

}  // namespace genai::backends
