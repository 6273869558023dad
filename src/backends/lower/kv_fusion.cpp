#include "backends/lower/kv_fusion.h"

namespace genai::backends {
namespace {

bool is_view(const fb::OpT& o, const std::vector<std::unique_ptr<fb::TensorT>>& tensors) {
  if (o.kind == fb::OpKind::Reshape) return true;
  return o.kind == fb::OpKind::Transpose && o.inputs.size() == 1 &&
         transpose_keeps_bytes(tensors[static_cast<size_t>(o.inputs[0])]->shape, o.perm);
}

}  // namespace

bool transpose_keeps_bytes(const std::vector<int64_t>& shape, const std::vector<int32_t>& perm) {
  int64_t last = -1;
  for (int32_t p : perm) {
    if (shape[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

std::vector<bool> fuse_kv_concats(std::vector<std::unique_ptr<fb::OpT>>& ops,
                                  const std::vector<std::unique_ptr<fb::TensorT>>& tensors,
                                  const std::vector<bool>& is_output, KvFusion fusion) {
  std::vector<bool> dropped(ops.size(), false);
  if (fusion == KvFusion::kNone) return dropped;
  for (size_t i = 0; i < ops.size(); ++i) {
    const fb::OpT& cat = *ops[i];
    if (cat.kind != fb::OpKind::Concat || cat.inputs.size() != 2) continue;
    if (fusion == KvFusion::kEightBit && tensors[static_cast<size_t>(cat.output)]->type != fb::ElementType::U8) continue;
    // The concat result and its views; the ops that read them.
    std::vector<bool> view(tensors.size(), false);
    view[static_cast<size_t>(cat.output)] = true;
    bool materialized = is_output[static_cast<size_t>(cat.output)];
    std::vector<size_t> chain{i};
    fb::OpT* user = nullptr;
    int users = 0;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      fb::OpT& o = *ops[j];
      bool reads = false;
      for (int in : o.inputs) reads = reads || view[static_cast<size_t>(in)];
      if (!reads) continue;
      if (is_view(o, tensors)) {
        view[static_cast<size_t>(o.output)] = true;
        materialized = materialized || is_output[static_cast<size_t>(o.output)];
        chain.push_back(j);
        continue;
      }
      ++users;
      user = &o;
    }
    if (materialized || users != 1 || user->kind != fb::OpKind::MatMul || user->inputs.size() != 2) continue;
    if (view[static_cast<size_t>(user->inputs[0])] || !view[static_cast<size_t>(user->inputs[1])]) continue;
    const auto& a = tensors[static_cast<size_t>(user->inputs[0])]->shape;
    const auto& b = tensors[static_cast<size_t>(user->inputs[1])]->shape;
    const auto& c = tensors[static_cast<size_t>(cat.output)]->shape;
    if (a.size() < 2 || a[a.size() - 2] != 1 || b.size() < 2 || c.size() < 2) continue;
    const int64_t K = b[b.size() - 2], N = b.back();
    const size_t rank = c.size();
    auto numel = [](const std::vector<int64_t>& s) {
      int64_t n = 1;
      for (int64_t d : s) n *= d;
      return n;
    };
    // The rule the executor checks (decode.cpp): parts [.., K, n] along N or [.., k, N] along K.
    const bool along_n = cat.axis == static_cast<int32_t>(rank) - 1, along_k = cat.axis == static_cast<int32_t>(rank) - 2;
    if (!(along_n || along_k) || c[rank - 2] != K || c.back() != N || numel(c) != numel(b) || K <= 0 || N <= 0) continue;
    user->kind = fb::OpKind::MatMulConcat;
    user->inputs = {user->inputs[0], cat.inputs[0], cat.inputs[1]};
    user->axis = cat.axis;
    user->b_shape = b;
    for (size_t k : chain) dropped[k] = true;
  }
  return dropped;
}

}  // namespace genai::backends
