// graph::split_by_layers: every op in one part, every part's inputs provided by the graph or an
// earlier part, every graph output computed by some part; counts outside [1, layers] are refused
// naming --num_sharding.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "graph/decoder_graphs.h"
#include "graph/layer_shards.h"
#include "graph/random_model.h"
#include "support/input_errors.h"

namespace genai {
namespace {

using genai::testing::input_error_of;

TEST(LayerShards, EveryOpLandsInOnePartAndPassedValuesConnectThem) {
  const auto model = graph_testing::random_model();
  graph::DecoderGraphOptions go;
  go.max_context_len = 16;
  go.prefill_ar_len = 4;
  const auto graphs = graph::build_decoder_graphs(model, go);
  const graph::Graph& g = *graphs.at("prefill_forward");
  ASSERT_EQ(graph::layer_count(g), 2);
  const auto parts = graph::split_by_layers(g, 2);
  ASSERT_EQ(parts.size(), 2u);
  size_t ops = 0;
  std::set<std::string> outputs, produced_outputs;
  for (const auto& o : g.outputs()) outputs.insert(o.name);
  std::set<std::string> available;
  for (auto id : g.inputs()) available.insert(g.value(id).name);
  for (const auto& p : parts) {
    ops += p.graph->ops().size();
    for (auto id : p.graph->inputs()) EXPECT_TRUE(available.count(p.graph->value(id).name)) << p.graph->value(id).name;
    for (const auto& o : p.graph->outputs()) {
      available.insert(o.name);
      if (outputs.count(o.name)) produced_outputs.insert(o.name);
    }
  }
  EXPECT_EQ(ops, g.ops().size());
  EXPECT_EQ(produced_outputs, outputs);
  // The first part holds the embedding and layer 0, the last the output head.
  EXPECT_NE(parts.front().graph->find_value("layers.0.attn.k.new"), -1);
  EXPECT_EQ(parts.front().graph->find_value("layers.1.attn.k.new"), -1);
  EXPECT_NE(parts.back().graph->find_value("layers.1.attn.k.new"), -1);
  EXPECT_NE(parts.back().graph->find_output("logits"), nullptr);
  for (int64_t bad : {0, 3}) {
    const std::string e = input_error_of([&] { graph::split_by_layers(g, bad); });
    EXPECT_NE(e.find("--num_sharding"), std::string::npos) << e;
    EXPECT_NE(e.find("2 layers"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace genai
