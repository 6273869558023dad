#include "pipeline/pipeline_context.h"

#include <type_traits>

#include <gtest/gtest.h>

#include "pipeline/exceptions.h"

namespace genai::pipeline {
namespace {

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigValidationError& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "";
}

TEST(PipelineContext, BuildsWithDefaults) {
  const auto ctx = PipelineContext::builder().with_model("m.gguf").with_soc("SM8650").with_prompt(" Hi ").build();
  EXPECT_EQ(ctx.model_name(), "m.gguf");
  EXPECT_EQ(ctx.soc_model(), "SM8650");
  EXPECT_EQ(ctx.prompt(), std::vector<std::string>{" Hi "});  // unstripped
  EXPECT_EQ(ctx.artifact_dir(), "./genai_artifacts");
  EXPECT_FALSE(ctx.extra_options().was_set("max_seq_len"));
}

TEST(PipelineContext, IsImmutable) {
  static_assert(!std::is_copy_assignable_v<PipelineContext>);
  static_assert(!std::is_move_assignable_v<PipelineContext>);
  static_assert(std::is_copy_constructible_v<PipelineContext>);
}

TEST(PipelineContext, ListsEveryMissingFieldAtOnce) {
  EXPECT_EQ(config_error([] { PipelineContext::builder().build(); }),
            "Cannot build PipelineContext, missing required fields: model_name (use .with_model()), soc_model (use "
            ".with_soc()), prompt (use .with_prompt())");
  EXPECT_EQ(config_error([] { PipelineContext::builder().with_soc("SM8650").build(); }),
            "Cannot build PipelineContext, missing required fields: model_name (use .with_model()), prompt (use "
            ".with_prompt())");
}

TEST(PipelineContext, RejectsBlankPrompts) {
  EXPECT_EQ(config_error([] { PipelineContext::builder().with_prompt(" \t\n"); }), "prompt cannot be empty or blank");
  EXPECT_EQ(config_error([] { PipelineContext::builder().with_prompt(""); }), "prompt cannot be empty or blank");
  EXPECT_EQ(config_error([] { PipelineContext::builder().with_prompt(std::vector<std::string>{"", "  "}); }),
            "prompt list cannot be empty (all entries are blank or list is empty)");
  EXPECT_NE(config_error([] { PipelineContext::builder().with_prompt(std::vector<std::string>{}); }), "");
}

TEST(PipelineContext, KeepsNonBlankPromptsInOrder) {
  const auto ctx = PipelineContext::builder()
                       .with_model("m")
                       .with_soc("SM8750")
                       .with_prompt(std::vector<std::string>{"a", " ", "b ", ""})
                       .with_artifact_dir("/tmp/out")
                       .build();
  EXPECT_EQ(ctx.prompt(), (std::vector<std::string>{"a", "b "}));
  EXPECT_EQ(ctx.artifact_dir(), "/tmp/out");
}

TEST(PipelineContext, ExtraOptionsAreCopied) {
  options::OptionValues v;
  v.set("max_seq_len", int64_t{64});
  auto builder = PipelineContext::builder();
  builder.with_model("m").with_soc("SM8650").with_prompt("p").with_extra_options(v);
  v.set("max_seq_len", int64_t{99});
  EXPECT_EQ(builder.build().extra_options().get_int("max_seq_len"), 64);
}

}  // namespace
}  // namespace genai::pipeline
