// `genai synth`: deterministic bytes, real shapes, sane random weights.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "formats/gguf_file.h"
#include "model/gguf_metadata.h"
#include "model/model.h"
#include "model/synth.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "tokenizer/factory.h"
#include "tokenizer/synthetic_vocab.h"

namespace genai {
namespace {

TEST(Synth, CliOutputIsByteIdenticalForTheSameArguments) {
  testing::TempDir dir;
  for (const std::string format : {"gguf", "llama2c", "hf"}) {
    SCOPED_TRACE(format);
    const std::string a = dir.file(format + "_a"), b = dir.file(format + "_b"), c = dir.file(format + "_c");
    auto run = [&](const std::string& out, const char* seed) {
      const std::string target = format == "llama2c" ? out + "/model.bin" : out;
      auto r = testing::run_genai({"synth", "--shape", "tiny", "--format", format, "--seed", seed, "--out", target, "--json"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      return r;
    };
    auto r = run(a, "3");
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["parameters"], 151872);
    EXPECT_EQ(j["format"], format);
    run(b, "3");
    const std::string file = format == "gguf" ? "" : format == "llama2c" ? "/model.bin" : "/model.safetensors";
    EXPECT_EQ(testing::read_bytes(a + file), testing::read_bytes(b + file));
    if (format == "gguf") {  // a different seed changes the weights
      run(c, "4");
      EXPECT_NE(testing::read_bytes(a + file), testing::read_bytes(c + file));
    }
    if (format == "hf") {
      EXPECT_EQ(testing::read_bytes(a + "/tokenizer.json"), testing::read_bytes(b + "/tokenizer.json"));
      EXPECT_EQ(testing::read_bytes(a + "/config.json"), testing::read_bytes(b + "/config.json"));
    }
  }
}

// llama.cpp refuses tokenizer.ggml.pre names it does not know ("unknown pre-tokenizer type"):
// the files carry its spelling, and our reader maps that spelling back to the same splitting.
TEST(Synth, GgufPreTokenizerIsOneLlamaCppKnowsAndReadsBackTheSame) {
  testing::TempDir dir;
  const std::string out = dir.file("tiny.gguf");
  auto r = testing::run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const GgufFile f = GgufFile::open(out);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "gpt-2");
  // Our names for the splittings llama.cpp also has become its names.
  EXPECT_EQ(gguf_pre_tokenizer_name("gpt2"), "gpt-2");
  EXPECT_EQ(gguf_pre_tokenizer_name(""), "gpt-2");
  for (const char* same : {"default", "smollm", "llama-bpe", "llama3", "qwen2", "starcoder", "refact"})
    EXPECT_EQ(gguf_pre_tokenizer_name(same), same);

  const Model model = load_model(out);
  ASSERT_TRUE(model.tokenizer);
  const auto reference = make_bpe_tokenizer(make_synthetic_bpe_vocab(model.config.vocab_size, 0));
  const std::string text = "Once upon a time, 1234 cats' tails\n  wagged: it's fine!";
  EXPECT_EQ(model.tokenizer->encode(text, false), reference->encode(text, false));
  EXPECT_EQ(model.tokenizer->decode(model.tokenizer->encode(text, false)), text);
}

TEST(Synth, ShapesMatchTheRealModels) {
  auto s = synth_config("stories15m");
  EXPECT_EQ(s.dim, 288);
  EXPECT_EQ(s.n_layers, 6);
  EXPECT_EQ(s.n_heads, 6);
  EXPECT_EQ(s.n_kv_heads, 6);
  EXPECT_EQ(s.ffn_dim, 768);
  EXPECT_EQ(s.vocab_size, 32000);
  EXPECT_EQ(s.max_positions, 256);
  EXPECT_FALSE(s.tied_embeddings);
  auto m = synth_config("smollm2-135m");
  EXPECT_EQ(m.dim, 576);
  EXPECT_EQ(m.n_layers, 30);
  EXPECT_EQ(m.n_kv_heads, 3);
  EXPECT_EQ(m.vocab_size, 49152);
  EXPECT_TRUE(m.tied_embeddings);
  auto l = synth_config("llama3.2-1b");
  EXPECT_EQ(l.dim, 2048);
  EXPECT_EQ(l.n_heads, 32);
  EXPECT_EQ(l.n_kv_heads, 8);
  EXPECT_EQ(l.ffn_dim, 8192);
  EXPECT_EQ(l.vocab_size, 128256);
  EXPECT_TRUE(l.tied_embeddings);
  EXPECT_FLOAT_EQ(l.rope_theta, 500000.0f);
  EXPECT_FLOAT_EQ(l.rope_scaling.factor, 32.0f);
  EXPECT_EQ(l.rope_scaling.original_max_positions, 8192);
  auto l3 = synth_config("llama3.2-3b");
  EXPECT_EQ(l3.dim, 3072);
  EXPECT_EQ(l3.n_layers, 28);
  EXPECT_EQ(l3.n_heads, 24);
  EXPECT_EQ(l3.n_kv_heads, 8);
  EXPECT_EQ(l3.head_dim, 128);
  EXPECT_EQ(l3.ffn_dim, 8192);
  EXPECT_FLOAT_EQ(l3.rope_scaling.factor, 32.0f);
  // phi-4-mini is phi3 unless told otherwise: 3/4 of each head rotates, longrope.
  auto phi = synth_config("phi-4-mini");
  EXPECT_EQ(phi.arch, Architecture::kPhi3);
  EXPECT_EQ(phi.name, "synth-phi-4-mini");
  EXPECT_EQ(phi.dim, 3072);
  EXPECT_EQ(phi.n_layers, 32);
  EXPECT_EQ(phi.n_kv_heads, 8);
  EXPECT_EQ(phi.vocab_size, 200064);
  EXPECT_EQ(phi.rotary_dim, 96);
  EXPECT_FALSE(phi.long_rope.long_factor.empty());
  EXPECT_TRUE(phi.tied_embeddings);
  EXPECT_EQ(synth_config("phi-4-mini", "llama").arch, Architecture::kLlama);
  EXPECT_EQ(synth_config("phi-4-mini", "llama").name, "synth-phi-4-mini-llama");
  auto q = synth_config("tiny", "qwen2");
  EXPECT_TRUE(q.qkv_bias);
  int64_t params = 0;
  for (const auto& spec : expected_weights(m)) params += shape_numel(spec.shape);
  EXPECT_EQ(params, 134515008);  // SmolLM2-135M
}

TEST(Synth, WeightsLookLikeAnInitialisedModel) {
  Tensor w = synth_tensor({"model.layers.0.mlp.up_proj.weight", {160, 64}}, 1);
  Tensor n = synth_tensor({"model.layers.0.input_layernorm.weight", {4096}}, 1);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < w.numel(); ++i) sum += w.data<float>()[i], sq += w.data<float>()[i] * w.data<float>()[i];
  const double mean = sum / w.numel(), sd = std::sqrt(sq / w.numel() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.002);
  EXPECT_NEAR(sd, 0.02, 0.002);
  double nsum = 0;
  for (int64_t i = 0; i < n.numel(); ++i) nsum += n.data<float>()[i];
  EXPECT_NEAR(nsum / n.numel(), 1.0, 0.002);
  // Independent streams per tensor name and per seed.
  EXPECT_NE(synth_tensor({"a", {4}}, 1).data<float>()[0], synth_tensor({"b", {4}}, 1).data<float>()[0]);
  EXPECT_NE(synth_tensor({"a", {4}}, 1).data<float>()[0], synth_tensor({"a", {4}}, 2).data<float>()[0]);
  EXPECT_EQ(synth_tensor({"a", {4}}, 1).data<float>()[3], synth_tensor({"a", {4}}, 1).data<float>()[3]);
}

}  // namespace
}  // namespace genai
