// The lowering's KV-concat decision: a concat(cache, new) read (through views) only by a one-row
// integer matmul as its b operand, along that matmul's N axis (keys: q·kᵀ) or K axis (values:
// p·v), becomes one MatMulConcat op that reads both parts in place, so the concatenated cache is
// neither copied nor given arena space. By default only 8-bit caches are fused: kernels::
// split_matmul_q over them is faster than kernels::matmul_q plus the copies it saves, while for
// 16-bit caches the two measured within noise (docs/payload.md); --backend_fuse_kv fuses those too.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/payload/payload_format.h"
#include "compile/backend.h"

namespace genai::backends {

// The choice is the lowering target's (compile::LoweringTarget::kv_fusion, from --backend_fuse_kv).
using compile::KvFusion;

// A transpose whose result has the same bytes as its operand: the axes longer than 1 keep their
// relative order (e.g. [1, 1, H, hd] -> [1, H, 1, hd] for one token).
bool transpose_keeps_bytes(const std::vector<int64_t>& shape, const std::vector<int32_t>& perm);

// Rewrites each fusable matmul of `ops` (quantized program) into MatMulConcat and returns, per op,
// whether it was folded away (the concat and the views between it and the matmul). `is_output`:
// per tensor, whether it is a method output (those concats stay). `fusion` says which caches.
std::vector<bool> fuse_kv_concats(std::vector<std::unique_ptr<fb::OpT>>& ops,
                                  const std::vector<std::unique_ptr<fb::TensorT>>& tensors,
                                  const std::vector<bool>& is_output, KvFusion fusion);

}  // namespace genai::backends
