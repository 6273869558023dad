// --decoder_model lookup: the upstream names, identification by shape, mismatch errors naming both
// sides, unsupported architectures, chat template and recipe defaults.
#include <gtest/gtest.h>

#include "core/error.h"
#include "options/option_table.h"
#include "orchestrator/model_lookup.h"
#include "quant/recipe.h"

namespace genai::orchestrator {
namespace {

ModelConfig shape_of(const DecoderModelSpec& s) {
  ModelConfig c;
  c.arch = s.arch;
  c.dim = s.dim;
  c.n_layers = s.n_layers;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.dim / s.n_heads;
  c.vocab_size = s.vocab_size;
  c.name = "some checkpoint";
  return c;
}

TEST(ModelLookup, CoversExactlyTheUpstreamNamesInOrder) {
  const auto names = options::supported_decoder_models();
  const auto table = decoder_model_table();
  ASSERT_EQ(table.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(table[i].name, names[i]);
  EXPECT_EQ(find_decoder_model("smollm2_135m")->version, "smollm2_135m");
  EXPECT_EQ(find_decoder_model("llama3_2-1b_instruct")->version, "llama3");
  EXPECT_EQ(find_decoder_model("nope"), nullptr);
}

TEST(ModelLookup, NativeEntriesMapToArchitectureChatTokenizerAndRecipe) {
  const auto* smol = find_decoder_model("smollm2_135m");
  EXPECT_EQ(smol->arch, Architecture::kLlama);
  EXPECT_EQ(smol->chat_format, ChatFormat::kChatML);
  EXPECT_EQ(smol->tokenizer_kinds.front(), "bpe");
  EXPECT_EQ(quant::default_recipe(smol->recipe_name, smol->n_layers, smol->dim).base, quant::parse_scheme("16a8w"));
  const auto* qwen = find_decoder_model("qwen2_5-0_5b");
  EXPECT_EQ(qwen->arch, Architecture::kQwen2);
  EXPECT_EQ(qwen->chat_format, ChatFormat::kChatML);
  const auto* llama = find_decoder_model("llama3_2-1b_instruct");
  EXPECT_EQ(llama->chat_format, ChatFormat::kLlama3);
  EXPECT_EQ(quant::default_recipe(llama->recipe_name, llama->n_layers, llama->dim).base, quant::parse_scheme("16a4w_block:32"));
  const auto* stories = find_decoder_model("stories110m");
  EXPECT_EQ(stories->chat_format, ChatFormat::kNone);
  EXPECT_EQ(stories->tokenizer_kinds.front(), "llama2c");
  EXPECT_EQ(quant::default_recipe(stories->recipe_name, stories->n_layers, stories->dim).kv, quant::QDType::kU8);
  // The families past llama/qwen2, with upstream's recipes (static_llm_quant_recipe.py).
  struct Family {
    const char* name;
    Architecture arch;
    ChatFormat chat;
    const char* base;
    const char* sensitive;  // a tensor upstream keeps at 16a8w, or ""
  };
  for (const Family& f : {Family{"qwen3-0_6b", Architecture::kQwen3, ChatFormat::kChatML, "16a4w_block:32",
                                 "layers.3.mlp.down_proj.out"},
                          Family{"qwen3-1_7b", Architecture::kQwen3, ChatFormat::kChatML, "16a4w_block:16", ""},
                          Family{"granite_3_3-2b_instruct", Architecture::kGranite, ChatFormat::kGranite,
                                 "16a4w_block:64", "layers.12.attn.v_proj.out"},
                          Family{"smollm3-3b", Architecture::kSmolLM3, ChatFormat::kChatML, "16a4w_block:32",
                                 "layers.0.attn.k_proj.out"},
                          Family{"phi_4_mini", Architecture::kPhi3, ChatFormat::kPhi, "16a4w_block:16", ""},
                          Family{"gemma-2b", Architecture::kGemma, ChatFormat::kGemma, "16a4w_block:64",
                                 "layers.17.attn.v_proj.out"},
                          Family{"gemma2-2b", Architecture::kGemma2, ChatFormat::kGemma, "16a4w_block:32",
                                 "layers.25.attn.v_proj.out"},
                          Family{"gemma3-1b", Architecture::kGemma3, ChatFormat::kGemma, "16a4w_block:64",
                                 "layers.3.attn.v_proj.out"},
                          Family{"glm-1_5b", Architecture::kGlm, ChatFormat::kGlmEdge, "16a4w_block:32", ""},
                          // 16a8w although 16 layers of 2048 (the llama3_2-1b shape, 16a4w_block:32)
                          Family{"codegen2_1b", Architecture::kCodeGen, ChatFormat::kNone, "16a8w", ""},
                          Family{"gemma4-e2b", Architecture::kGemma4, ChatFormat::kGemma4, "16a4w_block:64", ""},
                          // SmolVLM's decoder (SmolLM2-360M); its vision encoder has its own 16a8w
                          Family{"smolvlm_500m_instruct", Architecture::kLlama, ChatFormat::kSmolVlm, "16a8w", ""},
                          Family{"internvl3_1b", Architecture::kQwen2, ChatFormat::kChatML, "16a8w", ""},
                          // Granite 3.3's decoder and recipe; its audio encoder has its own 16a8w
                          Family{"granite_speech_3_3-2b", Architecture::kGranite, ChatFormat::kGranite, "16a4w_block:64",
                                 "layers.12.attn.v_proj.out"}}) {
    SCOPED_TRACE(f.name);
    const auto* s = find_decoder_model(f.name);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->arch, f.arch);
    EXPECT_EQ(s->chat_format, f.chat);
    const quant::Recipe r = quant::default_recipe(s->recipe_name, s->n_layers, s->dim);
    EXPECT_EQ(r.base, quant::parse_scheme(f.base));
    EXPECT_EQ(r.scheme_for("lm_head.out"), quant::parse_scheme("16a8w"));
    EXPECT_EQ(r.scheme_for("layers.3.mlp.gate_proj.out"), quant::parse_scheme(f.base));
    if (*f.sensitive) {
      EXPECT_EQ(r.scheme_for(f.sensitive), quant::parse_scheme("16a8w"));
    }
  }
  // Every upstream name is built natively.
  EXPECT_EQ(decoder_model_table().size(), 21u);
  // Gemma 4 keeps a 16-bit KV cache under any integer recipe (upstream's recipe for it has no 8-bit KV).
  ModelConfig g4;
  g4.wide_kv_cache = true;
  EXPECT_EQ(quant::fit_recipe_to_model(quant::recipe_from_spelling("16a8w"), g4).kv, quant::QDType::kU16);
  EXPECT_EQ(quant::fit_recipe_to_model(quant::recipe_from_spelling("16a8w"), ModelConfig{}).kv, quant::QDType::kU8);
  EXPECT_EQ(quant::default_recipe("phi_4_mini", 32, 3072).scheme_for("layers.5.attn.v_proj.out"), quant::parse_scheme("8a4w"));
}

TEST(ModelLookup, CheckpointIdentifiesItselfWithoutAName) {
  for (const auto& s : decoder_model_table()) {
    SCOPED_TRACE(s.name);
    const ModelConfig c = shape_of(s);
    EXPECT_EQ(identify_decoder_model(c), &s);
    const ResolvedModel r = resolve_model("", c, "ckpt.gguf", ChatFormat::kNone, "bpe");
    EXPECT_EQ(r.spec, &s);
    EXPECT_FALSE(r.named);
    EXPECT_EQ(r.recipe_name, s.recipe_name);
    EXPECT_EQ(r.chat_format, ChatFormat::kNone);  // only a named model supplies a template
    EXPECT_NO_THROW(resolve_model(s.name, c, "ckpt.gguf", ChatFormat::kNone, ""));
  }
  ModelConfig other = shape_of(*find_decoder_model("smollm2_135m"));
  other.n_layers = 3;
  other.name = "my-model";
  const ResolvedModel r = resolve_model("", other, "x.gguf", ChatFormat::kLlama3, "bpe");
  EXPECT_EQ(r.spec, nullptr);
  EXPECT_EQ(r.recipe_name, "my-model");
  EXPECT_EQ(r.chat_format, ChatFormat::kLlama3);
}

TEST(ModelLookup, NamedModelSuppliesChatTemplateOnlyWhenTheCheckpointHasNone) {
  const ModelConfig c = shape_of(*find_decoder_model("smollm2_135m"));
  EXPECT_EQ(resolve_model("smollm2_135m", c, "m.gguf", ChatFormat::kNone, "bpe").chat_format, ChatFormat::kChatML);
  EXPECT_EQ(resolve_model("smollm2_135m", c, "m.gguf", ChatFormat::kLlama2, "bpe").chat_format, ChatFormat::kLlama2);
}

TEST(ModelLookup, MismatchNamesBothSidesAndEveryDifference) {
  ModelConfig c = shape_of(*find_decoder_model("smollm2_135m"));
  c.dim = 64;
  c.n_layers = 2;
  try {
    resolve_model("qwen2_5-0_5b", c, "/models/tiny.gguf", ChatFormat::kNone, "bpe");
    FAIL();
  } catch (const InputError& e) {
    const std::string w = e.what();
    for (const char* want : {"--decoder_model qwen2_5-0_5b", "--checkpoint /models/tiny.gguf", "architecture qwen2 vs llama",
                             "dim 896 vs 64", "layers 24 vs 2", "vocab 151936 vs 49152"})
      EXPECT_NE(w.find(want), std::string::npos) << want << " in: " << w;
  }
}

TEST(ModelLookup, UnknownNamesAreBadInputListingTheKnownOnes) {
  const ModelConfig c = shape_of(*find_decoder_model("smollm2_135m"));
  try {
    resolve_model("gpt5", c, "g.gguf", ChatFormat::kNone, "");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("stories260k"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace genai::orchestrator
