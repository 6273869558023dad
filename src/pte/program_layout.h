// Where things sit in a .pte file: the optional extended header and the data segments after the
// flatbuffer. The writer reports the layout it chose; the reader reports what it found.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace genai::pte {

inline constexpr char kProgramIdentifier[] = "ET12";
inline constexpr char kExtendedHeaderMagic[] = "eh00";
inline constexpr uint32_t kExtendedHeaderLength = 32;  // magic through segment_data_size
inline constexpr uint64_t kExtendedHeaderOffset = 8;   // after root offset + identifier

// The "eh00" header a file with segment data carries at byte 8.
struct ExtendedHeader {
  uint64_t program_size = 0;         // flatbuffer bytes incl. both headers, from offset 0
  uint64_t segment_base_offset = 0;  // file offset of the first segment
  uint64_t segment_data_size = 0;    // segment_base_offset to end of last segment
  bool operator==(const ExtendedHeader&) const = default;
};

struct SegmentInfo {
  uint64_t offset = 0;  // relative to segment_base_offset, as DataSegment stores it
  uint64_t size = 0;    // valid bytes (padding may follow)
  bool operator==(const SegmentInfo&) const = default;
};

struct ProgramLayout {
  uint64_t file_size = 0;
  std::optional<ExtendedHeader> header;  // absent: a plain flatbuffer without segment data
  std::vector<SegmentInfo> segments;
  bool operator==(const ProgramLayout&) const = default;
};

}  // namespace genai::pte
