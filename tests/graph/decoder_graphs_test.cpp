// The decoder graphs: upstream's signature, stable tensor names across graphs, one shared copy of
// the weights, option validation, and the calibration graph agreeing with the cached graphs.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "graph/decoder_graphs.h"
#include "graph/interpreter.h"
#include "graph/random_model.h"
#include "graph/text_dump.h"
#include "graph/verifier.h"
#include "llm/graph_decoder.h"
#include "model/reference_decoder.h"

namespace genai::graph {
namespace {

using graph_testing::random_model;

std::vector<std::pair<std::string, Shape>> signature_inputs(const Graph& g) {
  std::vector<std::pair<std::string, Shape>> s;
  for (ValueId id : g.inputs()) s.emplace_back(g.value(id).name, g.value(id).type.shape);
  return s;
}

TEST(DecoderGraphs, SignatureMatchesUpstream) {
  auto model = random_model();  // 2 layers, 2 kv heads, head_dim 8, vocab 83
  const GraphMap graphs = build_decoder_graphs(model, {ModelMode::kHybrid, 32, 8, true});
  ASSERT_EQ(graphs.size(), 3u);
  const Graph& kv = *graphs.at("kv_forward");
  const Graph& prefill = *graphs.at("prefill_forward");
  const Graph& calib = *graphs.at("calibration");
  using Sig = std::vector<std::pair<std::string, Shape>>;
  EXPECT_EQ(signature_inputs(kv), (Sig{{"tokens", {1, 1}},
                                       {"atten_mask", {1, 1, 1, 32}},
                                       {"input_pos", {1, 1}},
                                       {"k_cache_0", {1, 2, 8, 31}},
                                       {"k_cache_1", {1, 2, 8, 31}},
                                       {"v_cache_0", {1, 2, 31, 8}},
                                       {"v_cache_1", {1, 2, 31, 8}}}));
  EXPECT_EQ(signature_inputs(prefill)[3], (std::pair<std::string, Shape>{"k_cache_0", {1, 2, 8, 24}}));
  EXPECT_EQ(signature_inputs(calib), (Sig{{"tokens", {1, 32}}, {"atten_mask", {1, 1, 32, 32}}, {"input_pos", {1, 32}}}));
  EXPECT_EQ(kv.find_input("tokens")->type.dtype, DType::kI32);
  EXPECT_EQ(kv.find_input("input_pos")->type.dtype, DType::kI32);
  std::vector<std::string> outs;
  for (const auto& o : prefill.outputs()) outs.push_back(o.name);
  EXPECT_EQ(outs, (std::vector<std::string>{"logits", "k_out_0", "k_out_1", "v_out_0", "v_out_1"}));
  EXPECT_EQ(prefill.value(prefill.find_output("logits")->value).type.shape, (Shape{1, 8, 83}));
  EXPECT_EQ(prefill.value(prefill.find_output("k_out_1")->value).type.shape, (Shape{1, 2, 8, 8}));
  EXPECT_EQ(kv.value(kv.find_output("v_out_0")->value).type.shape, (Shape{1, 2, 1, 8}));
  for (const auto& [name, g] : graphs) EXPECT_EQ(verify_graph(*g), "") << name;

  const GraphMap kv_only = build_decoder_graphs(*model, {ModelMode::kKv, 32, 8, false});
  ASSERT_EQ(kv_only.size(), 1u);
  EXPECT_EQ(kv_only.begin()->first, "kv_forward");
}

TEST(DecoderGraphs, TensorNamesAreStableAcrossGraphsAndWeightsShared) {
  auto model = random_model({.arch = Architecture::kQwen2});
  const GraphMap graphs = build_decoder_graphs(model, {ModelMode::kHybrid, 16, 4, true});
  auto op_names = [](const Graph& g) {
    std::set<std::string> s;
    for (const Op& op : g.ops()) s.insert(g.value(op.result).name);
    return s;
  };
  const auto kv = op_names(*graphs.at("kv_forward"));
  EXPECT_EQ(kv, op_names(*graphs.at("prefill_forward")));
  EXPECT_TRUE(kv.count("layers.1.attn.q_proj.out"));
  EXPECT_TRUE(kv.count("layers.0.attn.probs"));
  // The calibration graph has no cache to concatenate; every other tensor is the same name.
  auto calib = op_names(*graphs.at("calibration"));
  for (const auto& n : kv) {
    if (n.find("attn.k.all") == std::string::npos && n.find("attn.v.all") == std::string::npos) {
      EXPECT_TRUE(calib.count(n)) << n;
    }
  }

  const Weights* shared = graphs.at("kv_forward")->weights().get();
  EXPECT_EQ(shared, &model->weights);
  for (const auto& [name, g] : graphs) EXPECT_EQ(g->weights().get(), shared) << name;
  // qwen2: the q/k/v projections read their biases.
  const Graph& g = *graphs.at("kv_forward");
  const Op& q = g.ops()[g.value(g.find_value("layers.0.attn.q_proj.out")).producer];
  ASSERT_EQ(q.operands.size(), 3u);
  EXPECT_EQ(g.value(q.operands[2]).name, "model.layers.0.self_attn.q_proj.bias");
}

TEST(DecoderGraphs, SeparateEmbeddingBuildsTokEmbeddingGraphsAndEmbedsInputs) {
  auto model = random_model();
  DecoderGraphOptions o{ModelMode::kHybrid, 16, 4};
  o.separate_embedding = true;
  const GraphMap graphs = build_decoder_graphs(model, o);
  std::vector<std::string> names;
  for (const auto& [name, g] : graphs) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"kv_forward", "prefill_forward", "tok_embedding_kv_forward",
                                             "tok_embedding_prefill_forward"}));
  const Graph& emb = *graphs.at("tok_embedding_prefill_forward");
  ASSERT_EQ(emb.ops().size(), 1u);
  EXPECT_EQ(emb.value(emb.find_output("inputs_embeds")->value).type.shape, (Shape{1, 4, 40}));
  const Graph& prefill = *graphs.at("prefill_forward");
  EXPECT_EQ(prefill.find_input("tokens"), nullptr);
  ASSERT_NE(prefill.find_input("inputs_embeds"), nullptr);
  EXPECT_EQ(prefill.find_input("inputs_embeds")->type, (TensorType{DType::kF32, {1, 4, 40}}));
  EXPECT_EQ(prefill.find_value("embed.out"), -1);
}

TEST(DecoderGraphs, BadOptionsAndMissingWeightsAreInputErrors) {
  auto model = random_model();
  EXPECT_THROW(build_decoder_graphs(model, {ModelMode::kHybrid, 8, 9}), InputError);
  EXPECT_THROW(build_decoder_graphs(model, {ModelMode::kHybrid, 8, 0}), InputError);
  EXPECT_THROW(build_decoder_graphs(model, {ModelMode::kKv, 1, 1}), InputError);
  auto broken = std::make_shared<Model>(*model);
  Weights w;
  for (const auto& [name, t] : model->weights.all())
    if (name != "model.layers.1.mlp.up_proj.weight") w.add(name, t);
  broken->weights = w;
  try {
    build_decoder_graphs(broken, {ModelMode::kKv, 8, 1});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.1.mlp.up_proj.weight"), std::string::npos) << e.what();
  }
}

TEST(DecoderGraphs, CalibrationGraphAgreesWithTheCachedGraphs) {
  // The calibration graph (all CL tokens at once, causal mask) and the session over kv/prefill
  // graphs compute the same logits: two different graph shapes, one model.
  auto model = random_model();
  const int64_t CL = 12;
  const GraphMap graphs = build_decoder_graphs(model, {ModelMode::kKv, CL, 1, true});
  const auto tokens = graph_testing::random_tokens(CL, 83, 9);
  Tensor tok = Tensor::zeros(DType::kI32, {1, CL}), pos = Tensor::zeros(DType::kI32, {1, CL});
  Tensor mask = Tensor::zeros(DType::kF32, {1, 1, CL, CL});
  for (int64_t i = 0; i < CL; ++i) {
    tok.mutable_data<int32_t>()[i] = tokens[i];
    pos.mutable_data<int32_t>()[i] = static_cast<int32_t>(i);
    for (int64_t j = i + 1; j < CL; ++j) mask.mutable_data<float>()[i * CL + j] = kMaskedValue;
  }
  const TensorMap out = interpret(*graphs.at("calibration"), {{"tokens", &tok}, {"atten_mask", &mask}, {"input_pos", &pos}});
  auto session = make_graph_session(model, {ModelMode::kKv, CL, 1});
  const std::vector<float> want = session->forward_all(tokens);
  const Tensor& logits = out.at("logits");
  ASSERT_EQ(static_cast<size_t>(logits.numel()), want.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(logits.data<float>()[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::abs(want[i])));
  }
  EXPECT_LT(diff / scale, 1e-5);
}

TEST(DecoderGraphs, DumpIsDeterministicAndReadable) {
  auto model = random_model();
  const std::string a = dump_graph_text(*build_decoder_graphs(model, {ModelMode::kKv, 16, 1}).at("kv_forward"));
  const std::string b = dump_graph_text(*build_decoder_graphs(model, {ModelMode::kKv, 16, 1}).at("kv_forward"));
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("  %layers.0.attn.q_proj.out : float32[1, 1, 32] = linear(%layers.0.input_norm.out, "
                   "%model.layers.0.self_attn.q_proj.weight)\n"),
            std::string::npos)
      << a;
  EXPECT_NE(a.find("  output   k_out_1 = %layers.1.attn.k.new\n"), std::string::npos);
}

TEST(DecoderGraphs, RopeTablesFollowTheInverseFrequencies) {
  auto model = random_model({.llama3_rope = true});
  auto [cos, sin] = rope_tables(model->config, 10);
  const int64_t hd = model->config.head_dim;
  EXPECT_EQ(cos.shape(), (Shape{10, hd}));
  for (int64_t i = 0; i < hd; ++i) {
    EXPECT_EQ(cos.data<float>()[i], 1.0f);  // position 0
    EXPECT_EQ(sin.data<float>()[i], 0.0f);
  }
  const auto inv = genai::rope_inv_freq(model->config);
  EXPECT_FLOAT_EQ(cos.data<float>()[7 * hd + 1], std::cos(7.0f * inv[1]));
  EXPECT_FLOAT_EQ(sin.data<float>()[7 * hd + 1 + hd / 2], std::sin(7.0f * inv[1]));
}

}  // namespace
}  // namespace genai::graph
