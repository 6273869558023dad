// Adding a modality is one Modality implementation and its registration: a third, fake one here
// ("sensor": short readings in, two feature rows out, through a tiny linear encoder graph) goes
// through the built-in quantization and compilation strategies, the compiler and the artifact dir
// without any of them naming it. Its encoder is calibrated and quantized beside the decoder, its
// program and processor settings land in the artifact dir and its manifest, and the program loads
// back and encodes like its float graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "graph/graph.h"
#include "modality/encoder.h"
#include "modality/encoder_quantization_step.h"
#include "modality/modality_registry.h"
#include "model/model.h"
#include "model/synth.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/genai_pipeline.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/stage_plan.h"
#include "pipeline/pipeline_context.h"
#include "runtime/artifact_dir.h"
#include "target/backend_type.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai::modality {
namespace {

namespace fs = std::filesystem;
using genai::testing::TempDir;

constexpr int64_t kReadings = 8, kRows = 2, kDim = 16;
constexpr int32_t kSensorToken = 5;
const std::string kMethod = "sensor_encoder";

// A reading of kRows x kReadings values, deterministic per seed.
std::vector<float> reading(int seed) {
  std::vector<float> v(static_cast<size_t>(kRows * kReadings));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(((seed * 7 + static_cast<int>(i) * 3) % 11) - 5) / 5.0f;
  return v;
}

class SensorPrompter final : public MediaPrompter {
 public:
  explicit SensorPrompter(std::unique_ptr<Encoder> encoder) : encoder_(std::move(encoder)) {}
  // One reading per file (its name's length seeds it): kRows feature rows each.
  PromptMedia prompt(const std::vector<std::string>& paths) override {
    PromptMedia m;
    m.content_item = m.placeholder = "<sensor>";
    m.token_id = kSensorToken;
    m.dim = kDim;
    for (const std::string& path : paths) {
      const std::vector<float> in = reading(static_cast<int>(path.size()));
      std::vector<float> out(static_cast<size_t>(kRows * kDim));
      const float* inputs[] = {in.data()};
      encoder_->run(inputs, out.data());
      m.features.insert(m.features.end(), out.begin(), out.end());
      m.expansions.push_back("<sensor><sensor>");
    }
    return m;
  }

 private:
  std::unique_ptr<Encoder> encoder_;
};

class SensorModality final : public Modality {
 public:
  SensorModality(pipeline::EncoderProgram program, fs::path model, fs::path processor)
      : program_(program), model_(std::move(model)), processor_(std::move(processor)) {}

  std::string_view name() const override { return "sensor"; }
  pipeline::EncoderProgram program() const override { return program_; }
  std::string_view option_name() const override { return "sensor_path"; }  // not in the option table
  std::string_view token_id_constant() const override { return "get_sensor_token_id"; }
  std::string_view sample_unit() const override { return "readings"; }
  bool present_in(const Model& model) const override {
    return fs::weakly_canonical(model.checkpoint_path) == fs::weakly_canonical(model_);
  }
  fs::path processor_config(const Model&) const override { return processor_; }

  pipeline::GraphBundle float_bundle(const Model&) const override {
    auto weights = std::make_shared<Weights>();
    Tensor w = Tensor::zeros(DType::kF32, {kDim, kReadings}), b = Tensor::zeros(DType::kF32, {kDim});
    for (int64_t i = 0; i < w.numel(); ++i) w.mutable_data<float>()[i] = static_cast<float>((i * 5) % 9 - 4) / 8.0f;
    for (int64_t i = 0; i < kDim; ++i) b.mutable_data<float>()[i] = static_cast<float>(i % 3) / 10.0f;
    weights->add("sensor.proj.weight", std::move(w));
    weights->add("sensor.proj.bias", std::move(b));
    auto g = std::make_shared<graph::Graph>(kMethod, std::move(weights));
    const graph::ValueId x = g->add_input("sensor_values", DType::kF32, {1, kRows, kReadings});
    const graph::ValueId y = g->add_op(graph::OpKind::kLinear,
                                       {x, g->add_weight("sensor.proj.weight"), g->add_weight("sensor.proj.bias")},
                                       "sensor.proj.out");
    g->add_output("sensor_features", y);
    pipeline::Metadata md{{"get_sensor_token_id", int64_t{kSensorToken}}, {"quant_recipe", std::string("float")}};
    return pipeline::GraphBundle(g, {{"sensor_values", DType::kF32, {1, kRows, kReadings}}}, std::move(md), std::nullopt);
  }

  EncoderCalibration calibration(const Model&, const std::vector<std::string>& paths) const override {
    EXPECT_TRUE(paths.empty());  // no --sensor_path option: generated readings
    EncoderCalibration c;
    for (int seed = 0; seed < 3; ++seed) {
      Tensor t = Tensor::zeros(DType::kF32, {1, kRows, kReadings});
      const std::vector<float> v = reading(seed);
      std::copy(v.begin(), v.end(), t.mutable_data<float>());
      graph::TensorMap sample;
      sample.emplace("sensor_values", std::move(t));
      c.samples.push_back(std::move(sample));
    }
    c.metadata = {{"get_sensor_token_id", int64_t{kSensorToken}}};
    c.output = "sensor_features";
    c.source = "generated readings";
    return c;
  }

  std::unique_ptr<MediaPrompter> open_program(const runtime::ArtifactDir& dir) const override {
    return std::make_unique<SensorPrompter>(std::make_unique<Encoder>(program_encoder_runner(dir, program_.key), kMethod));
  }
  std::unique_ptr<MediaPrompter> open_float(std::shared_ptr<const Model> model) const override {
    return std::make_unique<SensorPrompter>(
        std::make_unique<Encoder>(float_encoder_runner(float_bundle(*model), kMethod, "the sensor graph", "-"), kMethod));
  }

  void add_stats(const PromptMedia&, double, GenerationStats&) const override {}
  std::string_view notes_count_name() const override { return "sensor_readings"; }
  std::string_view notes_ms_name() const override { return "sensor_ms"; }
  std::string_view metric_ms_name() const override { return "sensor_encode_ms"; }

 private:
  pipeline::EncoderProgram program_;
  fs::path model_, processor_;
};

TEST(FakeModality, FlowsThroughQuantizationCompilationAndTheArtifactDir) {
  TempDir dir;
  SynthRequest req;
  req.shape = "tiny";
  req.seed = 3;
  req.out = dir.file("tiny.gguf");
  write_synth_model(req);
  const std::string processor = dir.file("sensor_processor.json");
  std::ofstream(processor) << "{\"readings\": 8}\n";

  // Its own graph name and artifact key, then the modality: nothing else learns about it.
  const pipeline::EncoderProgram program = pipeline::register_encoder_program("sensor_encoder", "sensor_readings");
  EXPECT_EQ(pipeline::graph_name_str(program.graph), "sensor_encoder");
  EXPECT_EQ(pipeline::artifact_key_name(program.key), "sensor_readings");
  EXPECT_EQ(pipeline::parse_artifact_key("sensor_readings"), program.key);
  register_modality(std::make_unique<SensorModality>(program, fs::path(req.out), fs::path(processor)));
  const Modality* sensor = find_modality("sensor");
  ASSERT_NE(sensor, nullptr);
  EXPECT_EQ(modalities().size(), 3u);

  // The built-in strategies, in process: prepare, quantize, compile.
  TempDir out;
  options::OptionValues v;
  v.set("checkpoint", req.out.string());
  v.set("soc_model", std::string("SM8650"));
  v.set("enable_x86_64", true);
  v.set("max_seq_len", int64_t{64});
  v.set("prefill_ar_len", int64_t{16});
  v.set("artifact", out.path());
  v.set("compile_only", true);
  v.set_from_text("prompt", {"Once upon a time"}, options::OptionSource::kCommandLine);
  orchestrator::StrategyRegistry registry;
  orchestrator::register_builtin_strategies(registry);
  auto b = pipeline::PipelineContext::builder();
  b.with_model(req.out.string()).with_soc("SM8650").with_prompt(v.get_list("prompt")).with_artifact_dir(out.path()).with_extra_options(v);
  const auto pipe = orchestrator::GenAIPipeline::from_proxy(
      pipeline::EngineProxy({}, target::resolve_backend_type(v.get_string("backend"))), registry,
      orchestrator::plan_skipped_stages(v));
  orchestrator::PipelineResult r;
  pipe.invoke(b.build(), r);

  // Quantized beside the decoder, on its own calibration.
  const nlohmann::json& q = r.stage("quantization").notes;
  ASSERT_TRUE(q.contains("sensor_encoder")) << q.dump();
  EXPECT_EQ(q["sensor_encoder"]["calibration_readings"], 3);
  EXPECT_EQ(q["sensor_encoder"]["calibration_source"], "generated readings");
  EXPECT_EQ(q["sensor_encoder"]["recipe"], "16a8w");

  // Its program and processor in the artifact map, the dir and the manifest.
  const fs::path pte = out.file("sensor_readings.pte");
  EXPECT_EQ(r.compilation.artifact_paths.at(program.key), pte);
  EXPECT_TRUE(fs::exists(pte));
  EXPECT_TRUE(fs::exists(out.file("text_decoder.pte")));
  const auto manifest = nlohmann::json::parse(genai::testing::read_text(out.file("manifest.json")));
  EXPECT_EQ(manifest["artifacts"]["sensor_readings"], "sensor_readings.pte");
  EXPECT_EQ(manifest["processors"]["sensor_readings"], "sensor_readings_preprocessor_config.json");
  EXPECT_TRUE(manifest["checksums"].contains("sensor_readings_preprocessor_config.json"));
  const auto methods = manifest["methods"]["sensor_readings"].get<std::vector<std::string>>();
  for (const char* method : {"sensor_encoder", "get_sensor_token_id", "get_sensor_values_scale", "get_sensor_features_scale"})
    EXPECT_NE(std::find(methods.begin(), methods.end(), method), methods.end()) << method << " in " << manifest["methods"].dump();

  // The dir opens with it, and its program loads and encodes as its float graph does.
  const runtime::ArtifactDir opened = runtime::open_artifact_dir(out.path());
  ASSERT_TRUE(opened.artifacts.contains(program.key));
  EXPECT_EQ(opened.processors.at(program.key), fs::path(out.file("sensor_readings_preprocessor_config.json")));
  const PromptMedia compiled = sensor->open_program(opened)->prompt({"a", "bb"});
  const PromptMedia reference = sensor->open_float(std::make_shared<const Model>(load_model(req.out)))->prompt({"a", "bb"});
  ASSERT_EQ(compiled.features.size(), static_cast<size_t>(2 * kRows * kDim));
  ASSERT_EQ(reference.features.size(), compiled.features.size());
  for (size_t i = 0; i < compiled.features.size(); ++i) EXPECT_NEAR(compiled.features[i], reference.features[i], 0.05) << i;
}

}  // namespace
}  // namespace genai::modality
