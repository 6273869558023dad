// How much one HTP context holds. A context lives in the HTP's 32-bit address space, and
// upstream's README gives about 4 GB per context: the reason it splits 2-4B decoders into several
// contexts (--num_sharding). --lowering qnn refuses a context above the limit before the QNN
// compile starts, naming the way out.
#pragma once

#include <cstdint>
#include <string>

namespace genai::backends::qnn {

inline constexpr uint64_t kHtpMaxContextBytes = uint64_t{1} << 32;

// InputError when `weight_bytes` (the ONNX initializers of the graphs one context holds) exceed
// `limit`: it names the method, its layer shard (-1: unsharded) and --num_sharding.
void check_htp_context_size(uint64_t weight_bytes, const std::string& method, int64_t shard,
                            uint64_t limit = kHtpMaxContextBytes);

}  // namespace genai::backends::qnn
