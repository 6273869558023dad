// Parity of the float reference with Hugging Face transformers: tests/python/hf_reference.py saves
// small random models of every family (tied and untied, GQA, llama3 rope scaling) as HF folders and
// GGUF files with the logits PyTorch computed; every source must load and agree with them to
// 1e-4 x max|logit| at every position of the 64-token sequence.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "model/reference_decoder.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

std::vector<float> read_f32(const std::string& path, size_t count) {
  std::vector<float> v(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(float)));
  EXPECT_TRUE(in.good()) << path;
  return v;
}

struct Parity {
  float max_diff = 0, max_logit = 0;
};

// Runs the decoder over the case's tokens in uneven chunks (exercising the KV cache) and checks
// the bound row by row.
Parity check_case(const nlohmann::json& cs, const std::string& checkpoint) {
  SCOPED_TRACE(checkpoint);
  LoadOptions load;
  load.load_tokenizer = false;
  const Model model = load_model(checkpoint, load);
  const std::vector<int32_t> tokens = cs["tokens"].get<std::vector<int32_t>>();
  const int64_t vocab = cs["vocab"].get<int64_t>();
  EXPECT_EQ(model.config.vocab_size, vocab);
  EXPECT_EQ(model.config.tied_embeddings, cs["tied"].get<bool>());
  EXPECT_EQ(model.config.rope_scaling.enabled(), cs["rope_scaling"].get<bool>());
  const auto expected = read_f32(cs["logits"].get<std::string>(), tokens.size() * vocab);

  ReferenceDecoder decoder(model);
  std::vector<float> got;
  const std::vector<size_t> cuts{0, 5, 6, 30, 31, 64};
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    auto part = decoder.forward(std::span(tokens).subspan(cuts[i], cuts[i + 1] - cuts[i]));
    got.insert(got.end(), part.begin(), part.end());
  }
  Parity p;
  for (float x : expected) p.max_logit = std::max(p.max_logit, std::fabs(x));
  const float bound = 1e-4f * p.max_logit;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    float row_diff = 0;
    for (int64_t v = 0; v < vocab; ++v)
      row_diff = std::max(row_diff, std::fabs(got[pos * vocab + v] - expected[pos * vocab + v]));
    EXPECT_LE(row_diff, bound) << "position " << pos;
    p.max_diff = std::max(p.max_diff, row_diff);
  }
  return p;
}

// One test for all cases: CTest runs every test in its own process, and the Python reference
// (PyTorch start-up) dominates the time, so it runs once here.
TEST(HfParity, EveryCaseFromHuggingFaceFolderAndGguf) {
  testing::TempDir dir;
  const auto r = testing::run_process({"python3", testing::python_script("hf_reference.py"), dir.path()});
  ASSERT_EQ(r.exit_code, 0) << "hf_reference.py failed:\n" << r.err;
  std::ifstream in(dir.file("cases.json"));
  const nlohmann::json cases = nlohmann::json::parse(in);
  std::set<std::string> seen;
  for (const auto& cs : cases) {
    const std::string name = cs["name"].get<std::string>();
    seen.insert(name);
    for (const char* key : {"hf_dir", "gguf"}) {
      if (cs[key].is_null()) continue;  // a setting llama.cpp's files cannot hold
      const Parity p = check_case(cs, cs[key].get<std::string>());
      std::printf("%-13s %-6s max |diff| %.3g, max |logit| %.3g, ratio %.3g (bound 1e-4)\n", name.c_str(), key,
                  p.max_diff, p.max_logit, p.max_diff / p.max_logit);
    }
  }
  // The cases the parity claim covers: tied/untied llama with GQA, llama3 rope scaling, qwen2 biases,
  // qwen3 q/k norms (head_dim * heads != hidden), granite multipliers, smollm3 NoPE layers, phi3 fused projections + partial rotary + longrope,
  // gemma GeGLU + scaled embeddings + (1 + w) norms, gemma2 sandwich norms + soft-capping +
  // sliding windows + query_pre_attn_scalar, gemma3 q/k norms + local rope base,
  // glm interleaved partial rotary + biases + fused gate/up, codegen LayerNorms + parallel blocks +
  // grouped qkv + interleaved partial rotary + biased MLP and head, gemma4 per-layer embeddings +
  // shared KV + double-wide MLPs + global heads of their own size with proportional rope + value
  // norms + layer scalars, and attention_k_eq_v with the global layers' own KV heads; gemma4's
  // decoder read from a Gemma4ForConditionalGeneration folder (text_config, model.language_model.).
  EXPECT_EQ(seen, (std::set<std::string>{"llama_tied", "llama_untied", "llama3_rope", "qwen2_bias", "qwen3_qk_norm",
                                         "granite_scales", "smollm3_nope", "phi3_longrope", "phi3_sliding",
                                         "gemma_geglu", "gemma2_caps", "gemma2_query_scalar",
                                         "gemma3_local_rope", "glm_interleaved", "codegen_parallel",
                                         "gemma4_ple_shared_kv", "gemma4_k_eq_v", "gemma4_multimodal_folder"}));
}

}  // namespace
}  // namespace genai
