// add_options_to in-process: names, aliases, types, scopes and error mapping of the derived CLI.
#include "options/cli_options.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "options/option_table.h"

namespace genai::options {
namespace {

void parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  app.parse(args);
}

TEST(AddOptions, ParsesEveryKindAndAlias) {
  CLI::App app;
  OptionValues v(kPipelineScope);
  add_options_to(app, v, kPipelineScope);
  parse(app, {"--soc-model", "SM8650", "-a", "out", "-d", "fp16", "-F", "--max_seq_len", "256", "--top_p", "0.5",
              "--prompt", "one", "two", "--eval_methods", "prompt_eval", "sqnr_eval", "-E", "4,32",
              "--dtype-override", "fp16", "--online_prepare=false"});
  EXPECT_EQ(v.get_string("soc_model"), "SM8650");
  EXPECT_EQ(v.get_string("artifact"), "out");
  EXPECT_EQ(v.get_string("dtype_override"), "fp16");
  EXPECT_TRUE(v.get_flag("use_fp16"));
  EXPECT_EQ(v.get_int("max_seq_len"), 256);
  EXPECT_DOUBLE_EQ(v.get_float("top_p"), 0.5);
  EXPECT_EQ(v.get_list("prompt"), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(v.get_list("eval_methods"), (std::vector<std::string>{"prompt_eval", "sqnr_eval"}));
  EXPECT_EQ(v.get_string("embedding_quantize"), "4,32");
  EXPECT_FALSE(v.get_flag("online_prepare"));
  EXPECT_TRUE(v.was_set("online_prepare"));
  EXPECT_FALSE(v.was_set("temperature"));
}

TEST(AddOptions, BadValuesAreValidationErrors) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--max_seq_len", "many"},
                                        {"--backend", "dsp"},
                                        {"--soc_model", "SM0000"},
                                        {"--profile_level", "1"},
                                        {"--quant_recipe", "3a3w"},
                                        {"--config_file", "/nonexistent/cfg.json"}}) {
    CLI::App app;
    OptionValues v;
    add_options_to(app, v, kCompileScope);
    EXPECT_THROW(parse(app, args), CLI::ValidationError) << args[0];
  }
}

TEST(AddOptions, ScopeHidesButAccepts) {
  CLI::App app;
  OptionValues v(kRunScope);
  add_options_to(app, v, kRunScope);
  EXPECT_EQ(v.scope(), kRunScope);
  const std::string help = app.help();
  EXPECT_NE(help.find("--temperature"), std::string::npos);
  EXPECT_EQ(help.find("--calib_samples"), std::string::npos);
  parse(app, {"--calib_samples", "a.json"});
  EXPECT_EQ(v.get_list("calib_samples"), std::vector<std::string>{"a.json"});
  // Every table option is an option of every command.
  for (const auto& s : option_table()) EXPECT_NE(app.get_option_no_throw("--" + s.name), nullptr) << s.name;
}

TEST(AddOptions, HelpLineShowsChoicesDefaultAndIgnored) {
  EXPECT_NE(option_help_line(*find_option("backend")).find("{htp,gpu,lpai} [default: htp]"), std::string::npos);
  EXPECT_NE(option_help_line(*find_option("build_folder")).find("ignored natively"), std::string::npos);
  EXPECT_NE(options_markdown().find("| --quant_recipe * |"), std::string::npos);
}

// `genai eval` reads some table options with a default, help and choices of its own; the others
// keep the table's, and the pipeline sees the table's everywhere.
TEST(AddOptions, EvalScopeHasItsOwnDefaultsAndChoices) {
  OptionValues eval(kEvalScope), pipeline(kPipelineScope);
  EXPECT_EQ(eval.get_int("max_context_len"), 256);
  EXPECT_FALSE(pipeline.has_value("max_context_len"));
  EXPECT_EQ(eval.get_list("eval_methods"), (std::vector<std::string>{"sqnr_eval", "prompt_eval"}));
  EXPECT_EQ(pipeline.get_list("eval_methods"), std::vector<std::string>{"prompt_eval"});
  EXPECT_FALSE(eval.has_value("artifact"));
  EXPECT_EQ(pipeline.get_string("artifact"), "./llama_qnn");
  EXPECT_EQ(eval.get_int("calib_len"), pipeline.get_int("calib_len"));
  EXPECT_THROW(eval.set("eval_methods", std::vector<std::string>{"tasks_eval"}), InputError);
  pipeline.set("eval_methods", std::vector<std::string>{"tasks_eval"});

  CLI::App app;
  OptionValues v(kEvalScope);
  add_options_to(app, v, kEvalScope);
  const std::string help = app.help();
  EXPECT_NE(help.find("Evaluation window and decode graph context [default: 256]"), std::string::npos);
  EXPECT_NE(help.find("{sqnr_eval,prompt_eval}"), std::string::npos);
  EXPECT_NE(help.find("--per_layer"), std::string::npos);
  EXPECT_EQ(help.find("--soc_model"), std::string::npos);
  EXPECT_THROW(parse(app, {"--eval_on", "interpreter"}), CLI::ValidationError);
}

}  // namespace
}  // namespace genai::options
