// The techniques of a 4-bit recipe: recipe files (their overrides in order, bad files named),
// user overrides that must name some tensor, the weight range search (it must lower the
// activation-weighted error it minimises), GPTQ (it must lower the output error on correlated
// inputs) and the overrides the sensitivity analysis proposes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "core/error.h"
#include "eval/quant_evaluation.h"
#include "quant/encoding.h"
#include "quant/gptq.h"
#include "quant/recipe.h"
#include "support/cli_runner.h"
#include "support/input_errors.h"

namespace genai::quant {
namespace {

std::string write(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

using testing::input_error_of;

TEST(RecipeFile, BaseOverridesInOrderAndCandidates) {
  testing::TempDir dir;
  const auto file = write(dir, "r.json",
                          R"({"recipe": "16a4w_block:32", "seq_mse_candidates": 12, "gptq": true,
                              "overrides": ["layers\\.0\\..*=16a8w", "layers\\..*\\.mlp\\.down_proj\\.out=16a16w"]})");
  const Recipe r = recipe_from_file(file, recipe_from_spelling("16a8w"));
  EXPECT_EQ(r.base, parse_scheme("16a4w_block:32"));
  EXPECT_EQ(r.seq_mse_candidates, 12);
  EXPECT_TRUE(r.gptq);
  // The file's first entry wins over its second, both over the recipe's own (the head at 8 bits).
  EXPECT_EQ(r.scheme_for("layers.0.mlp.down_proj.out"), parse_scheme("16a8w"));
  EXPECT_EQ(r.scheme_for("layers.3.mlp.down_proj.out"), parse_scheme("16a16w"));
  EXPECT_EQ(r.scheme_for("layers.3.attn.q_proj.out"), parse_scheme("16a4w_block:32"));
  EXPECT_EQ(r.scheme_for("lm_head.out").weight, QDType::kI8);
  // Without "recipe" the fallback is the base.
  const Recipe f = recipe_from_file(write(dir, "f.json", R"({"overrides": ["lm_head\\.out=16a16w"]})"),
                                    recipe_from_spelling("16a4w"));
  EXPECT_EQ(f.base, parse_scheme("16a4w"));
  EXPECT_EQ(f.scheme_for("lm_head.out"), parse_scheme("16a16w"));
}

TEST(RecipeFile, MalformedFilesNameTheFileAndKey) {
  testing::TempDir dir;
  const Recipe base = recipe_from_spelling("16a8w");
  struct Bad {
    std::string text, expect;
  };
  for (const Bad& b : {Bad{"{not json", "not JSON"}, Bad{R"(["16a8w"])", "JSON object"},
                       Bad{R"({"recipes": "16a8w"})", "unknown key 'recipes'"},
                       Bad{R"({"recipe": "16a5w"})", "16a5w"},
                       Bad{R"({"overrides": "x=16a8w"})", "overrides"},
                       Bad{R"({"overrides": ["lm_head\\.out"]})", "REGEX=RECIPE"},
                       Bad{R"({"overrides": ["(=16a8w"]})", "bad regular expression"},
                       Bad{R"({"seq_mse_candidates": -1})", "seq_mse_candidates"},
                       Bad{R"({"gptq": 1})", "gptq"}}) {
    SCOPED_TRACE(b.text);
    const auto file = write(dir, "bad.json", b.text);
    const std::string e = input_error_of([&] { recipe_from_file(file, base); });
    EXPECT_NE(e.find(file), std::string::npos) << e;
    EXPECT_NE(e.find(b.expect), std::string::npos) << e;
  }
  EXPECT_NE(input_error_of([&] { recipe_from_file(dir.file("missing.json"), base); }).find("missing.json"), std::string::npos);
}

TEST(RecipeOverrides, AUserOverrideMustMatchSomeTensor) {
  Recipe r = recipe_from_spelling("16a4w");  // its own head/embedding overrides are not checked
  add_override(r, "layers\\.1\\..*=16a8w");
  const std::vector<std::string> names{"layers.0.attn.q_proj.out", "layers.1.attn.q_proj.out", "lm_head.out"};
  EXPECT_NO_THROW(check_overrides_match(r, names));
  add_override(r, "layers\\.7\\..*=16a8w");
  const std::string e = input_error_of([&] { check_overrides_match(r, names); });
  EXPECT_NE(e.find("--quant_override"), std::string::npos) << e;
  EXPECT_NE(e.find("layers\\.7\\..*=16a8w"), std::string::npos) << e;
  EXPECT_NE(e.find("matches no tensor"), std::string::npos) << e;
}

double weighted_error(const WeightEncoding& e, const std::vector<float>& w, const std::vector<float>& h) {
  double err = 0.0;
  std::vector<int16_t> q(w.size());
  weight_codes(e, w.data(), 0, e.rows, q.data());
  for (int64_t r = 0; r < e.rows; ++r)
    for (int64_t c = 0; c < e.cols; ++c) {
      const double d = double(q[size_t(r * e.cols + c)]) * e.scale(r, c) - w[size_t(r * e.cols + c)];
      err += h[size_t(c)] * d * d;
    }
  return err;
}

TEST(WeightRangeSearch, LowersTheActivationWeightedError) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 24, cols = 64;
  std::vector<float> w(static_cast<size_t>(rows * cols)), h(static_cast<size_t>(cols));
  for (auto& v : w) v = normal(rng) * normal(rng);  // heavy tails: clipping pays
  // Input energy concentrated on a few columns, as in real activations.
  for (int64_t c = 0; c < cols; ++c) h[size_t(c)] = c % 16 == 3 ? 50.0f : 0.05f + 0.01f * float(c % 5);
  for (QDType dtype : {QDType::kI4, QDType::kI8})
    for (int64_t block : {int64_t{0}, int64_t{32}}) {
      SCOPED_TRACE(std::string(qdtype_name(dtype)) + " block " + std::to_string(block));
      const WeightEncoding plain = quantize_weight("w", w.data(), rows, cols, dtype, block);
      const WeightEncoding searched = quantize_weight("w", w.data(), rows, cols, dtype, block, {h.data(), 16});
      const double a = weighted_error(plain, w, h), b = weighted_error(searched, w, h);
      EXPECT_LT(b, a);
      if (dtype == QDType::kI4) {
        EXPECT_LT(b, 0.9 * a);
      }
      // Scales only shrink from max|w| / qmax: the search never widens the grid.
      const int64_t width = block > 0 ? block : cols, blocks = cols / width;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < blocks; ++b) {
          float amax = 0.0f;
          for (int64_t i = 0; i < width; ++i) amax = std::max(amax, std::fabs(w[size_t(r * cols + b * width + i)]));
          EXPECT_LE(searched.scales[size_t(r * blocks + b)], amax / float(qdtype_max(dtype)) * (1 + 1e-6f));
        }
    }
}

}  // namespace
}  // namespace genai::quant

namespace genai::quant {
namespace {

// ||X (W - Q)^T||^2 for X [n, cols], W and Q [rows, cols].
double output_error(const std::vector<float>& x, int64_t n, const std::vector<float>& w, const WeightEncoding& q) {
  const std::vector<float> dq = dequantize_weight(q, w.data());
  double err = 0.0;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t r = 0; r < q.rows; ++r) {
      double y = 0.0;
      for (int64_t c = 0; c < q.cols; ++c)
        y += double(x[size_t(t * q.cols + c)]) * (w[size_t(r * q.cols + c)] - dq[size_t(r * q.cols + c)]);
      err += y * y;
    }
  return err;
}

TEST(Gptq, LowersTheOutputErrorOfCorrelatedInputs) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 16, cols = 64, n = 512;
  // Inputs with correlated columns (a few shared factors) and one dead column.
  std::vector<float> x(static_cast<size_t>(n * cols)), w(static_cast<size_t>(rows * cols));
  for (int64_t t = 0; t < n; ++t) {
    const float f0 = normal(rng), f1 = normal(rng);
    for (int64_t c = 0; c < cols; ++c)
      x[size_t(t * cols + c)] = c == 5 ? 0.0f : (c % 2 ? f0 : f1) * (1.0f + 0.05f * float(c)) + 0.3f * normal(rng);
  }
  for (auto& v : w) v = normal(rng);
  std::vector<double> gram(static_cast<size_t>(cols * cols), 0.0);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = 0; j < cols; ++j) gram[size_t(i * cols + j)] += double(x[size_t(t * cols + i)]) * x[size_t(t * cols + j)];
  const GptqFactor f = gptq_factor(gram, n, cols);
  EXPECT_TRUE(f.dead[5]);
  for (QDType dtype : {QDType::kI4, QDType::kI8})
    for (int64_t block : {int64_t{0}, int64_t{16}}) {
      SCOPED_TRACE(std::string(qdtype_name(dtype)) + " block " + std::to_string(block));
      const WeightEncoding rtn = quantize_weight("w", w.data(), rows, cols, dtype, block);
      const WeightEncoding gptq = gptq_quantize("w", w.data(), rows, cols, dtype, block, f);
      const double a = output_error(x, n, w, rtn), b = output_error(x, n, w, gptq);
      EXPECT_LT(b, 0.7 * a) << "GPTQ " << b << " against rounding " << a;
    }
}

}  // namespace
}  // namespace genai::quant

namespace genai {
namespace {

TEST(LayerSensitivity, ProposesTheLayersFarBelowTheMedianAtMostAQuarter) {
  // Worst first, as layer_sensitivity returns them; median 24 dB.
  const std::vector<TensorSqnr> rows{{"layers.11", 12.0}, {"layers.3", 18.0}, {"layers.29", 20.5},
                                     {"layers.1", 22.0},  {"layers.2", 24.0}, {"layers.4", 24.5},
                                     {"layers.5", 25.0},  {"lm_head", 40.0}};
  // Below 21 dB: layers 11, 3 and 29, but a quarter of 8 is 2.
  EXPECT_EQ(propose_overrides(rows, "16a8w"),
            (std::vector<std::string>{"layers\\.11\\..*=16a8w", "layers\\.3\\..*=16a8w"}));
  EXPECT_EQ(propose_overrides(rows, "16a16w", 7.0), (std::vector<std::string>{"layers\\.11\\..*=16a16w"}));
  EXPECT_TRUE(propose_overrides(rows, "16a8w", 20.0).empty());
  EXPECT_TRUE(propose_overrides({}, "16a8w").empty());
  // Every proposal is a valid override.
  quant::Recipe r = quant::recipe_from_spelling("16a4w");
  for (const auto& spec : propose_overrides(rows, "16a8w")) quant::add_override(r, spec);
  EXPECT_EQ(r.scheme_for("layers.11.mlp.down_proj.out"), quant::parse_scheme("16a8w"));
  EXPECT_EQ(r.scheme_for("layers.1.mlp.down_proj.out"), quant::parse_scheme("16a4w"));
}

}  // namespace
}  // namespace genai

namespace genai::quant {
namespace {

TEST(EmbeddingQuantize, UpstreamSpellingSetsTheTokenTableScheme) {
  Recipe r = recipe_from_spelling("16a8w");
  set_embedding_quantization(r, "4,32");
  ASSERT_TRUE(r.embedding_table);
  EXPECT_EQ(*r.embedding_table, (Scheme{QDType::kU16, QDType::kI4, 32}));
  set_embedding_quantization(r, "8,0");
  EXPECT_EQ(*r.embedding_table, (Scheme{QDType::kU16, QDType::kI8, 0}));
  for (const char* bad : {"2,32", "4", "4,x", ",32", "16,0"}) {
    SCOPED_TRACE(bad);
    EXPECT_NE(input_error_of([&] { set_embedding_quantization(r, bad); }).find("--embedding_quantize"), std::string::npos);
  }
  Recipe fp = recipe_from_spelling("fp16");
  EXPECT_NE(input_error_of([&] { set_embedding_quantization(fp, "8,0"); }).find("fp16"), std::string::npos);
}

}  // namespace
}  // namespace genai::quant
