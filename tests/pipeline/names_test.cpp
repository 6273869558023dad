#include <type_traits>

#include <gtest/gtest.h>

#include "core/error.h"
#include "pipeline/artifact_keys.h"
#include "pipeline/graph_names.h"

namespace genai::pipeline {
namespace {

TEST(ArtifactKeys, NamesAndParsing) {
  std::vector<std::string> names;
  for (auto k : all_artifact_keys()) names.emplace_back(artifact_key_name(k));
  EXPECT_EQ(names, (std::vector<std::string>{"text_decoder", "tok_embedding", "vision_encoder", "audio_encoder",
                                             "text_encoder", "attention_sink_evictor"}));
  for (auto k : all_artifact_keys()) EXPECT_EQ(parse_artifact_key(artifact_key_name(k)), k);
  // The decode-QDQ evaluation file is not an artifact key, and graph names are not either.
  for (const char* bad : {"decode_qdq", "kv_forward", "TEXT_DECODER"}) {
    try {
      parse_artifact_key(bad);
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("text_decoder, tok_embedding"), std::string::npos);
    }
  }
}

TEST(GraphNames, NamesAndParsing) {
  EXPECT_EQ(graph_name_str(GraphName::kKvForward), "kv_forward");
  EXPECT_EQ(graph_name_str(GraphName::kPrefillForward), "prefill_forward");
  EXPECT_EQ(graph_name_str(GraphName::kTokEmbeddingKvForward), "tok_embedding_kv_forward");
  EXPECT_EQ(graph_name_str(GraphName::kTokEmbeddingPrefillForward), "tok_embedding_prefill_forward");
  EXPECT_EQ(parse_graph_name("prefill_forward"), GraphName::kPrefillForward);
  EXPECT_THROW(parse_graph_name("text_decoder"), InputError);
}

TEST(GraphNames, DistinctTypesFromArtifactKeys) {
  static_assert(!std::is_same_v<GraphName, ArtifactKey>);
  static_assert(!std::is_convertible_v<GraphName, ArtifactKey>);
  static_assert(!std::is_convertible_v<ArtifactKey, GraphName>);
  static_assert(!std::is_convertible_v<GraphName, int>);
}

TEST(GraphNames, DecoderGraphsDecodeFirstAndKvHasNoPrefill) {
  EXPECT_EQ(decoder_graph_names(ModelMode::kKv), std::vector<GraphName>{GraphName::kKvForward});
  EXPECT_EQ(decoder_graph_names(ModelMode::kHybrid),
            (std::vector<GraphName>{GraphName::kKvForward, GraphName::kPrefillForward}));
  // Lookahead: upstream's two (kv_forward takes the tree) and our single-token kv_forward_ar1.
  EXPECT_EQ(decoder_graph_names(ModelMode::kLookahead),
            (std::vector<GraphName>{GraphName::kKvForward, GraphName::kPrefillForward, GraphName::kKvForwardAr1}));
  EXPECT_EQ(graph_name_str(GraphName::kKvForwardAr1), "kv_forward_ar1");
  EXPECT_EQ(parse_graph_name("tok_embedding_kv_forward_ar1"), GraphName::kTokEmbeddingKvForwardAr1);
  EXPECT_EQ(tok_embedding_graph_names(ModelMode::kHybrid),
            (std::vector<GraphName>{GraphName::kTokEmbeddingKvForward, GraphName::kTokEmbeddingPrefillForward}));
  EXPECT_EQ(tok_embedding_graph_names(ModelMode::kKv), std::vector<GraphName>{GraphName::kTokEmbeddingKvForward});
}

TEST(ModelModes, Parse) {
  EXPECT_EQ(parse_model_mode("lookahead"), ModelMode::kLookahead);
  EXPECT_EQ(model_mode_name(ModelMode::kKv), "kv");
  try {
    parse_model_mode("fast");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kv, hybrid, lookahead"), std::string::npos);
  }
}

TEST(ArtifactKeys, UpstreamFileStems) {
  EXPECT_EQ(artifact_file_stem(ArtifactKey::kTextDecoder, ModelMode::kKv), "kv_llama_qnn");
  EXPECT_EQ(artifact_file_stem(ArtifactKey::kTextDecoder, ModelMode::kHybrid), "hybrid_llama_qnn");
  EXPECT_EQ(artifact_file_stem(ArtifactKey::kTextDecoder, ModelMode::kLookahead, "stories260k"),
            "stories260k_lookahead_llama_qnn");
  EXPECT_EQ(artifact_file_stem(ArtifactKey::kTokEmbedding, ModelMode::kHybrid), "tok_embedding_qnn");
  EXPECT_EQ(artifact_file_stem(ArtifactKey::kAttentionSinkEvictor, ModelMode::kKv), "attention_sink_evictor");
}

TEST(ArtifactMap, JsonOmitsAbsentArtifacts) {
  ArtifactMap m{{ArtifactKey::kTextDecoder, "out/hybrid_llama_qnn.pte"}};
  const auto j = artifact_map_to_json(m);
  EXPECT_EQ(j, (nlohmann::json{{"text_decoder", "out/hybrid_llama_qnn.pte"}}));
  EXPECT_FALSE(j.contains("tok_embedding"));
  EXPECT_EQ(artifact_map_from_json(j), m);
  EXPECT_EQ(artifact_map_to_json({}), nlohmann::json::object());
  EXPECT_THROW(artifact_map_from_json(nlohmann::json{{"kv_forward", "x"}}), InputError);
  EXPECT_THROW(artifact_map_from_json(nlohmann::json{{"text_decoder", nullptr}}), InputError);
  EXPECT_THROW(artifact_map_from_json(nlohmann::json::array()), InputError);
}

}  // namespace
}  // namespace genai::pipeline
