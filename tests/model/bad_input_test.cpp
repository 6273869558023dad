// Broken checkpoints end in InputError (exit code 2 from the CLI) naming the file and the tensor
// or key; never a crash.
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "formats/gguf_writer.h"
#include "formats/safetensors_file.h"
#include "model/gguf_metadata.h"
#include "model/hf_config.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "model/synth.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai {
namespace {

// The InputError message of load_model(path), or "" when it loads.
std::string load_error(const std::string& path) {
  try {
    load_model(path, LoadOptions{{}, false});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

void write_all(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

ModelConfig tiny() { return synth_config("tiny"); }

TEST(BadInput, TruncatedCheckpointsNameTheFile) {
  testing::TempDir dir;
  const ModelConfig c = tiny();
  write_gguf_model(dir.file("m.gguf"), c, synth_weights(c, 1), GgmlType::kQ8_0, GgufVocab{});
  write_llama2c_model(dir.file("m.bin"), c, synth_weights(c, 1), nullptr);
  write_hf_model(dir.file("hf"), c, synth_weights(c, 1), DType::kF32, nullptr);
  for (const std::string name : {"m.gguf", "m.bin", "hf/model.safetensors"}) {
    SCOPED_TRACE(name);
    const auto bytes = testing::read_bytes(dir.file(name));
    for (size_t cut : {size_t{3}, size_t{40}, bytes.size() / 3, bytes.size() - 1}) {
      write_all(dir.file(name), std::vector<uint8_t>(bytes.begin(), bytes.begin() + cut));
      const std::string err = load_error(dir.file(name == "hf/model.safetensors" ? "hf" : name));
      EXPECT_HAS(err, name);
    }
  }
}

TEST(BadInput, MissingTensorIsNamed) {
  testing::TempDir dir;
  const ModelConfig c = tiny();
  GgufWriter w;
  gguf_write_config(w, c);
  for (const auto& spec : expected_weights(c)) {
    if (spec.name == "model.layers.1.mlp.up_proj.weight") continue;
    w.add_tensor_f32(*gguf_name_of(spec.name), GgmlType::kF32, spec.shape, std::vector<float>(shape_numel(spec.shape), 0.1f));
  }
  w.write(dir.file("m.gguf"));
  const std::string err = load_error(dir.file("m.gguf"));
  EXPECT_HAS(err, "m.gguf");
  EXPECT_HAS(err, "missing tensor blk.1.ffn_up.weight");
  EXPECT_HAS(err, "model.layers.1.mlp.up_proj.weight");

  // HF: drop a tensor from the safetensors file.
  write_hf_model(dir.file("hf"), c, synth_weights(c, 1), DType::kF32, nullptr);
  std::vector<SafetensorsTensorToWrite> kept;
  for (const auto& spec : expected_weights(c)) {
    if (spec.name == "model.layers.0.self_attn.v_proj.weight") continue;
    kept.push_back({spec.name, DType::kF32, spec.shape, [spec] {
                      return std::vector<uint8_t>(static_cast<size_t>(shape_numel(spec.shape)) * 4, 0);
                    }});
  }
  write_safetensors(dir.file("hf/model.safetensors"), kept);
  EXPECT_HAS(load_error(dir.file("hf")), "missing tensor model.layers.0.self_attn.v_proj.weight");
}

TEST(BadInput, ShapeMismatchNamesTensorAndShapes) {
  testing::TempDir dir;
  ModelConfig c = tiny();
  write_hf_model(dir.path(), c, synth_weights(c, 1), DType::kF32, nullptr);
  // config.json now claims a wider MLP than the tensors have.
  ModelConfig wrong = c;
  wrong.ffn_dim = 192;
  std::ofstream(dir.file("config.json")) << hf_config_json(wrong);
  const std::string err = load_error(dir.path());
  EXPECT_HAS(err, "model.safetensors");
  EXPECT_HAS(err, "model.layers.0.mlp.gate_proj.weight");
  EXPECT_HAS(err, "expected shape [192, 64], got [160, 64]");

  // GGUF: metadata says 3 layers' worth of heads differently.
  GgufWriter w;
  ModelConfig g = c;
  g.n_kv_heads = 4;
  gguf_write_config(w, g);
  for (const auto& spec : expected_weights(c))
    w.add_tensor_f32(*gguf_name_of(spec.name), GgmlType::kF32, spec.shape, std::vector<float>(shape_numel(spec.shape), 0.1f));
  w.write(dir.file("m.gguf"));
  const std::string gerr = load_error(dir.file("m.gguf"));
  EXPECT_HAS(gerr, "m.gguf");
  EXPECT_HAS(gerr, "blk.0.attn_k.weight (model.layers.0.self_attn.k_proj.weight)");
  EXPECT_HAS(gerr, "expected shape [64, 64], got [32, 64]");
}

TEST(BadInput, UnknownArchitectureListsSupportedOnes) {
  testing::TempDir dir;
  std::ofstream(dir.file("config.json")) << R"({"model_type": "gpt_neox", "hidden_size": 64})";
  const std::string err = load_error(dir.path());
  EXPECT_HAS(err, "config.json");
  EXPECT_HAS(err, "gpt_neox");
  EXPECT_HAS(err, "llama, qwen2, qwen3, granite, smollm3");

  GgufWriter w;
  w.set("general.architecture", GgufValue::string("falcon"));
  w.write(dir.file("f.gguf"));
  const std::string gerr = load_error(dir.file("f.gguf"));
  EXPECT_HAS(gerr, "f.gguf");
  EXPECT_HAS(gerr, "general.architecture 'falcon'");
  EXPECT_HAS(gerr, "llama, qwen2, qwen3, granite, smollm3");
}

TEST(BadInput, BrokenConfigFilesNameTheKey) {
  testing::TempDir dir;
  const ModelConfig c = tiny();
  write_hf_model(dir.path(), c, synth_weights(c, 1), DType::kF32, nullptr);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not a JSON object"},
      {R"({"model_type": "llama", "hidden_size": "64"})", "hidden_size"},
      {R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "intermediate_size": 160})", "missing key vocab_size"},
      {R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 3, "intermediate_size": 160, "vocab_size": 512})", "n_kv_heads"},
      {R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "intermediate_size": 160, "vocab_size": 512, "rope_scaling": {"rope_type": "yarn", "factor": 4}})",
       "yarn"},
  };
  for (const auto& [text, part] : cases) {
    SCOPED_TRACE(part);
    std::ofstream(dir.file("config.json")) << text;
    const std::string err = load_error(dir.path());
    EXPECT_HAS(err, "config.json");
    EXPECT_HAS(err, part);
  }
}

TEST(BadInput, UnrecognisedFilesAndMissingPaths) {
  testing::TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "just some text, not a model";
  EXPECT_HAS(load_error(dir.file("notes.txt")), "not a GGUF file, Hugging Face folder or llama2.c checkpoint");
  EXPECT_HAS(load_error(dir.file("absent.gguf")), "absent.gguf");
  EXPECT_HAS(load_error(dir.path()), "config.json");
}

TEST(BadInput, CliExitCodes) {
  testing::TempDir dir;
  auto r = testing::run_genai({"synth", "--shape", "huge", "--out", dir.file("x.gguf")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "tiny, stories15m, smollm2-135m, smollm2-360m, llama3.2-1b, llama3.2-3b, phi-4-mini");
  r = testing::run_genai({"synth", "--format", "onnx", "--out", dir.file("x")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "gguf, hf, llama2c");
  r = testing::run_genai({"synth", "--format", "gguf", "--weight_type", "q5_k", "--out", dir.file("x.gguf")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "f32, f16, bf16, q8_0, q4_0");
  r = testing::run_genai({"synth", "--format", "hf", "--weight_type", "q8_0", "--out", dir.file("hf")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "--format hf (valid: f32, f16, bf16)");
  r = testing::run_genai({"synth", "--format", "llama2c", "--arch", "qwen2", "--out", dir.file("m.bin")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_HAS(r.err, "llama2.c");
}

}  // namespace
}  // namespace genai
