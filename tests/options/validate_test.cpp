#include "options/validate.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "options/option_table.h"
#include "options/quant_recipe_option.h"
#include "options/spec_from_options.h"

namespace genai::options {
namespace {

std::string violation(const OptionValues& v) {
  try {
    validate(v);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Validate, DefaultsAreValid) { EXPECT_EQ(violation(OptionValues()), ""); }

TEST(Validate, CompileOnlyExcludesPreGenPte) {
  OptionValues v;
  v.set("compile_only", true);
  EXPECT_EQ(violation(v), "");
  v.set("pre_gen_pte", std::string("dir"));
  const auto m = violation(v);
  EXPECT_NE(m.find("--compile_only"), std::string::npos);
  EXPECT_NE(m.find("--pre_gen_pte"), std::string::npos);
}

// SoCs QNN's compiler builds for another HTP arch than the table's (target/qnn_soc_support.h):
// refused for --lowering qnn before any work, naming the reason and the nearest SoC it builds.
TEST(Validate, QnnLoweringRefusesSocsQnnBuildsForAnotherArch) {
  OptionValues v;
  v.set("backend", std::string("htp"));
  v.set("soc_model", std::string("SM8475"));
  // A phone build defaults to --lowering qnn: refused, saying the lowering was the default.
  EXPECT_NE(violation(v).find("(the default for a quantized phone build)"), std::string::npos) << violation(v);
  v.set("lowering", std::string("genai"));
  EXPECT_EQ(violation(v), "") << "--lowering genai builds every SoC";
  v.set("lowering", std::string("qnn"));
  const auto m = violation(v);
  for (const char* word : {"--soc_model SM8475", "--lowering qnn", "V68", "V69", "nearest SoC it builds is SM8450"})
    EXPECT_NE(m.find(word), std::string::npos) << word << ": " << m;
  v.set("soc_model", std::string("SSG2115P"));
  EXPECT_NE(violation(v).find("nearest SoC it builds is SM8550"), std::string::npos) << violation(v);
  for (const char* soc : {"QCM6490", "SM8350", "SAR2230P", "SM8650"}) {
    v.set("soc_model", std::string(soc));
    EXPECT_EQ(violation(v), "") << soc;
  }
  // An x86 build's default is our lowering, which builds every SoC.
  OptionValues x86;
  x86.set("backend", std::string("htp"));
  x86.set("soc_model", std::string("SM8475"));
  x86.set("enable_x86_64", true);
  EXPECT_EQ(violation(x86), "");
}

TEST(Validate, MaxContextLenDefaultsToMaxSeqLen) {
  OptionValues v;
  v.set("max_seq_len", int64_t{300});
  EXPECT_EQ(effective_max_context_len(v), 300);
  v.set("max_context_len", int64_t{1024});
  EXPECT_EQ(effective_max_context_len(v), 1024);
}

// A quantized htp compile for a phone gets what a phone's ExecuTorch runtime loads; x86 builds,
// float programs and other backends get our payload; a given --lowering always wins.
// Upstream shards its larger models per model; --decoder_model brings that count, --num_sharding
// overrides it, and the compile spec follows the effective count.
TEST(Validate, NumShardingDefaultsToTheDecoderModelsUpstreamCount) {
  OptionValues v;
  v.set("soc_model", std::string("SM8650"));
  EXPECT_EQ(effective_num_sharding(v), 1);
  v.set("decoder_model", std::string("phi_4_mini"));
  EXPECT_EQ(effective_num_sharding(v), 8);
  EXPECT_EQ(spec_options(v).num_sharding, 8);
  v.set("decoder_model", std::string("llama3_2-3b_instruct"));
  EXPECT_EQ(effective_num_sharding(v), 4);
  v.set("decoder_model", std::string("llama3_2-1b_instruct"));
  EXPECT_EQ(effective_num_sharding(v), 1);
  v.set("decoder_model", std::string("smollm3-3b"));
  v.set("num_sharding", int64_t{2});
  EXPECT_EQ(effective_num_sharding(v), 2);
  EXPECT_EQ(spec_options(v).num_sharding, 2);
  // Every sharded name is a --decoder_model choice (a misspelt entry would silently give 1).
  int64_t sharded = 0;
  for (const std::string& name : supported_decoder_models()) sharded += upstream_num_sharding(name) > 1;
  EXPECT_EQ(sharded, 7);
}

TEST(Validate, LoweringDefaultsToQnnForAPhoneProgram) {
  OptionValues v;
  v.set("backend", std::string("htp"));
  EXPECT_EQ(effective_lowering(v, true), "qnn");
  EXPECT_EQ(effective_lowering(v, false), "genai");
  v.set("enable_x86_64", true);
  EXPECT_EQ(effective_lowering(v, true), "genai");
  v.set("lowering", std::string("qnn"));
  EXPECT_EQ(effective_lowering(v, true), "qnn");
  OptionValues gpu;
  gpu.set("backend", std::string("gpu"));
  EXPECT_EQ(effective_lowering(gpu, true), "genai");
  gpu.set("lowering", std::string("genai"));
  EXPECT_EQ(effective_lowering(gpu, true), "genai");
}

TEST(Validate, ContextAtLeastSeqLenWithoutAttentionSink) {
  OptionValues v;
  v.set("max_context_len", int64_t{256});
  const auto m = violation(v);
  EXPECT_NE(m.find("--max_context_len (256)"), std::string::npos) << m;
  EXPECT_NE(m.find("--max_seq_len (512)"), std::string::npos) << m;
  v.set("use_attention_sink", std::string("4,32"));
  EXPECT_EQ(violation(v), "");
}

// Upstream's evictor rules (SINK + EVICTION within the context; EVICTION at least every graph's
// AR length) and ours (room for a call after the sink), each naming the option and the bound.
TEST(Validate, AttentionSinkRules) {
  auto with = [](const std::string& mode, const std::string& sink, int64_t context) {
    OptionValues v;
    v.set("model_mode", mode);
    v.set("max_context_len", context);
    v.set("max_seq_len", int64_t{1024});
    v.set("prefill_ar_len", int64_t{32});
    v.set("use_attention_sink", sink);
    return violation(v);
  };
  EXPECT_EQ(with("hybrid", "4,32", 256), "");
  EXPECT_EQ(with("kv", "4,1", 256), "");
  std::string m = with("hybrid", "4,16", 256);
  EXPECT_NE(m.find("--use_attention_sink 4,16"), std::string::npos) << m;
  EXPECT_NE(m.find("--prefill_ar_len"), std::string::npos) << m;
  m = with("hybrid", "200,64", 256);
  EXPECT_NE(m.find("SINK + EVICTION"), std::string::npos) << m;
  EXPECT_NE(m.find("--max_context_len (256)"), std::string::npos) << m;
  m = with("hybrid", "200,32", 256);  // 200 + 2 x 32 > 256: no room for a prefill call
  EXPECT_NE(m.find("SINK + 2 x"), std::string::npos) << m;
  // Lookahead: EVICTION covers the tree (next_pow2((8 + 8) * 4) = 64 rows by default).
  m = with("lookahead", "4,32", 256);
  EXPECT_NE(m.find("--model_mode lookahead"), std::string::npos) << m;
  EXPECT_NE(m.find("(64)"), std::string::npos) << m;
  EXPECT_EQ(with("lookahead", "4,64", 256), "");
}

// The runner clamps seq_len to the context (upstream's C++ runner does), so `genai run` with only
// --max_context_len is valid; giving both lengths explicitly still applies the export-time rule.
TEST(Validate, RunScopeClampsSeqLenToTheContextUnlessBothAreGiven) {
  OptionValues run(kRunScope);
  run.set("max_context_len", int64_t{256});
  EXPECT_EQ(violation(run), "");
  run.set("max_seq_len", int64_t{512});
  EXPECT_NE(violation(run).find("--max_seq_len (512)"), std::string::npos);
}

TEST(Validate, HybridAndLookaheadNeedContextAtLeastPrefill) {
  for (const char* mode : {"hybrid", "lookahead"}) {
    OptionValues v;
    v.set("model_mode", std::string(mode));
    v.set("max_seq_len", int64_t{16});
    v.set("prefill_ar_len", int64_t{32});
    const auto m = violation(v);
    EXPECT_NE(m.find("--prefill_ar_len (32)"), std::string::npos) << mode << ": " << m;
  }
  OptionValues kv;
  kv.set("model_mode", std::string("kv"));
  kv.set("max_seq_len", int64_t{16});
  kv.set("prefill_ar_len", int64_t{32});
  EXPECT_EQ(violation(kv), "");
}

TEST(Validate, LookaheadPowerOfTwoRule) {
  EXPECT_EQ(lookahead_ar_len(8, 8, 5), 64);  // (8+8)*4 = 64
  EXPECT_EQ(lookahead_ar_len(3, 2, 3), 16);  // 10 -> 16
  EXPECT_EQ(lookahead_ar_len(1, 1, 2), 2);
  OptionValues v;
  v.set("model_mode", std::string("lookahead"));
  v.set("max_seq_len", int64_t{64});
  const auto m = violation(v);  // CL 64 is not > 64
  EXPECT_NE(m.find("next_pow2"), std::string::npos) << m;
  v.set("max_seq_len", int64_t{65});
  EXPECT_EQ(violation(v), "");
  v.set("ngram", int64_t{1});
  EXPECT_NE(violation(v).find("--ngram"), std::string::npos);
}

TEST(Validate, HybridExcludesOnlinePrepare) {
  OptionValues v;
  v.set("online_prepare", true);
  const auto m = violation(v);
  EXPECT_NE(m.find("--model_mode hybrid"), std::string::npos) << m;
  EXPECT_NE(m.find("--online_prepare"), std::string::npos) << m;
  v.set("model_mode", std::string("kv"));
  EXPECT_EQ(violation(v), "");
}

TEST(Validate, QatNeedsTrainingData) {
  OptionValues v;
  v.set("qat", true);
  EXPECT_NE(violation(v).find("--train_tasks"), std::string::npos);
  v.set("train_hf_dataset", std::string("wikitext"));
  EXPECT_EQ(violation(v), "");
}

TEST(Validate, Gemma4NeedsEmbeddingQuantize) {
  OptionValues v;
  v.set("decoder_model", std::string("gemma4-e2b"));
  EXPECT_NE(violation(v).find("--embedding_quantize"), std::string::npos);
  v.set("embedding_quantize", std::string("4,32"));
  EXPECT_EQ(violation(v), "");
}

TEST(Validate, RangesOfNumbers) {
  for (auto [name, value] : std::vector<std::pair<const char*, int64_t>>{
           {"max_seq_len", 0}, {"prefill_ar_len", -1}, {"batch_size", 0}, {"max_new_tokens", 0}, {"threads", -2}}) {
    OptionValues v;
    v.set(name, value);
    EXPECT_NE(violation(v).find(std::string("--") + name), std::string::npos) << name;
  }
  OptionValues t;
  t.set("top_p", 0.0);
  EXPECT_NE(violation(t).find("--top_p"), std::string::npos);
  t.set("top_p", 1.0);
  t.set("temperature", -0.1);
  EXPECT_NE(violation(t).find("--temperature"), std::string::npos);
}

TEST(Validate, CalibrationDataIsNotRequired) {
  // Deliberate difference: no --calib_* needed; calibration falls back to sampled text.
  OptionValues v;
  v.set("soc_model", std::string("SM8650"));
  v.set("checkpoint", std::string("m.gguf"));
  EXPECT_EQ(violation(v), "");
}

TEST(QuantRecipe, Spellings) {
  EXPECT_EQ(parse_quant_recipe("16a8w"), (QuantRecipeChoice{QuantScheme::k16a8w, std::nullopt}));
  EXPECT_EQ(parse_quant_recipe("16a4w_block:32"), (QuantRecipeChoice{QuantScheme::k16a4wBlock, 32}));
  EXPECT_EQ(parse_quant_recipe("fp16").scheme, QuantScheme::kFp16);
  EXPECT_THROW(parse_quant_recipe("16a4w_block:48"), InputError);
  EXPECT_THROW(parse_quant_recipe("16a8w:32"), InputError);
  EXPECT_THROW(parse_quant_recipe("16a4w_block:"), InputError);
  try {
    parse_quant_recipe("4a4w");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("16a16w, 16a8w, 16a4w, 16a4w_block, 8a8w, 8a4w, fp16"), std::string::npos);
  }
  for (const auto& name : quant_scheme_names()) EXPECT_EQ(quant_scheme_name(parse_quant_recipe(name).scheme), name);
}

TEST(QuantRecipe, BlockSizeOption) {
  OptionValues v;
  EXPECT_EQ(resolve_quant_recipe(v), std::nullopt);
  v.set("quant_block_size", int64_t{64});
  EXPECT_THROW(resolve_quant_recipe(v), InputError);  // no recipe
  v.set("quant_recipe", std::string("16a4w_block"));
  EXPECT_EQ(resolve_quant_recipe(v), (QuantRecipeChoice{QuantScheme::k16a4wBlock, 64}));
  v.set("quant_recipe", std::string("16a4w_block:64"));
  EXPECT_EQ(resolve_quant_recipe(v), (QuantRecipeChoice{QuantScheme::k16a4wBlock, 64}));
  v.set("quant_recipe", std::string("16a4w_block:32"));
  EXPECT_THROW(resolve_quant_recipe(v), InputError);  // disagreement
  v.set("quant_recipe", std::string("8a8w"));
  EXPECT_THROW(resolve_quant_recipe(v), InputError);
  EXPECT_THROW(v.set("quant_block_size", int64_t{48}), InputError);
  OptionValues f;
  f.set("use_fp16", true);
  f.set("quant_recipe", std::string("16a8w"));
  EXPECT_NE(violation(f).find("--use_fp16"), std::string::npos);
}

}  // namespace
}  // namespace genai::options
