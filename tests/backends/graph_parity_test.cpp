// Whole-graph parity: kv_forward and prefill_forward of a random decoder, quantized with each
// recipe, lowered to our payload, executed on integer inputs, against the QDQ reference on the
// same inputs. Every output code equal, with scalar and with SIMD kernels (one arithmetic:
// kernels/float_arith.h, kernels/requantize.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "backend_test_util.h"
#include "backends/lower/kv_fusion.h"
#include "backends/payload/payload_format.h"
#include "kernels/kernel_mode.h"
#include "model/residual_rotation.h"

namespace genai::backends_testing {
namespace {

using ModeGuard = kernels::ScopedKernelMode;

struct ParityCase {
  std::string recipe;
  graph::ModelMode mode;
  bool shared;
};

std::string case_name(const ::testing::TestParamInfo<ParityCase>& info) {
  std::string r = info.param.recipe;
  for (char& ch : r)
    if (ch == ':') ch = '_';
  return r + "_" + std::string(graph::model_mode_name(info.param.mode)) + (info.param.shared ? "_shared" : "_copied");
}

class QuantizedParity : public ::testing::TestWithParam<ParityCase> {};

TEST_P(QuantizedParity, ScalarAndSimdCodesEqualTheReference) {
  const ParityCase& p = GetParam();
  const auto model = block_friendly_model();
  const auto q = quantize(model, p.recipe, p.mode);
  std::vector<std::string> names{"kv_forward"};
  if (p.mode == graph::ModelMode::kHybrid) names.push_back("prefill_forward");
  for (const auto& name : names) {
    int64_t compared = 0;
    {
      ModeGuard scalar(kernels::KernelMode::kScalar);
      EXPECT_EQ(max_code_difference(q, name, p.shared, 3, &compared), 0) << name;
      EXPECT_GT(compared, 600);
    }
    {
      ModeGuard simd(kernels::KernelMode::kSimd);
      EXPECT_EQ(max_code_difference(q, name, p.shared, 3, &compared), 0) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Recipes, QuantizedParity,
                         ::testing::Values(ParityCase{"16a8w", graph::ModelMode::kHybrid, true},
                                         ParityCase{"16a8w", graph::ModelMode::kKv, false},
                                         ParityCase{"16a4w", graph::ModelMode::kHybrid, false},
                                         ParityCase{"16a4w_block:32", graph::ModelMode::kHybrid, true},
                                         ParityCase{"16a16w", graph::ModelMode::kKv, true},
                                         ParityCase{"8a8w", graph::ModelMode::kHybrid, true},
                                         ParityCase{"8a4w", graph::ModelMode::kKv, true}),
                         case_name);

// The in-place KV concat (the lowering turns the attention matmul of one decode row over
// concat(cache, new) into MatMulConcat, along N for keys and K for values; 8-bit caches by
// default, 16-bit ones too with --backend_fuse_kv) computes the same codes, in both buffer modes
// and KV widths.
TEST(QuantizedParityVariants, FusedKvConcatIsExact) {
  const auto model = block_friendly_model();
  for (const char* recipe : {"16a8w", "8a8w", "16a16w"}) {
    const auto q = quantize(model, recipe, graph::ModelMode::kHybrid);
    for (auto mode : {kernels::KernelMode::kScalar, kernels::KernelMode::kSimd})
      for (bool shared : {true, false}) {
        ModeGuard guard(mode);
        int64_t compared = 0;
        EXPECT_EQ(max_code_difference(q, "kv_forward", shared, 3, &compared, compile::KvFusion::kAll), 0)
            << recipe << " " << shared;
      }
  }
}

// The decision is the lowering's: fused, every layer's two attention matmuls become MatMulConcat
// and their concats disappear (with the arena the concatenated caches took); not fused, the
// payload has no MatMulConcat and keeps the concats. By default 8-bit caches are fused and
// 16-bit ones are not.
TEST(QuantizedParityVariants, FusionIsDecidedAtLowering) {
  backends::register_builtin_backends();
  const auto model = block_friendly_model();
  const auto q = quantize(model, "16a8w", graph::ModelMode::kHybrid);
  const compile::Backend* htp = compile::find_backend("htp");
  auto count = [](const compile::LoweredMethod& m, backends::fb::OpKind kind) {
    const auto* method = backends::fb::GetMethod(m.payload.bytes().data());
    int n = 0;
    for (const auto* op : *method->ops()) n += op->kind() == kind;
    return n;
  };
  EXPECT_EQ(compile::LoweringTarget().kv_fusion, compile::KvFusion::kEightBit);
  const auto q16 = quantize(model, "16a16w", graph::ModelMode::kHybrid);
  for (bool shared : {true, false}) {
    const auto by_default = htp->lower("kv_forward", q.bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", shared));
    const auto wide_by_default =
        htp->lower("kv_forward", q16.bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", shared));
    EXPECT_EQ(count(wide_by_default, backends::fb::OpKind::MatMulConcat), 0) << shared;
    auto with = [&](compile::KvFusion fusion) {
      return target_for("SM8650", shared, false, target::BackendType::kHtpBackend, fusion);
    };
    const auto plain = htp->lower("kv_forward", q.bundles.at(pipeline::GraphName::kKvForward), with(compile::KvFusion::kNone));
    const auto fused = htp->lower("kv_forward", q.bundles.at(pipeline::GraphName::kKvForward), with(compile::KvFusion::kAll));
    const auto wide_fused =
        htp->lower("kv_forward", q16.bundles.at(pipeline::GraphName::kKvForward), with(compile::KvFusion::kAll));
    EXPECT_EQ(count(by_default, backends::fb::OpKind::MatMulConcat), count(fused, backends::fb::OpKind::MatMulConcat))
        << shared;
    EXPECT_GT(count(wide_fused, backends::fb::OpKind::MatMulConcat), 0) << shared;
    EXPECT_EQ(count(plain, backends::fb::OpKind::MatMulConcat), 0);
    const int concats = count(plain, backends::fb::OpKind::Concat);
    EXPECT_GT(concats, 0);
    EXPECT_EQ(count(fused, backends::fb::OpKind::MatMulConcat), concats) << shared;
    EXPECT_EQ(count(fused, backends::fb::OpKind::Concat), 0) << shared;
    EXPECT_LT(fused.planned_bytes, plain.planned_bytes) << shared;
  }
}

TEST(QuantizedParityVariants, TiedEmbeddingsAndQkvBias) {
  const auto model = block_friendly_model(5, /*tied=*/true, /*qwen=*/true);
  const auto q = quantize(model, "16a8w", graph::ModelMode::kHybrid);
  ModeGuard scalar(kernels::KernelMode::kScalar);
  for (const char* name : {"kv_forward", "prefill_forward"}) {
    int64_t compared = 0;
    EXPECT_EQ(max_code_difference(q, name, true, 2, &compared), 0) << name;
  }
}

// Both graphs of a hybrid model: codes equal to the QDQ reference's in both kernel modes.
void expect_hybrid_codes_match(const quant::QuantizedModel& q) {
  for (const char* name : {"kv_forward", "prefill_forward"}) {
    int64_t compared = 0;
    {
      ModeGuard scalar(kernels::KernelMode::kScalar);
      EXPECT_EQ(max_code_difference(q, name, true, 2, &compared), 0) << name;
      EXPECT_GT(compared, 400);
    }
    ModeGuard simd(kernels::KernelMode::kSimd);
    EXPECT_EQ(max_code_difference(q, name, true, 2, &compared), 0) << name;
  }
}

// Every family's features (q/k norms, multipliers, NoPE layers) lower to codes equal to the QDQ
// reference's in both kernel modes.
TEST(QuantizedParityVariants, EveryFamilyFeature) {
  for (Architecture arch : testing::feature_families()) {
    SCOPED_TRACE(architecture_name(arch));
    const auto model = block_friendly_model(13, arch != Architecture::kQwen3, false, arch);
    const auto q = quantize(model, "16a8w", graph::ModelMode::kHybrid);
    expect_hybrid_codes_match(q);
  }
}

// The techniques of a 4-bit recipe that holds change numbers, not programs: a model whose residual
// stream was rotated (its norms folded, an untied head) quantized with the weight range search
// and a per-layer override, a model quantized by GPTQ, and a 4-bit grouped embedding table
// (-E 4,32) lower to codes equal to the QDQ reference's in both kernel modes.
TEST(QuantizedParityVariants, RotationRangeSearchOverridesGptqAndEmbeddingTablesAreExact) {
  auto rotated = std::make_shared<Model>(*block_friendly_model(17, /*tied=*/true));
  rotate_residual_stream(*rotated);
  quant::Recipe recipe = quant::recipe_from_spelling("16a4w_block:32");
  recipe.seq_mse_candidates = 8;
  quant::add_override(recipe, "layers\\.1\\..*=16a8w");
  expect_hybrid_codes_match(quantize(rotated, recipe, graph::ModelMode::kHybrid));
  quant::Recipe gptq = quant::recipe_from_spelling("16a4w");
  gptq.gptq = true;
  expect_hybrid_codes_match(quantize(block_friendly_model(19), gptq, graph::ModelMode::kHybrid));
  // -E 4,32: the token table at int4 in groups of 32, the tied head untied at its own scheme.
  auto untied = std::make_shared<Model>(*block_friendly_model(23, /*tied=*/true));
  untie_output_head(*untied);
  quant::Recipe embedding = quant::recipe_from_spelling("16a8w");
  quant::set_embedding_quantization(embedding, "4,32");
  const auto q = quantize(untied, embedding, graph::ModelMode::kHybrid);
  const auto& table = *q.encodings.at("kv_forward")->weights.at(weight_names::embed_tokens());
  EXPECT_EQ(table.dtype, quant::QDType::kI4);
  EXPECT_EQ(table.block_size, 32);
  expect_hybrid_codes_match(q);
}

// Sliding layers past their window (the windowed mask: a gathered constant table added to the
// mask, saturating at -255) lower to codes equal to the QDQ reference's too.
TEST(QuantizedParityVariants, SlidingLayersPastTheirWindow) {
  for (Architecture arch : {Architecture::kGemma2, Architecture::kGemma3}) {
    SCOPED_TRACE(architecture_name(arch));
    auto model = std::const_pointer_cast<Model>(block_friendly_model(13, true, false, arch));
    model->config.sliding_window = 6;
    const auto q = quantize(model, "16a8w", graph::ModelMode::kHybrid, 32, 4);
    ASSERT_GE(q.graphs.at("kv_forward")->find_value("atten_mask.window"), 0);
    expect_hybrid_codes_match(q);
    // Calibrated within the window (no window mask in the calibration graph), deployed past it:
    // the window mask takes the mask input's encoding (as `genai eval` at its default context).
    model->config.sliding_window = 20;
    const auto within = quantize(model, "16a8w", graph::ModelMode::kHybrid, 32, 4, /*calibration=*/16);
    ASSERT_GE(within.graphs.at("kv_forward")->find_value("atten_mask.window"), 0);
    EXPECT_EQ(within.encodings.at("kv_forward")->activations.at("atten_mask.window_part"), quant::mask_encoding());
    expect_hybrid_codes_match(within);
  }
}

// Both methods of one model produce the same named-data key for the same weight bytes, so a
// program stores one copy.
TEST(Payload, MethodsShareWeightKeys) {
  backends::register_builtin_backends();
  const auto model = block_friendly_model();
  const auto q = quantize(model, "16a4w_block:32", graph::ModelMode::kHybrid);
  const compile::Backend* htp = compile::find_backend("htp");
  const auto t = target_for("SM8650", true);
  const auto kv = htp->lower("kv_forward", q.bundles.at(pipeline::GraphName::kKvForward), t);
  const auto pf = htp->lower("prefill_forward", q.bundles.at(pipeline::GraphName::kPrefillForward), t);
  std::map<std::string, pte::Blob> a;
  for (const auto& nd : kv.named_data) a.emplace(nd.key, nd.data);
  size_t shared = 0;
  for (const auto& nd : pf.named_data) {
    auto it = a.find(nd.key);
    if (it == a.end()) continue;
    EXPECT_EQ(it->second, nd.data) << nd.key;
    ++shared;
  }
  // Every weight is shared; only position-dependent tables could differ (none here: same CL).
  EXPECT_EQ(shared, pf.named_data.size());
  // A block-wise weight's scales and block sums are stored once, as block meta (not also as plain
  // arrays): "<weight>.block_meta.<hash>" without "<weight>.scales.<hash>" or ".block_sums.".
  size_t blockwise = 0;
  for (const auto& [key, blob] : a) {
    const size_t at = key.find(".block_meta.");
    if (at == std::string::npos) continue;
    ++blockwise;
    const std::string weight = key.substr(0, at);
    for (const auto& [other, b] : a)
      EXPECT_TRUE(other.rfind(weight + ".scales.", 0) != 0 && other.rfind(weight + ".block_sums.", 0) != 0) << other;
  }
  EXPECT_GT(blockwise, 0u);
  EXPECT_EQ(kv.named_data.size(), pf.named_data.size());
  // Deterministic: lowering twice gives identical bytes.
  const auto kv2 = htp->lower("kv_forward", q.bundles.at(pipeline::GraphName::kKvForward), t);
  EXPECT_EQ(kv.payload, kv2.payload);
  EXPECT_EQ(kv.planned_bytes, kv2.planned_bytes);
  EXPECT_GE(kv.planned_bytes, kv.lower_bound_bytes);
  EXPECT_GT(kv.lower_bound_bytes, 0u);
  // I/O dtypes follow quant_io_dtypes.
  const auto& io = *q.bundles.at(pipeline::GraphName::kKvForward).quant_io_dtypes();
  for (const auto& in : kv.inputs) EXPECT_EQ(in.dtype, io.inputs.at(in.name)) << in.name;
  for (const auto& out : kv.outputs) EXPECT_EQ(out.dtype, io.outputs.at(out.name)) << out.name;
  EXPECT_EQ(kv.delegate_id, "GenaiHtpBackend");
}

}  // namespace
}  // namespace genai::backends_testing

namespace genai::backends_testing {
namespace {

// The parity check is sensitive: the outputs vary, and one changed weight byte (the payload still
// valid) moves them away from the reference.
TEST(QuantizedParitySensitivity, OutputsVaryAndAWeightChangeIsSeen) {
  backends::register_builtin_backends();
  ModeGuard scalar(kernels::KernelMode::kScalar);
  const auto model = block_friendly_model();
  const auto q = quantize(model, "16a8w", graph::ModelMode::kKv);
  const compile::Backend* htp = compile::find_backend("htp");
  const std::string name = "kv_forward";
  auto l = lower_and_init(*htp, name, q.bundles.at(pipeline::GraphName::kKvForward), target_for("SM8650", true));
  const graph::Graph& g = *q.graphs.at(name);
  const quant::EncodingSet& set = *q.encodings.at(name);
  quant::QdqExecutor qdq(q.graphs, q.encodings);
  Call c = make_call(*l->exec, &set, 89, 5, 3);
  execute(*l, c);
  const auto ref = run_reference(qdq, name, c);
  const Codes logits = output_codes(g, set, l->exec->outputs()[0], c.outputs[0], ref.at("logits"));
  ASSERT_EQ(l->exec->outputs()[0].name, "logits");
  EXPECT_EQ(logits.program, logits.reference);
  std::set<int64_t> distinct(logits.program.begin(), logits.program.end());
  EXPECT_GT(distinct.size(), 40u);

  // Change one packed byte of the output head's weights and re-initialise.
  for (auto& [key, nd] : l->named)
    if (key.rfind("lm_head.weight.packed8", 0) == 0) {
      std::vector<uint8_t> bytes(nd.data.bytes().begin(), nd.data.bytes().end());
      bytes[0] ^= 0x11;
      nd.data = pte::Blob(std::move(bytes));
    }
  auto changed = runtime::find_backend_executor("GenaiHtpBackend")
                     ->init(l->method.payload, {}, lookup_of(l->named), method_labelled(name));
  Call c2 = c;
  std::vector<runtime::BufferRef> in, out;
  for (auto& b : c2.inputs) in.push_back({b.data(), b.size()});
  for (auto& b : c2.outputs) out.push_back({b.data(), b.size()});
  changed->execute(in, out, l->scratch);
  const Codes after = output_codes(g, set, l->exec->outputs()[0], c2.outputs[0], ref.at("logits"));
  EXPECT_NE(after.program, after.reference);
}

}  // namespace
}  // namespace genai::backends_testing
