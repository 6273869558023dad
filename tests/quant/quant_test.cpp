// Quantization stage: arithmetic, recipes, per-block weights, reconciliation, the QDQ reference
// and its accuracy on tiny random decoders (seconds-fast, no checkpoint files).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "eval/quant_evaluation.h"
#include "graph/random_model.h"
#include "llm/graph_decoder.h"
#include "model/synth.h"
#include "quant/calibration_text.h"
#include "quant/qdq_executor.h"
#include "quant/quantize.h"

namespace genai::quant {
namespace {

using graph_testing::random_model;
using graph_testing::random_tokens;

Encoding u8(float scale, int32_t zp) {
  Encoding e;
  e.dtype = QDType::kU8;
  e.scale = scale;
  e.zero_point = zp;
  e.qmin = 0;
  e.qmax = 255;
  return e;
}

TEST(QuantArithmetic, RoundsHalfToEvenAndClamps) {
  const Encoding e = u8(1.0f, 10);
  EXPECT_EQ(quantize_value(0.5f, e), 10);    // 0.5 -> 0
  EXPECT_EQ(quantize_value(1.5f, e), 12);    // 1.5 -> 2
  EXPECT_EQ(quantize_value(2.5f, e), 12);    // 2.5 -> 2
  EXPECT_EQ(quantize_value(-0.5f, e), 10);   // -0.5 -> -0
  EXPECT_EQ(quantize_value(-1.5f, e), 8);    // -1.5 -> -2
  EXPECT_EQ(quantize_value(-100.0f, e), 0);  // clamped to qmin
  EXPECT_EQ(quantize_value(1e9f, e), 255);   // clamped to qmax
  EXPECT_EQ(quantize_value(NAN, e), 10);
  EXPECT_FLOAT_EQ(dequantize_value(12, e), 2.0f);
  EXPECT_FLOAT_EQ(dequantize_value(0, e), -10.0f);
}

TEST(QuantArithmetic, AsymmetricEncodingRepresentsZeroAndRange) {
  const Encoding e = asymmetric_encoding(QDType::kU16, -2.0f, 6.0f);
  EXPECT_EQ(e.qmin, 0);
  EXPECT_EQ(e.qmax, 65535);
  EXPECT_NEAR(e.scale, 8.0f / 65535.0f, 1e-9f);
  EXPECT_FLOAT_EQ(dequantize_value(quantize_value(0.0f, e), e), 0.0f);
  EXPECT_NEAR(dequantize_value(quantize_value(-2.0f, e), e), -2.0f, e.scale);
  EXPECT_NEAR(dequantize_value(quantize_value(6.0f, e), e), 6.0f, e.scale);
  // All-positive ranges still include zero.
  const Encoding p = asymmetric_encoding(QDType::kU8, 1.0f, 3.0f);
  EXPECT_EQ(p.zero_point, 0);
  EXPECT_NEAR(p.scale, 3.0f / 255.0f, 1e-7f);
  // Fake quantization is idempotent.
  float v[3] = {0.1234f, -1.77f, 5.5f};
  fake_quantize(v, 3, e);
  float w[3] = {v[0], v[1], v[2]};
  fake_quantize(w, 3, e);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(v[i], w[i]);
  const Encoding m = mask_encoding();
  EXPECT_EQ(quantize_value(0.0f, m), 65535);
  EXPECT_EQ(quantize_value(-255.0f, m), 0);
}

// A norm's weight as the HTP receives it: uint16 codes over [min(0, lo), max(0, hi)], so the
// values on the grid are codes times the scale, the largest at code 65535, and snapping twice
// changes nothing.
TEST(QuantArithmetic, ConstantGridIsTheUint16CodesOfTheRange) {
  const std::vector<float> w = {0.93f, 1.07f, 0.0123f, 2.5f, 1.0f / 3.0f};
  const Encoding e = constant_encoding(w.data(), 5);
  EXPECT_EQ(e.dtype, QDType::kU16);
  EXPECT_EQ(e.zero_point, 0);
  EXPECT_EQ(quantize_value(2.5f, e), 65535);
  const auto g = on_constant_grid(w.data(), 5);
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(g[i], dequantize_value(quantize_value(w[i], e), e));
    EXPECT_LE(std::fabs(g[i] - w[i]), e.scale / 2 * 1.0001f);
  }
  EXPECT_NE(g[2], w[2]);
  EXPECT_EQ(on_constant_grid(g.data(), 5), g);
}

TEST(QuantWeights, PerChannelAndPerBlockScales) {
  // Two rows of 64; row 0 has one large value in its first block.
  std::vector<float> w(128);
  for (int i = 0; i < 128; ++i) w[i] = 0.01f * static_cast<float>((i * 7) % 13 - 6);
  w[3] = 2.0f;
  // 8-bit: scale = max|w| / 127 exactly, every value within half a step.
  const WeightEncoding pc8 = quantize_weight("w", w.data(), 2, 64, QDType::kI8, 0);
  ASSERT_EQ(pc8.scales.size(), 2u);
  EXPECT_FLOAT_EQ(pc8.scales[0], 2.0f / 127.0f);
  EXPECT_FLOAT_EQ(pc8.scales[1], 0.06f / 127.0f);
  const WeightEncoding pb8 = quantize_weight("w", w.data(), 2, 64, QDType::kI8, 32);
  ASSERT_EQ(pb8.scales.size(), 4u);
  EXPECT_FLOAT_EQ(pb8.scales[0], 2.0f / 127.0f);
  EXPECT_FLOAT_EQ(pb8.scales[1], 0.06f / 127.0f);  // the outlier no longer sets block 1's scale
  const auto dq8 = dequantize_weight(pb8, w.data());
  for (int i = 0; i < 128; ++i) EXPECT_LE(std::fabs(dq8[i] - w[i]), pb8.scale(i / 64, i % 64) / 2 + 1e-7f);
  // 4-bit: per block beats per channel; the searched scale stays within [0.7, 1] x max|w| / 7.
  const WeightEncoding pc = quantize_weight("w", w.data(), 2, 64, QDType::kI4, 0);
  const WeightEncoding pb = quantize_weight("w", w.data(), 2, 64, QDType::kI4, 32);
  ASSERT_EQ(pb.scales.size(), 4u);
  EXPECT_LE(pb.scales[1], 0.06f / 7.0f * 1.0001f);
  EXPECT_GE(pb.scales[1], 0.06f / 7.0f * 0.69f);
  std::vector<int16_t> pb_codes(128);
  weight_codes(pb, w.data(), 0, 2, pb_codes.data());
  for (int16_t q : pb_codes) {
    EXPECT_GE(q, -8);
    EXPECT_LE(q, 7);
  }
  const auto dq_pb = dequantize_weight(pb, w.data()), dq_pc = dequantize_weight(pc, w.data());
  double err_pb = 0, err_pc = 0, err_plain = 0;
  for (int i = 0; i < 128; ++i) {
    err_pb += std::pow(dq_pb[i] - w[i], 2);
    err_pc += std::pow(dq_pc[i] - w[i], 2);
    // Without the search: scale = max|w| / 7 per block.
    const float sc = (i % 64 < 32 && i < 64) ? 2.0f / 7.0f : 0.06f / 7.0f;
    err_plain += std::pow(std::clamp(std::nearbyint(w[i] / sc), -8.0f, 7.0f) * sc - w[i], 2);
  }
  EXPECT_LT(err_pb, err_pc * 0.6);
  EXPECT_LE(err_pb, err_plain + 1e-9);  // the search never does worse than max|w| / qmax
  EXPECT_THROW(quantize_weight("w", w.data(), 2, 64, QDType::kI4, 24), InputError);
}

TEST(QuantRanges, MseClipsOutliersOnlyWhenTheGridIsCoarse) {
  Range r;
  std::vector<float> v(10000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.1f * static_cast<float>(i));
  v[17] = 40.0f;  // one outlier
  r.add(v.data(), static_cast<int64_t>(v.size()));
  EXPECT_EQ(mse_range(r, 255), std::make_pair(-1.0f, 40.0f));  // no histogram: min/max
  r.add_to_histogram(v.data(), static_cast<int64_t>(v.size()));
  const auto [lo8, hi8] = mse_range(r, 255);
  EXPECT_LT(hi8, 40.0f);
  const auto [lo16, hi16] = mse_range(r, 65535);
  EXPECT_FLOAT_EQ(hi16, 40.0f);
  EXPECT_FLOAT_EQ(lo16, -1.0f);
  EXPECT_EQ(range_method_from_name("mse"), RangeMethod::kMse);
  EXPECT_THROW(range_method_from_name("percentile"), InputError);
}

TEST(QuantRecipes, SpellingsDefaultsAndOverrides) {
  EXPECT_EQ(parse_scheme("16a4w_block:32").block_size, 32);
  EXPECT_EQ(parse_scheme("16a4w_block:64").block_size, 64);
  EXPECT_EQ(parse_scheme("8a8w").act, QDType::kU8);
  EXPECT_EQ(scheme_name(parse_scheme("16a4w_block:16")), "16a4w_block:16");
  EXPECT_THROW(parse_scheme("16a3w"), InputError);
  EXPECT_THROW(parse_scheme("16a4w_block:48"), InputError);
  EXPECT_EQ(recipe_from_spelling("8a8w").kv, QDType::kU8);
  EXPECT_EQ(recipe_from_choice(options::parse_quant_recipe("16a4w_block:64")).base.block_size, 64);
  EXPECT_EQ(recipe_from_choice(options::parse_quant_recipe("fp16")).is_float(), true);
  EXPECT_EQ(recipe_from_spelling("16a4w").kv, QDType::kU8);
  EXPECT_EQ(recipe_from_spelling("16a8w").kv, QDType::kU8);
  EXPECT_EQ(recipe_from_spelling("16a16w").kv, QDType::kU16);
  EXPECT_EQ(recipe_from_spelling("16a4w").scheme_for("lm_head.out").weight, QDType::kI8);
  EXPECT_EQ(recipe_from_spelling("16a8w").overrides.size(), 0u);
  const Recipe stories = default_recipe("stories110M", 12, 768);
  EXPECT_EQ(stories.base.weight, QDType::kI4);
  EXPECT_EQ(stories.kv, QDType::kU8);
  EXPECT_EQ(stories.scheme_for("lm_head.out").weight, QDType::kI8);
  EXPECT_EQ(stories.scheme_for("layers.0.mlp.up_proj.out").weight, QDType::kI4);
  EXPECT_EQ(default_recipe("SmolLM2-135M-Instruct", 30, 576).base.weight, QDType::kI8);
  EXPECT_EQ(default_recipe("Llama 3.2 1B", 16, 2048).base.block_size, 32);
  Recipe r = recipe_from_spelling("16a4w");
  add_override(r, "layers\\.1\\..*=16a8w");
  EXPECT_EQ(r.scheme_for("layers.1.attn.q_proj.out").weight, QDType::kI8);
  EXPECT_EQ(r.scheme_for("layers.11.attn.q_proj.out").weight, QDType::kI4);
  EXPECT_THROW(add_override(r, "layers\\.(=16a8w"), InputError);
  EXPECT_THROW(add_override(r, "no-equals"), InputError);
  EXPECT_THROW(add_override(r, "x=fp16"), InputError);
}

TEST(QuantLinear, MatchesAnIndependentIntegerComputation) {
  const int64_t rows = 3, in = 64, out = 5;
  std::vector<float> w(out * in), x(rows * in), bias(out);
  for (int64_t i = 0; i < out * in; ++i) w[i] = std::sin(0.37f * i) * 0.3f;
  for (int64_t i = 0; i < rows * in; ++i) x[i] = std::cos(0.11f * i) * 2.0f + 0.5f;
  for (int64_t i = 0; i < out; ++i) bias[i] = 0.1f * i;
  const Encoding ex = asymmetric_encoding(QDType::kU16, -1.5f, 2.5f), ey = asymmetric_encoding(QDType::kU16, -8.0f, 9.0f);
  fake_quantize(x.data(), rows * in, ex);
  for (int64_t block : {int64_t{0}, int64_t{16}}) {
    const WeightEncoding we = quantize_weight("w", w.data(), out, in, QDType::kI4, block);
    std::vector<int16_t> codes(static_cast<size_t>(out * in));
    weight_codes(we, w.data(), 0, out, codes.data());
    std::vector<float> y(rows * out);
    qdq_linear(x.data(), rows, ex, we, codes.data(), bias.data(), ey, y.data());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < out; ++c) {
        float t = 0.0f;
        for (int64_t b = 0; b < we.blocks(); ++b) {
          const int64_t width = block ? block : in;
          int64_t acc = 0, centred = 0, wsum = 0;
          for (int64_t k = b * width; k < (b + 1) * width; ++k) {
            const int64_t q = quantize_value(x[r * in + k], ex);  // the stored code
            acc += (q - ex.zero_point) * codes[c * in + k];
            centred += (q - 32768) * codes[c * in + k];
            wsum += codes[c * in + k];
          }
          if (block == 0) {
            // Per-channel weights under 16-bit codes: the HTP's accumulator (docs/quantization.md,
            // HTP rule 4), the centred sum floored to a multiple of 256 and the zero-point
            // correction rounded to one, ties down.
            const int64_t correction = (32768 - int64_t{ex.zero_point}) * wsum;
            EXPECT_EQ(acc, centred + correction);
            acc = static_cast<int64_t>(std::floor(static_cast<double>(centred) / 256.0)) * 256 +
                  static_cast<int64_t>(std::ceil((static_cast<double>(correction) - 128.0) / 256.0)) * 256;
          }
          t += static_cast<float>(acc) * we.scales[c * we.blocks() + b];
        }
        t += bias[c] / ex.scale;
        const int64_t q = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(t * (ex.scale / ey.scale))) + ey.zero_point,
                                              ey.qmin, ey.qmax);
        EXPECT_EQ(y[r * out + c], dequantize_value(q, ey)) << "block " << block << " row " << r << " col " << c;
        double ref = bias[c];
        for (int64_t k = 0; k < in; ++k) ref += x[r * in + k] * w[c * in + k];
        EXPECT_NEAR(y[r * out + c], ref, 0.5);  // and it is still the same linear map
      }
  }
}

// Logits SQNR of the QDQ kv_forward against the float kv_forward over `tokens`.
double logits_sqnr(std::shared_ptr<const Model> model, std::shared_ptr<const EncodingSet> set, int64_t CL,
                   const std::vector<int32_t>& tokens) {
  graph::DecoderGraphOptions go;
  go.mode = graph::ModelMode::kKv;
  go.max_context_len = CL;
  const auto graphs = graph::build_decoder_graphs(model, go);
  const auto fs = make_graph_session(std::make_unique<graph::InterpreterExecutor>(graphs));
  const auto qs = make_graph_session(std::make_unique<QdqExecutor>(
      graphs, std::map<std::string, std::shared_ptr<const EncodingSet>>{{"kv_forward", set}}));
  double s = 0, n = 0;
  for (int32_t t : tokens) {
    const auto a = fs->forward(std::span<const int32_t>(&t, 1));
    const std::vector<float> f(a.begin(), a.end());
    const auto q = qs->forward(std::span<const int32_t>(&t, 1));
    for (size_t i = 0; i < f.size(); ++i) {
      s += static_cast<double>(f[i]) * f[i];
      n += std::pow(static_cast<double>(f[i]) - q[i], 2);
    }
  }
  return sqnr_db(s, n);
}

QuantizedModel quantize_tiny(std::shared_ptr<const Model> model, const std::string& recipe,
                             graph::ModelMode mode = graph::ModelMode::kKv) {
  QuantizeOptions o;
  o.mode = mode;
  o.max_context_len = 32;
  o.prefill_ar_len = 8;
  o.recipe = recipe_from_spelling(recipe);
  o.calibration.context_len = 32;
  o.calibration.max_windows = 4;
  return quantize_model(model, o);
}

TEST(QuantQdq, Fp16LogitsStayAbove50dB) {
  const auto model = random_model();
  const auto q = quantize_tiny(model, "fp16");
  EXPECT_FALSE(q.bundles.at(pipeline::GraphName::kKvForward).quantized());
  const double db = logits_sqnr(model, q.encodings.at("kv_forward"), 32, random_tokens(20, 83, 3));
  EXPECT_GE(db, 50.0);
}

// Encodings calibrated on the evaluation tokens themselves (a random model's sampled text says
// little about random tokens), so the check measures the arithmetic, not calibration coverage.
std::shared_ptr<const EncodingSet> calibrated_on(std::shared_ptr<const Model> model, const std::string& recipe,
                                                 const std::vector<int32_t>& tokens) {
  std::shared_ptr<const Weights> weights(model, &model->weights);
  const auto calib = graph::build_decoder_graph(model->config, weights, "calibration", 32, 32);
  std::vector<int32_t> window(32);
  for (size_t i = 0; i < window.size(); ++i) window[i] = tokens[i % tokens.size()];
  const EncodingSet source = derive_encodings(*calib, calibrate(*calib, {window}), recipe_from_spelling(recipe));
  graph::DecoderGraphOptions go;
  go.mode = graph::ModelMode::kKv;
  go.max_context_len = 32;
  const auto graphs = graph::build_decoder_graphs(model, go);
  return std::make_shared<const EncodingSet>(reconcile_encodings(*graphs.at("kv_forward"), source));
}

TEST(QuantQdq, IntegerRecipesAreAccurateAndBrokenScalesAreCaught) {
  const auto model = random_model();
  const auto tokens = random_tokens(20, 83, 5);
  const auto set = calibrated_on(model, "16a16w", tokens);
  const double good = logits_sqnr(model, set, 32, tokens);
  EXPECT_GE(good, 40.0);
  const double w8 = logits_sqnr(model, calibrated_on(model, "16a8w", tokens), 32, tokens);
  const double w4 = logits_sqnr(model, calibrated_on(model, "16a4w", tokens), 32, tokens);
  EXPECT_LT(w8, good);  // fewer weight bits cost accuracy
  EXPECT_LT(w4, w8);
  EXPECT_GE(w8, 20.0);
  EXPECT_GE(w4, 5.0);
  // Scales off by 4x (too small: activations clip) must fail the same SQNR check.
  auto broken = std::make_shared<EncodingSet>(*set);
  for (auto& [name, e] : broken->activations)
    if (name != "atten_mask" && name != "atten_mask.groups") e.scale /= 4.0f;
  EXPECT_LT(logits_sqnr(model, broken, 32, tokens), 40.0);
}

TEST(QuantReconcile, SameTensorSameEncodingInEveryGraph) {
  const auto model = random_model();
  const auto q = quantize_tiny(model, "16a8w", graph::ModelMode::kHybrid);
  ASSERT_EQ(q.encodings.size(), 2u);
  const auto& kv = *q.encodings.at("kv_forward");
  const auto& pf = *q.encodings.at("prefill_forward");
  int shared = 0;
  for (const auto& [name, e] : kv.activations) {
    auto it = pf.activations.find(name);
    if (it == pf.activations.end()) continue;
    EXPECT_EQ(e, it->second) << name;
    ++shared;
  }
  EXPECT_EQ(shared, static_cast<int>(kv.activations.size()));
  EXPECT_EQ(kv.weights, pf.weights);
  for (int l = 0; l < 2; ++l)
    for (const char* kind : {"k", "v"})
      for (const auto* set : {&kv, &pf}) {
        const auto& g = *q.graphs.at(set == &kv ? "kv_forward" : "prefill_forward");
        const std::string out = g.value(g.find_output(fmt::format("{}_out_{}", kind, l))->value).name;
        EXPECT_EQ(set->activations.at(fmt::format("{}_cache_{}", kind, l)), set->activations.at(out));
      }
  const auto& io = *q.bundles.at(pipeline::GraphName::kKvForward).quant_io_dtypes();
  EXPECT_EQ(io.inputs.at("atten_mask"), DType::kU16);
  EXPECT_EQ(io.inputs.at("tokens"), DType::kI32);
  EXPECT_EQ(io.inputs.at("k_cache_0"), DType::kU8);
  EXPECT_EQ(kv.activations.at("k_cache_0").zero_point, 128);  // symmetric: native on the HTP
  EXPECT_EQ(io.outputs.at("logits"), DType::kU16);
  EXPECT_EQ(io.outputs.at("v_out_1"), io.inputs.at("v_cache_1"));
  // 8a8w: 8-bit KV cache, logits still 16-bit.
  const auto q8 = quantize_tiny(model, "8a8w");
  const auto& io8 = *q8.bundles.at(pipeline::GraphName::kKvForward).quant_io_dtypes();
  EXPECT_EQ(io8.inputs.at("k_cache_1"), DType::kU8);
  EXPECT_EQ(io8.outputs.at("k_out_1"), DType::kU8);
  EXPECT_EQ(io8.outputs.at("logits"), DType::kU16);
}

TEST(QuantFiles, DecodeQdqRoundTripsAndRejectsDamage) {
  const auto model = random_model({.tied = true});
  const auto q = quantize_tiny(model, "16a4w");
  const auto dir = std::filesystem::temp_directory_path() / "genai_quant_test_qdq";
  std::filesystem::remove_all(dir);
  const auto path = write_decode_qdq(q, dir);
  const EncodingSet back = load_encodings(path);
  const EncodingSet& orig = *q.encodings.at("kv_forward");
  EXPECT_EQ(back.activations, orig.activations);
  ASSERT_EQ(back.weights.size(), orig.weights.size());
  const Weights& weights = *q.graphs.at("kv_forward")->weights();
  for (const auto& [name, w] : orig.weights) {
    EXPECT_EQ(back.weights.at(name)->scales, w->scales) << name;
    // The file holds every code; the quantized model rounds them from the weights when read.
    ASSERT_FALSE(w->is_float()) << name;
    EXPECT_EQ(back.weights.at(name)->stored_codes, weight_codes(*w, weights.get(name))) << name;
  }
  // Tied embedding: the table is quantized once, with the output head's 8-bit scheme; the
  // decoder layers stay 4-bit.
  EXPECT_EQ(orig.weights.at("model.embed_tokens.weight")->dtype, QDType::kI8);
  EXPECT_EQ(orig.weights.at("model.layers.0.mlp.up_proj.weight")->dtype, QDType::kI4);
  // Same input, same bytes.
  const auto dir2 = dir / "again";
  write_decode_qdq(q, dir2);
  std::ifstream a(dir / "decode_qdq.bin", std::ios::binary), b(dir2 / "decode_qdq.bin", std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
  // Truncated binary -> InputError naming the file.
  std::filesystem::resize_file(dir / "decode_qdq.bin", 100);
  EXPECT_THROW(load_encodings(path), InputError);
  std::ofstream(dir / "decode_qdq.json") << "{\"format\": \"genai-qdq-1\"}";
  EXPECT_THROW(load_encodings(path), InputError);
  std::filesystem::remove_all(dir);
}

TEST(QuantCalibration, ReadsJsonListsAndPlainText) {
  const auto dir = std::filesystem::temp_directory_path() / "genai_quant_test_calib";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.json") << R"(["one", "two"])";
  std::ofstream(dir / "b.txt") << "plain text [not json]";
  std::ofstream(dir / "c.json") << R"(["ok", 3])";
  EXPECT_EQ(read_calibration_texts(dir / "a.json"), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(read_calibration_texts(dir / "b.txt").size(), 1u);
  EXPECT_THROW(read_calibration_texts(dir / "c.json"), InputError);
  EXPECT_THROW(read_calibration_texts(dir / "missing.json"), InputError);
  std::filesystem::remove_all(dir);
}

// A checkpoint calibrates on the built-in text, cut into whole windows in order (no token is
// sampled); the windows are not the evaluation text's. A model without a tokenizer samples.
TEST(QuantCalibration, CheckpointsReadTheBuiltInTextInOrder) {
  const auto dir = std::filesystem::temp_directory_path() / "genai_quant_test_builtin_calib";
  std::filesystem::create_directories(dir);
  SynthRequest req;
  req.out = dir / "tiny.gguf";
  const Model model = load_model(write_synth_model(req).checkpoint);
  ASSERT_NE(model.tokenizer, nullptr);
  CalibrationOptions o;
  o.context_len = 24;
  o.max_windows = 3;
  const auto windows = calibration_windows(model, o);
  const std::vector<int32_t> ids =
      model.tokenizer->encode(default_calibration_text(), model.tokenizer->add_bos_by_default());
  ASSERT_GE(ids.size(), 72u);
  ASSERT_EQ(windows.size(), 3u);
  for (size_t w = 0; w < windows.size(); ++w)
    EXPECT_EQ(windows[w], std::vector<int32_t>(ids.begin() + static_cast<std::ptrdiff_t>(24 * w),
                                               ids.begin() + static_cast<std::ptrdiff_t>(24 * (w + 1))));
  EXPECT_EQ(default_calibration_text().find(default_eval_text().substr(0, 40)), std::string::npos);

  Model no_tokenizer = model;
  no_tokenizer.tokenizer = nullptr;
  o.max_windows = 2;
  const auto sampled = calibration_windows(no_tokenizer, o);
  ASSERT_EQ(sampled.size(), 2u);
  for (const auto& w : sampled) {
    EXPECT_EQ(w.size(), 24u);
    EXPECT_EQ(w.front(), model.config.bos_id);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace genai::quant
