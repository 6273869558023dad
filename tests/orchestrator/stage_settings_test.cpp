// The one resolver (orchestrator/stage_settings.h): an option set (table defaults < config file <
// command line) becomes each stage's typed settings, "given" kept apart from defaults; a stage
// then reads fields only (tests/layering: NoStageReadsAnOptionByKey).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "options/cli_options.h"
#include "options/option_values.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/stage_settings.h"

namespace genai::orchestrator {
namespace {

// The settings' own defaults are the option table's: a stage given default-constructed settings
// runs as the option set's defaults would have it.
TEST(StageSettings, DefaultsAreTheOptionTables) {
  const StageSettings s = resolve_stage_settings(options::OptionValues());
  const pipeline::GraphShapeSettings g;
  EXPECT_EQ(s.inference.graphs.model_mode.value, g.model_mode.value);
  EXPECT_FALSE(s.inference.graphs.model_mode.given);
  EXPECT_EQ(s.inference.graphs.max_seq_len.value, g.max_seq_len.value);
  EXPECT_FALSE(s.inference.graphs.max_seq_len.given);
  EXPECT_EQ(s.inference.graphs.max_context_len, std::nullopt);
  EXPECT_EQ(s.inference.graphs.prefill_ar_len, g.prefill_ar_len);
  EXPECT_EQ(s.inference.graphs.ngram.value, g.ngram.value);
  EXPECT_EQ(s.inference.graphs.window.value, g.window.value);
  EXPECT_EQ(s.inference.graphs.gcap.value, g.gcap.value);

  const pipeline::CalibrationSettings c;
  EXPECT_EQ(s.preparation.calibration.calib_len, c.calib_len);
  EXPECT_EQ(s.preparation.calibration.max_windows, c.max_windows);
  EXPECT_EQ(s.preparation.calibration.range_method, c.range_method);
  EXPECT_EQ(s.preparation.calibration.max_context_len, c.max_context_len);
  EXPECT_EQ(s.preparation.calibration.seed, std::nullopt);
  EXPECT_EQ(s.preparation.rotation, pipeline::PreparationSettings().rotation);

  const pipeline::InferenceSettings i;
  EXPECT_EQ(s.inference.temperature, i.temperature);
  EXPECT_EQ(s.inference.top_p, i.top_p);
  EXPECT_EQ(s.inference.system_prompt, i.system_prompt);
  EXPECT_EQ(s.inference.eval.limit.value, i.eval.limit.value);
  EXPECT_FALSE(s.inference.interactive);
  EXPECT_EQ(s.inference.attention_sink, std::nullopt);

  const pipeline::CompilationSettings k;
  EXPECT_EQ(s.compilation.spec.backend, k.spec.backend);
  EXPECT_EQ(s.compilation.spec.htp_performance_mode, k.spec.htp_performance_mode);
  EXPECT_EQ(s.compilation.spec.profile_level, k.spec.profile_level);
  EXPECT_EQ(s.compilation.spec.use_fp16, k.spec.use_fp16);
  EXPECT_EQ(s.quantization.seq_mse_candidates, pipeline::QuantizationSettings().seq_mse_candidates);
}

// A config file and a command line, as `genai pipeline` parses them: each stage's fields.
TEST(StageSettings, ConfigFileAndCommandLineResolveToEachStagesFields) {
  options::OptionValues v;
  CLI::App app;
  options::add_options_to(app, v, options::kPipelineScope);
  v.load_config_json({{"max_seq_len", 128}, {"model_mode", "lookahead"}, {"ngram", 3}, {"calib_len", 32},
                      {"quant_override", nlohmann::json::array({"kv_forward.*=16a8w"})}},
                     "test config");
  const std::vector<std::string> args = {
      "--checkpoint", "m.gguf", "--soc_model", "SM8650", "--max_context_len", "256", "--seed", "7",
      "--use_attention_sink", "4,32", "--tokenizer_model", "tok.json", "--temperature", "0", "--chat",
      "--eval_methods", "tasks_eval", "--eval_limit", "2", "--enable_x86_64", "--json", "-E", "4,32",
      "--image_path", "a.png"};
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  app.parse(reversed);

  const StageSettings s = resolve_stage_settings(v);
  const pipeline::GraphShapeSettings& g = s.inference.graphs;
  EXPECT_EQ(g.model_mode.value, "lookahead");
  EXPECT_TRUE(g.model_mode.given);  // from the config file
  EXPECT_EQ(g.max_seq_len.value, 128);
  EXPECT_TRUE(g.max_seq_len.given);
  EXPECT_EQ(g.effective_max_context_len(), 256);
  EXPECT_EQ(g.ngram.value, 3);
  EXPECT_TRUE(g.ngram.given);
  EXPECT_FALSE(g.window.given);
  EXPECT_EQ(decode_ar_len(g), 32);  // next_pow2((8 + 8) * (3 - 1))

  EXPECT_EQ(s.preparation.checkpoint, "m.gguf");
  EXPECT_EQ(s.preparation.tokenizer_file, "tok.json");
  EXPECT_TRUE(s.preparation.embedding_quantize);
  EXPECT_EQ(s.preparation.calibration.calib_len, 32);
  EXPECT_EQ(s.preparation.calibration.max_context_len, 256);
  EXPECT_EQ(s.preparation.calibration.seed, 7);
  EXPECT_EQ(calibration_options(s.preparation.calibration).context_len, 32);

  EXPECT_EQ(s.quantization.quant_overrides, std::vector<std::string>{"kv_forward.*=16a8w"});
  EXPECT_EQ(s.quantization.embedding_quantize, "4,32");
  EXPECT_EQ(s.quantization.graphs.max_seq_len.value, 128);
  EXPECT_EQ(s.quantization.media.at("image_path"), std::vector<std::string>{"a.png"});

  EXPECT_EQ(s.compilation.spec.soc_model, "SM8650");
  EXPECT_TRUE(s.compilation.spec.enable_x86_64);
  EXPECT_TRUE(s.compilation.spec.enable_x86_64);
  EXPECT_EQ(s.compilation.recorded_options.at("max_seq_len"), 128);
  EXPECT_FALSE(s.compilation.recorded_options.contains("json"));  // presentation only

  const pipeline::InferenceSettings& i = s.inference;
  EXPECT_TRUE(i.interactive);
  EXPECT_EQ(i.temperature, 0.0);
  EXPECT_EQ(i.seed, 7);
  EXPECT_EQ(i.attention_sink, (std::pair<int64_t, int64_t>{4, 32}));
  EXPECT_EQ(i.tokenizer_file, "tok.json");
  EXPECT_EQ(i.eval.methods, std::vector<std::string>{"tasks_eval"});
  EXPECT_EQ(i.eval.limit.value, 2);
  EXPECT_TRUE(i.eval.limit.given);
  EXPECT_FALSE(i.eval.tasks_given);
  EXPECT_EQ(i.media.at("image_path"), std::vector<std::string>{"a.png"});
}

// Run settings the user did not give come from the programs' manifest; given ones win.
TEST(StageSettings, RunSettingsMergeWithTheManifestsOptions) {
  const nlohmann::json compiled = {{"model_mode", "lookahead"}, {"ngram", 4}, {"window", 2}, {"gcap", 2},
                                   {"use_attention_sink", "8,16"}};
  pipeline::InferenceSettings run;  // nothing given
  const auto lookahead = lookahead_setting(run, compiled);
  ASSERT_TRUE(lookahead);
  EXPECT_EQ(lookahead->ngram, 4);
  EXPECT_EQ(lookahead->window, 2);
  const auto sink = attention_sink_setting(run, compiled);
  ASSERT_TRUE(sink);
  EXPECT_EQ(sink->sink, 8);

  run.graphs.model_mode = {"hybrid", true};
  run.attention_sink = std::pair<int64_t, int64_t>{2, 4};
  EXPECT_FALSE(lookahead_setting(run, compiled));
  EXPECT_EQ(attention_sink_setting(run, compiled)->sink, 2);
}

}  // namespace
}  // namespace genai::orchestrator
