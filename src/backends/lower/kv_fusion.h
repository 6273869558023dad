// The lowering's KV-concat decision: a concat(cache, new) read (through views) only by a one-row
// integer matmul as its b operand, along that matmul's N axis (keys: q·kᵀ) or K axis (values:
// p·v), becomes one MatMulConcat op that reads both parts in place, so the concatenated cache is
// neither copied nor given arena space. Off by default: kernels::split_matmul_q (exact sums in
// doubles) is still slower than kernels::matmul_q plus the copies it saves (docs/payload.md);
// --backend_fuse_kv turns it on.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/payload/payload_format.h"

namespace genai::backends {

// Process-wide choice read by every lowering (set from --backend_fuse_kv).
bool fuse_kv_concat();
void set_fuse_kv_concat(bool on);

// Sets the choice for a scope and restores the previous one (tests).
class ScopedFuseKvConcat {
 public:
  explicit ScopedFuseKvConcat(bool on) : saved_(fuse_kv_concat()) { set_fuse_kv_concat(on); }
  ~ScopedFuseKvConcat() { set_fuse_kv_concat(saved_); }
  ScopedFuseKvConcat(const ScopedFuseKvConcat&) = delete;
  ScopedFuseKvConcat& operator=(const ScopedFuseKvConcat&) = delete;

 private:
  bool saved_;
};

// A transpose whose result has the same bytes as its operand: the axes longer than 1 keep their
// relative order (e.g. [1, 1, H, hd] -> [1, H, 1, hd] for one token).
bool transpose_keeps_bytes(const std::vector<int64_t>& shape, const std::vector<int32_t>& perm);

// Rewrites each fusable matmul of `ops` (quantized program) into MatMulConcat and returns, per op,
// whether it was folded away (the concat and the views between it and the matmul). `is_output`:
// per tensor, whether it is a method output (those concats stay).
std::vector<bool> fuse_kv_concats(std::vector<std::unique_ptr<fb::OpT>>& ops,
                                  const std::vector<std::unique_ptr<fb::TensorT>>& tensors,
                                  const std::vector<bool>& is_output);

}  // namespace genai::backends
