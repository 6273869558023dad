#include "options/option_values.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "options/option_table.h"
#include "options/spec_from_options.h"
#include "support/cli_runner.h"
#include "target/qnn_spec_builder.h"

namespace genai::options {
namespace {

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OptionValues, DefaultsComeFromTheTable) {
  OptionValues v;
  EXPECT_EQ(v.get_int("max_seq_len"), 512);
  EXPECT_EQ(v.get_string("model_mode"), "hybrid");
  EXPECT_DOUBLE_EQ(v.get_float("temperature"), 0.8);
  EXPECT_FALSE(v.get_flag("compile_only"));
  EXPECT_EQ(v.get_list("eval_methods"), std::vector<std::string>{"prompt_eval"});
  EXPECT_FALSE(v.has_value("soc_model"));
  EXPECT_FALSE(v.was_set("max_seq_len"));
  EXPECT_EQ(v.get_optional_int("max_context_len"), std::nullopt);
  EXPECT_THROW(v.get_int("no_such_option"), Failure);
  EXPECT_THROW(v.get_string("max_seq_len"), Failure);
}

TEST(OptionValues, SharedBufferDefaultsOffHereOnInTheBuilder) {
  // Both defaults pinned: the option set follows upstream's CLI (off), the compile-spec builder
  // upstream's decoder path (on unless x86 emulation).
  OptionValues v;
  EXPECT_FALSE(v.get_flag("shared_buffer"));
  EXPECT_TRUE(target::QnnSpecBuilder("SM8650").options().shared_buffer);
  v.set("soc_model", std::string("SM8650"));
  EXPECT_TRUE(spec_builder_from_options(v).options().shared_buffer);
  v.set("enable_x86_64", true);
  EXPECT_FALSE(spec_builder_from_options(v).options().shared_buffer);
}

TEST(OptionValues, SpecFromOptionsFollowsTheDecoderFlow) {
  OptionValues v;
  v.set("soc_model", std::string("sm8650"));
  v.set("enable_x86_64", true);
  const auto o = spec_builder_from_options(v).options();
  EXPECT_EQ(o.soc_model, target::Chipset::SM8650);
  EXPECT_TRUE(o.use_mha2sha);
  EXPECT_FALSE(o.htp_options->use_weight_sharing);
  EXPECT_EQ(o.htp_options->performance_mode, qnn_delegate::QnnExecuTorchHtpPerformanceMode::kHtpBurst);
  EXPECT_EQ(o.log_level, qnn_delegate::QnnExecuTorchLogLevel::kLogLevelError);
  v.set("use_fp16", true);
  v.set("htp_performance_mode", int64_t{3});
  v.set("backend", std::string("gpu"));
  const auto g = spec_builder_from_options(v).options();
  EXPECT_EQ(g.backend_type, target::BackendType::kGpuBackend);
  OptionValues none;
  EXPECT_NE(input_error([&] { spec_builder_from_options(none); }).find("--soc_model"), std::string::npos);
}

TEST(OptionValues, TypeChoiceAndFormatChecks) {
  OptionValues v;
  EXPECT_NE(input_error([&] { v.set("max_seq_len", std::string("x")); }).find("--max_seq_len"), std::string::npos);
  auto m = input_error([&] { v.set("model_mode", std::string("turbo")); });
  EXPECT_NE(m.find("kv, hybrid, lookahead"), std::string::npos) << m;
  m = input_error([&] { v.set("profile_level", int64_t{1}); });
  EXPECT_NE(m.find("0, 2, 3"), std::string::npos) << m;
  m = input_error([&] { v.set("eval_methods", std::vector<std::string>{"prompt_eval", "nope"}); });
  EXPECT_NE(m.find("sqnr_eval"), std::string::npos) << m;
  m = input_error([&] { v.set("soc_model", std::string("SM9999")); });
  EXPECT_NE(m.find("SM8650"), std::string::npos) << m;
  EXPECT_NE(input_error([&] { v.set("use_attention_sink", std::string("4")); }).find("--use_attention_sink"), std::string::npos);
  EXPECT_NO_THROW(v.set("use_attention_sink", std::string("4,32")));
  EXPECT_NE(input_error([&] { v.set("embedding_quantize", std::string("4,x")); }).find("--embedding_quantize"), std::string::npos);
  EXPECT_NE(input_error([&] { v.set("nope", true); }).find("nope"), std::string::npos);
  v.set("temperature", int64_t{1});  // ints widen to floats
  EXPECT_DOUBLE_EQ(v.get_float("temperature"), 1.0);
  v.set("prompt", std::string("one"));  // a single string is a one-element list
  EXPECT_EQ(v.get_list("prompt"), std::vector<std::string>{"one"});
}

TEST(OptionValues, TextParsing) {
  OptionValues v;
  v.set_from_text("max_seq_len", {"128"}, OptionSource::kCommandLine);
  EXPECT_EQ(v.get_int("max_seq_len"), 128);
  EXPECT_THROW(v.set_from_text("max_seq_len", {"12x"}, OptionSource::kCommandLine), InputError);
  EXPECT_THROW(v.set_from_text("top_p", {"nan"}, OptionSource::kCommandLine), InputError);
  v.set_from_text("top_p", {"0.5"}, OptionSource::kCommandLine);
  EXPECT_DOUBLE_EQ(v.get_float("top_p"), 0.5);
  v.set_from_text("prompt", {"a", "b"}, OptionSource::kCommandLine);
  EXPECT_EQ(v.get_list("prompt"), (std::vector<std::string>{"a", "b"}));
  v.set_from_text("dtype-override", {"fp16"}, OptionSource::kCommandLine);  // upstream spelling
  EXPECT_EQ(v.get_string("dtype_override"), "fp16");
}

TEST(OptionValues, CommandLineWinsOverConfigFile) {
  genai::testing::TempDir dir;
  const std::string path = dir.file("cfg.json");
  std::ofstream(path) << R"({"max_seq_len": 128, "soc_model": "SM8550", "prompt": ["hi"], "seed": null})";
  OptionValues v;
  v.set("max_seq_len", int64_t{256}, OptionSource::kCommandLine);
  v.load_config_file(path);  // order does not matter
  EXPECT_EQ(v.get_int("max_seq_len"), 256);
  EXPECT_EQ(v.source("max_seq_len"), OptionSource::kCommandLine);
  EXPECT_EQ(v.get_string("soc_model"), "SM8550");
  EXPECT_EQ(v.source("soc_model"), OptionSource::kConfigFile);
  EXPECT_TRUE(v.was_set("soc_model"));
  EXPECT_FALSE(v.was_set("seed"));  // null keeps the default
}

TEST(OptionValues, ConfigFileErrorsNameTheKey) {
  genai::testing::TempDir dir;
  auto load = [&](const std::string& text) {
    std::ofstream(dir.file("c.json")) << text;
    OptionValues v;
    return input_error([&] { v.load_config_file(dir.file("c.json")); });
  };
  auto m = load(R"({"max_seq_len": 128, "frobnicate": 1})");
  EXPECT_NE(m.find("'frobnicate'"), std::string::npos) << m;
  EXPECT_NE(m.find("c.json"), std::string::npos) << m;
  m = load(R"({"max_seq_len": "long"})");
  EXPECT_NE(m.find("max_seq_len"), std::string::npos) << m;
  EXPECT_NE(load(R"({"max_seq_len": 18446744073709551615})").find("max_seq_len"), std::string::npos);
  EXPECT_NE(load(R"({"max_seq_len": 1.5})").find("max_seq_len"), std::string::npos);
  EXPECT_NE(load(R"({"prompt": [1]})").find("prompt"), std::string::npos);
  EXPECT_NE(load(R"([1, 2])").find("object"), std::string::npos);
  EXPECT_NE(load("{not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(load(R"({"config_file": "x"})").find("nested"), std::string::npos);
  EXPECT_NE(load(R"({"--max_seq_len": 1})").find("unknown option"), std::string::npos);
  OptionValues v;
  EXPECT_NE(input_error([&] { v.load_config_file(dir.file("missing.json")); }).find("cannot open"), std::string::npos);
}

TEST(OptionValues, IgnoredOptionsAreRecorded) {
  OptionValues v;
  v.set("build_folder", std::string("b"));
  v.set("qat", true);
  EXPECT_EQ(v.ignored_options_set(), (std::vector<std::string>{"build_folder", "qat"}));
}

TEST(OptionValues, JsonHasEveryOption) {
  OptionValues v;
  v.set("soc_model", std::string("SM8650"));
  const auto j = v.to_json();
  EXPECT_EQ(j.size(), option_table().size());
  EXPECT_EQ(j["soc_model"], "SM8650");
  EXPECT_TRUE(j["seed"].is_null());
  EXPECT_EQ(j["max_seq_len"], 512);
}

}  // namespace
}  // namespace genai::options
