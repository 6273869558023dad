#include "backends/qnn/htp_context_limit.h"

#include <fmt/format.h>

#include "core/error.h"

namespace genai::backends::qnn {

void check_htp_context_size(uint64_t weight_bytes, const std::string& method, int64_t shard, uint64_t limit) {
  if (weight_bytes <= limit) return;
  const std::string part =
      shard >= 0 ? fmt::format("layer shard {} of method {}", shard, method) : fmt::format("method {}", method);
  throw_input_error("--lowering qnn: {} holds {:.2f} GB of weights, above the {:.2f} GB one HTP context holds: cut "
                    "the decoder into more layer shards with --num_sharding (each shard is a context of its own)",
                    part, static_cast<double>(weight_bytes) / 1e9, static_cast<double>(limit) / 1e9);
}

}  // namespace genai::backends::qnn
