// load_model over every checkpoint format: configs, canonical weights (q/k un-permuted), tokenizers,
// files written by llama.cpp's Python `gguf` package, and cross-format logits.
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "core/error.h"
#include "formats/gguf_file.h"
#include "formats/safetensors_file.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "model/reference_decoder.h"
#include "model/rotary_layout.h"
#include "model/synth.h"
#include "support/cli_runner.h"
#include "tokenizer/synthetic_vocab.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

void expect_same_config(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.n_layers, b.n_layers);
  EXPECT_EQ(a.n_heads, b.n_heads);
  EXPECT_EQ(a.n_kv_heads, b.n_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.ffn_dim, b.ffn_dim);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.max_positions, b.max_positions);
  EXPECT_EQ(a.tied_embeddings, b.tied_embeddings);
  EXPECT_EQ(a.qkv_bias, b.qkv_bias);
  EXPECT_FLOAT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_FLOAT_EQ(a.norm_eps, b.norm_eps);
  EXPECT_EQ(a.rope_scaling.enabled(), b.rope_scaling.enabled());
  EXPECT_EQ(a.bos_id, b.bos_id);
  EXPECT_EQ(a.eos_id, b.eos_id);
}

// Max |a - b| over the canonical weights of `config`.
float max_weight_diff(const ModelConfig& config, const Weights& w, uint64_t seed) {
  float worst = 0;
  for (const auto& spec : expected_weights(config)) {
    Tensor want = synth_tensor(spec, seed);
    const Tensor got = w.f32(spec.name);
    EXPECT_EQ(got.shape(), spec.shape) << spec.name;
    EXPECT_EQ(got.dtype(), DType::kF32) << spec.name;
    for (int64_t i = 0; i < want.numel(); ++i)
      worst = std::max(worst, std::fabs(got.data<float>()[i] - want.data<float>()[i]));
  }
  return worst;
}

SynthResult synth(const testing::TempDir& dir, const std::string& format, const std::string& arch = "llama",
                  const std::string& type = "f32") {
  SynthRequest r;
  r.shape = "tiny";
  r.arch = arch;
  r.format = format;
  r.weight_type = type;
  r.seed = 5;
  r.out = dir.file(arch + "_" + type + "_" + format + (format == "llama2c" ? "/model.bin" : ""));
  return write_synth_model(r);
}

// The tiny synthetic models every test here reads, written once (file writes are fsynced, so
// they dominate the suite's time): llama in all three formats, qwen2 as gguf and hf.
class Synthetic : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    for (const std::string arch : {"llama", "qwen2"})
      for (const std::string format : {"gguf", "hf", "llama2c"})
        if (arch == "llama" || format != "llama2c") models_[arch + " " + format] = synth(*dir_, format, arch);
  }
  static void TearDownTestSuite() { delete dir_; }
  static const SynthResult& model(const std::string& arch, const std::string& format) {
    return models_.at(arch + " " + format);
  }
  static testing::TempDir* dir_;
  static std::map<std::string, SynthResult> models_;
};
testing::TempDir* Synthetic::dir_ = nullptr;
std::map<std::string, SynthResult> Synthetic::models_;

TEST_F(Synthetic, RoundTripsExactlyThroughEveryFormat) {
  for (const std::string arch : {"llama", "qwen2"}) {
    for (const std::string format : {"gguf", "hf", "llama2c"}) {
      if (arch == "qwen2" && format == "llama2c") continue;
      SCOPED_TRACE(arch + " " + format);
      const SynthResult& s = model(arch, format);
      Model m = load_model(s.checkpoint);
      EXPECT_EQ(checkpoint_format_name(m.format), format);
      expect_same_config(m.config, s.config);
      // F32 storage and exact (inverse) q/k permutations: bit-identical weights.
      EXPECT_EQ(max_weight_diff(m.config, m.weights, 5), 0.0f);
      EXPECT_EQ(m.weights.size(), expected_weights(m.config).size());
      ASSERT_NE(m.tokenizer, nullptr);
      EXPECT_EQ(m.tokenizer->vocab_size(), 512);
      EXPECT_EQ(m.tokenizer_path, s.tokenizer);
      auto ids = m.tokenizer->encode("hello world", false);
      EXPECT_EQ(m.tokenizer->decode(ids), "hello world");
      if (format != "llama2c") {
        EXPECT_EQ(m.chat_format, ChatFormat::kChatML);
      }
    }
  }
}

TEST_F(Synthetic, F32WeightsAreViewsIntoTheFile) {
  Model m = load_model(model("llama", "gguf").checkpoint);
  EXPECT_TRUE(m.weights.get("model.embed_tokens.weight").is_view());
  EXPECT_TRUE(m.weights.get("model.layers.0.mlp.up_proj.weight").is_view());
  EXPECT_FALSE(m.weights.get("model.layers.0.self_attn.q_proj.weight").is_view());  // un-permuted copy
  Model l = load_model(model("llama", "llama2c").checkpoint);
  EXPECT_TRUE(l.weights.get("model.layers.1.mlp.down_proj.weight").is_view());
}

// Tolerance of a stored weight type on N(0, 0.02²) weights: half an ulp of |w| < 0.1 for the
// float types, half a block step for the quantized ones.
float weight_type_tolerance(const std::string& type) {
  return type == "f16" ? 1e-4f : type == "bf16" ? 4e-4f : type == "q8_0" ? 2e-3f : 2.5e-2f;
}

TEST(LoadModel, QuantizedGgufIsCloseToTheFloatWeights) {
  for (const std::string type : {"f16", "bf16", "q8_0", "q4_0"}) {
    SCOPED_TRACE(type);
    testing::TempDir dir;
    const auto path = synth(dir, "gguf", "llama", type).checkpoint;
    GgufFile f = GgufFile::open(path);
    std::string upper = type;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    EXPECT_EQ(ggml_type_name(f.find_tensor("blk.0.attn_q.weight")->type), upper);
    EXPECT_EQ(f.find_tensor("blk.0.attn_norm.weight")->type, GgmlType::kF32);
    Model m = load_model(path);
    // 16-bit weights stay as stored: views of the file (those whose rows are not permuted).
    const Tensor& v = m.weights.get("model.layers.0.self_attn.v_proj.weight");
    if (type == "f16" || type == "bf16") {
      EXPECT_EQ(v.dtype(), type == "f16" ? DType::kF16 : DType::kBF16);
      EXPECT_TRUE(v.is_view());
      EXPECT_EQ(m.weights.get("model.layers.0.self_attn.q_proj.weight").dtype(), v.dtype());  // permuted, still 16-bit
    } else {
      EXPECT_EQ(v.dtype(), DType::kF32);
    }
    const float tol = weight_type_tolerance(type);
    const float diff = max_weight_diff(m.config, m.weights, 5);
    EXPECT_GT(diff, 0.0f);
    EXPECT_LT(diff, tol);
  }
}

TEST(LoadModel, HalfPrecisionHfFolderIsCloseToTheFloatWeights) {
  for (const std::string type : {"f16", "bf16"}) {
    SCOPED_TRACE(type);
    testing::TempDir dir;
    const SynthResult s = synth(dir, "hf", "llama", type);
    const SafetensorsFile file = SafetensorsFile::open(s.checkpoint / "model.safetensors");
    const SafetensorsEntry* q = file.find("model.layers.0.self_attn.q_proj.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->dtype, type == "f16" ? DType::kF16 : DType::kBF16);
    Model m = load_model(s.checkpoint);
    EXPECT_EQ(m.weights.get("model.layers.0.mlp.up_proj.weight").dtype(), type == "f16" ? DType::kF16 : DType::kBF16);
    EXPECT_TRUE(m.weights.get("model.layers.0.mlp.up_proj.weight").is_view());
    const float diff = max_weight_diff(m.config, m.weights, 5);
    EXPECT_GT(diff, 0.0f);
    // Norm weights (around 1) are stored in the folder's type too: half an ulp below 2.
    EXPECT_LE(diff, type == "f16" ? 0x1p-11f : 0x1p-8f);
  }
}

TEST_F(Synthetic, LlamaGgufStoresInterleavedRowsQwen2DoesNot) {
  WeightSpec q{"model.layers.1.self_attn.k_proj.weight", {2 * 16, 64}};
  Tensor hf = synth_tensor(q, 5);
  {
    GgufFile f = GgufFile::open(model("llama", "gguf").checkpoint);
    Tensor stored = f.tensor_f32(*f.find_tensor("blk.1.attn_k.weight"));
    Tensor expect = half_to_interleaved_rows(hf, 2);
    for (int64_t i = 0; i < hf.numel(); ++i) ASSERT_EQ(stored.data<float>()[i], expect.data<float>()[i]);
  }
  GgufFile f = GgufFile::open(model("qwen2", "gguf").checkpoint);
  Tensor stored = f.tensor_f32(*f.find_tensor("blk.1.attn_k.weight"));
  for (int64_t i = 0; i < hf.numel(); ++i) ASSERT_EQ(stored.data<float>()[i], hf.data<float>()[i]);
  EXPECT_NE(f.find_tensor("blk.0.attn_q.bias"), nullptr);
}

TEST_F(Synthetic, SameLogitsFromEveryFormat) {
  std::vector<std::vector<float>> logits;
  for (const std::string format : {"hf", "gguf", "llama2c"}) {
    Model m = load_model(model("llama", format).checkpoint);
    ReferenceDecoder dec(m);
    const std::vector<int32_t> ids = {1, 17, 300, 42, 5};
    logits.push_back(dec.forward(ids));
  }
  ASSERT_EQ(logits[0].size(), 5u * 512u);
  for (size_t f = 1; f < logits.size(); ++f)
    for (size_t i = 0; i < logits[0].size(); ++i) ASSERT_NEAR(logits[f][i], logits[0][i], 1e-5f) << f << " " << i;
}

class PythonGgufModels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    for (const char* arch : {"llama", "qwen2"}) {
      auto r = testing::run_process({"python3", testing::python_script("gguf_write_model.py"), dir_->path(), arch});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static testing::TempDir* dir_;
};
testing::TempDir* PythonGgufModels::dir_ = nullptr;

TEST_F(PythonGgufModels, LoadWithTheRightConfigAndHfLayoutWeights) {
  for (const std::string arch : {"llama", "qwen2"}) {
    SCOPED_TRACE(arch);
    LoadOptions opts;
    opts.load_tokenizer = false;
    Model m = load_model(dir_->file(arch + ".gguf"), opts);
    const ModelConfig& c = m.config;
    EXPECT_EQ(architecture_name(c.arch), arch);
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.n_layers, 2);
    EXPECT_EQ(c.n_heads, 4);
    EXPECT_EQ(c.n_kv_heads, 2);
    EXPECT_EQ(c.head_dim, 16);
    EXPECT_EQ(c.ffn_dim, 128);
    EXPECT_EQ(c.vocab_size, 300);
    EXPECT_EQ(c.max_positions, 96);
    EXPECT_EQ(c.tied_embeddings, arch == "qwen2");
    EXPECT_EQ(c.qkv_bias, arch == "qwen2");
    EXPECT_FLOAT_EQ(c.rope_theta, arch == "qwen2" ? 1e6f : 1e4f);
    EXPECT_FLOAT_EQ(c.norm_eps, arch == "qwen2" ? 1e-6f : 1e-5f);
    EXPECT_EQ(c.bos_id, 1);
    EXPECT_EQ(c.eos_id, 2);
    EXPECT_EQ(c.name, "tiny-" + arch);
    EXPECT_EQ(m.chat_format, ChatFormat::kChatML);
    EXPECT_EQ(m.tokenizer, nullptr);
    // Every weight equals the Hugging Face original the script permuted with llama.cpp's formula.
    SafetensorsFile ref = SafetensorsFile::open(dir_->file("ref_" + arch + ".safetensors"));
    EXPECT_EQ(ref.tensors().size(), m.weights.size());
    for (const auto& e : ref.tensors()) {
      Tensor want = ref.tensor_f32(e);
      const Tensor& got = m.weights.get(e.name);
      ASSERT_EQ(got.shape(), want.shape()) << e.name;
      for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << e.name;
    }
    // Vocabulary metadata maps into the vocab struct.
    GgufFile f = GgufFile::open(dir_->file(arch + ".gguf"));
    GgufVocab v = gguf_read_vocab(f);
    const BpeVocab* bpe = std::get_if<BpeVocab>(&v);
    ASSERT_NE(bpe, nullptr);
    EXPECT_EQ(bpe->tokens.size(), 300u);
    EXPECT_EQ(bpe->tokens[5], "t2");
    EXPECT_EQ(bpe->merges, (std::vector<std::string>{"t 1", "t 2"}));
    EXPECT_EQ(bpe->types[0], TokenType::kControl);
    EXPECT_EQ(bpe->pre_tokenizer, "default");
    EXPECT_EQ(bpe->eos_id, 2);
    EXPECT_FALSE(bpe->add_bos);
  }
}

TEST(LoadModel, Llama3RopeScalingSurvivesGgufAndHf) {
  ModelConfig c = synth_config("tiny");
  c.rope_theta = 500000.0f;
  c.rope_scaling = {32.0f, 1.0f, 4.0f, 8192};
  const WeightSource w = synth_weights(c, 3);
  testing::TempDir dir;
  write_gguf_model(dir.file("r.gguf"), c, w, GgmlType::kF32, BpeVocab{});
  write_hf_model(dir.file("hf"), c, w, DType::kBF16, nullptr);
  for (const auto& path : {dir.file("r.gguf"), dir.file("hf")}) {
    SCOPED_TRACE(path);
    LoadOptions opts;
    opts.load_tokenizer = false;
    Model m = load_model(path, opts);
    EXPECT_FLOAT_EQ(m.config.rope_scaling.factor, 32.0f);
    EXPECT_NEAR(m.config.rope_scaling.low_freq_factor, 1.0f, 1e-4);
    EXPECT_NEAR(m.config.rope_scaling.high_freq_factor, 4.0f, 1e-4);
    EXPECT_EQ(m.config.rope_scaling.original_max_positions, 8192);
    EXPECT_FLOAT_EQ(m.config.rope_theta, 500000.0f);
  }
  GgufFile f = GgufFile::open(dir.file("r.gguf"));
  EXPECT_NE(f.find_tensor("rope_freqs.weight"), nullptr);
  // BF16 safetensors stay BF16 views of the file; f32() converts.
  Model m = load_model(dir.file("hf"), LoadOptions{{}, false});
  EXPECT_TRUE(m.weights.get("model.norm.weight").is_view());
  EXPECT_EQ(m.weights.get("model.norm.weight").dtype(), DType::kBF16);
  EXPECT_NEAR(m.weights.f32("model.norm.weight").data<float>()[0], synth_tensor({"model.norm.weight", {64}}, 3).data<float>()[0], 1e-2);
}

TEST(LoadModel, GgufWithSentencePieceVocab) {
  ModelConfig c = synth_config("tiny");
  SpmVocab vocab = make_synthetic_spm_vocab(static_cast<int32_t>(c.vocab_size), 2);
  testing::TempDir dir;
  write_gguf_model(dir.file("spm.gguf"), c, synth_weights(c, 2), GgmlType::kF16, vocab);
  Model m = load_model(dir.file("spm.gguf"));
  ASSERT_NE(m.tokenizer, nullptr);
  EXPECT_EQ(m.tokenizer->kind(), "spm");
  EXPECT_EQ(m.tokenizer->bos_id(), 1);
  EXPECT_EQ(m.tokenizer->eos_id(), 2);
  auto ids = m.tokenizer->encode("the cat sat", true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(m.tokenizer->decode(std::span<const int32_t>(ids).subspan(1)), "the cat sat");
  GgufVocab back = gguf_read_vocab(GgufFile::open(dir.file("spm.gguf")));
  const SpmVocab* spm = std::get_if<SpmVocab>(&back);
  ASSERT_NE(spm, nullptr);
  EXPECT_EQ(spm->pieces, vocab.pieces);
  EXPECT_EQ(spm->scores, vocab.scores);
  EXPECT_EQ(spm->types, vocab.types);
}

TEST(LoadModel, ShardedHfFolderLoads) {
  ModelConfig c = synth_config("tiny");
  testing::TempDir dir;
  write_hf_model(dir.path(), c, synth_weights(c, 9), DType::kF16, nullptr, 64 * 1024);
  EXPECT_TRUE(std::filesystem::exists(dir.file("model.safetensors.index.json")));
  Model m = load_model(dir.path(), LoadOptions{{}, false});
  EXPECT_LT(max_weight_diff(c, m.weights, 9), 1e-3f);
  // Pointing at config.json or a shard loads the folder too.
  EXPECT_EQ(load_model(dir.file("config.json"), LoadOptions{{}, false}).weights.size(), m.weights.size());
}

TEST_F(Synthetic, TokenizerOverride) {
  LoadOptions opts;
  opts.tokenizer_path = model("llama", "hf").tokenizer;
  Model m = load_model(model("llama", "llama2c").checkpoint, opts);
  ASSERT_NE(m.tokenizer, nullptr);
  EXPECT_EQ(m.tokenizer->kind(), "bpe");
  EXPECT_EQ(m.tokenizer_path, opts.tokenizer_path);
  Model l = load_model(model("llama", "llama2c").checkpoint);
  EXPECT_EQ(l.tokenizer->kind(), "llama2c");
}

TEST(LoadModel, DefaultModelLoads) {
  const std::string path = testing::default_model_path();
  GENAI_REQUIRE_AVAILABLE(!path.empty(), "the default model (scripts/fetch_default_model.sh)");
  Model m = load_model(path);
  EXPECT_EQ(m.config.dim, 576);
  EXPECT_EQ(m.config.n_layers, 30);
  EXPECT_EQ(m.config.n_heads, 9);
  EXPECT_EQ(m.config.n_kv_heads, 3);
  EXPECT_EQ(m.config.ffn_dim, 1536);
  EXPECT_EQ(m.config.vocab_size, 49152);
  EXPECT_TRUE(m.config.tied_embeddings);
  EXPECT_EQ(m.chat_format, ChatFormat::kChatML);
  ASSERT_NE(m.tokenizer, nullptr);
  EXPECT_EQ(m.tokenizer->kind(), "bpe");
}

}  // namespace
}  // namespace genai
