// Memory planning: tensors with lifetimes [first, last] (op indices, inclusive) get offsets in
// one arena so that tensors alive at the same time never overlap. The lower bound is the largest
// total size of the tensors alive at any one op; the planner reports both.
#pragma once

#include <cstdint>
#include <vector>

namespace genai::compile {

struct BufferRequest {
  uint64_t size = 0;
  int64_t first = 0;  // op index that defines it (-1: live on entry)
  int64_t last = 0;   // last op index that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per request, multiples of `alignment`
  uint64_t total_bytes = 0;       // arena size
  uint64_t lower_bound_bytes = 0;
};

// Deterministic for identical requests.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment = 64);

}  // namespace genai::compile
