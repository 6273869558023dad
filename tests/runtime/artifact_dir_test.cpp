// open_artifact_dir: manifest.json parsing, every named file checked, errors naming the manifest
// and the key.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "runtime/artifact_dir.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

nlohmann::json good_manifest() {
  return {{"format", "genai-artifacts"},
          {"version", 1},
          {"artifacts", {{"text_decoder", "text_decoder.pte"}}},
          {"methods", {{"text_decoder", {"kv_forward", "prefill_forward"}}}},
          {"tokenizer", "tokenizer.json"},
          {"soc_model", "SM8650"},
          {"backend", "htp"}};
}

std::string expect_input_error(const std::string& dir, const std::vector<std::string>& words) {
  try {
    runtime::open_artifact_dir(dir);
  } catch (const InputError& e) {
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "opened " << dir;
  return "";
}

TEST(ArtifactDir, OpensAManifestAndResolvesItsFiles) {
  testing::TempDir dir;
  write_text(dir.file("text_decoder.pte"), "x");
  write_text(dir.file("tokenizer.json"), "{}");
  write_text(dir.file("manifest.json"), good_manifest().dump());
  const auto a = runtime::open_artifact_dir(dir.path());
  ASSERT_EQ(a.artifacts.size(), 1u);
  EXPECT_EQ(a.artifacts.at(pipeline::ArtifactKey::kTextDecoder), std::filesystem::path(dir.file("text_decoder.pte")));
  ASSERT_TRUE(a.tokenizer_path);
  EXPECT_EQ(*a.tokenizer_path, std::filesystem::path(dir.file("tokenizer.json")));
  EXPECT_EQ(a.soc_model, "SM8650");
  EXPECT_EQ(a.backend, "htp");
  EXPECT_EQ(a.manifest["methods"]["text_decoder"].size(), 2u);
}

// Processor settings by encoder artifact key; an older manifest's single "processor" belongs to
// its one encoder program.
TEST(ArtifactDir, ProcessorsByArtifactKeyAndTheOlderSingleField) {
  testing::TempDir dir;
  for (const char* f : {"text_decoder.pte", "tok_embedding.pte", "vision_encoder.pte", "tokenizer.json"}) write_text(dir.file(f), "x");
  write_text(dir.file("vision_encoder_preprocessor_config.json"), "{}");
  write_text(dir.file("preprocessor_config.json"), "{}");
  nlohmann::json m = good_manifest();
  m["artifacts"]["tok_embedding"] = "tok_embedding.pte";
  m["artifacts"]["vision_encoder"] = "vision_encoder.pte";
  m["processors"] = {{"vision_encoder", "vision_encoder_preprocessor_config.json"}};
  write_text(dir.file("manifest.json"), m.dump());
  auto a = runtime::open_artifact_dir(dir.path());
  ASSERT_EQ(a.processors.size(), 1u);
  EXPECT_EQ(a.processors.at(pipeline::ArtifactKey::kVisionEncoder),
            std::filesystem::path(dir.file("vision_encoder_preprocessor_config.json")));

  m.erase("processors");
  m["processor"] = "preprocessor_config.json";
  write_text(dir.file("manifest.json"), m.dump());
  a = runtime::open_artifact_dir(dir.path());
  ASSERT_EQ(a.processors.size(), 1u);
  EXPECT_EQ(a.processors.at(pipeline::ArtifactKey::kVisionEncoder), std::filesystem::path(dir.file("preprocessor_config.json")));

  m["processor"] = "absent.json";
  write_text(dir.file("manifest.json"), m.dump());
  expect_input_error(dir.path(), {"manifest.json", "'processor'", "absent.json"});
}

TEST(ArtifactDir, MissingDirManifestAndFilesAreNamed) {
  testing::TempDir dir;
  expect_input_error(dir.file("nowhere"), {"nowhere", "does not exist"});
  expect_input_error(dir.path(), {"manifest.json", "missing"});
  write_text(dir.file("manifest.json"), good_manifest().dump());
  expect_input_error(dir.path(), {"manifest.json", "'artifacts.text_decoder'", "text_decoder.pte", "does not exist"});
  write_text(dir.file("text_decoder.pte"), "x");
  expect_input_error(dir.path(), {"manifest.json", "'tokenizer'", "tokenizer.json"});
}

TEST(ArtifactDir, MalformedManifestsAreInputErrorsNamingTheKey) {
  testing::TempDir dir;
  write_text(dir.file("text_decoder.pte"), "x");
  write_text(dir.file("tokenizer.json"), "{}");
  write_text(dir.file("manifest.json"), "{\"format\": ");
  expect_input_error(dir.path(), {"manifest.json", "not valid JSON"});
  write_text(dir.file("manifest.json"), "[1, 2]");
  expect_input_error(dir.path(), {"JSON object"});
  auto m = good_manifest();
  m["version"] = 2;
  write_text(dir.file("manifest.json"), m.dump());
  expect_input_error(dir.path(), {"'version'"});
  m = good_manifest();
  m["format"] = "other";
  write_text(dir.file("manifest.json"), m.dump());
  expect_input_error(dir.path(), {"'format'"});
  m = good_manifest();
  m["artifacts"] = {{"text_decodr", "text_decoder.pte"}};
  write_text(dir.file("manifest.json"), m.dump());
  expect_input_error(dir.path(), {"manifest.json", "text_decodr", "text_decoder"});
  m = good_manifest();
  m["artifacts"]["text_decoder"] = 5;
  write_text(dir.file("manifest.json"), m.dump());
  expect_input_error(dir.path(), {"'artifacts.text_decoder' must be a file name"});
  for (const char* escape : {"../text_decoder.pte", "/etc/passwd", "sub/text_decoder.pte", ".."}) {
    m = good_manifest();
    m["artifacts"]["text_decoder"] = escape;
    write_text(dir.file("manifest.json"), m.dump());
    expect_input_error(dir.path(), {"file name inside the artifact dir"});
  }
  m = good_manifest();
  m["soc_model"] = 8650;
  write_text(dir.file("manifest.json"), m.dump());
  expect_input_error(dir.path(), {"'soc_model' must be a string"});
}

}  // namespace
}  // namespace genai
