// Parity of the option table with upstream's llama.py flow (llm_flow.md §1), from a reference
// list written here independently of src/options/option_table.cpp.
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "options/cli_options.h"
#include "options/option_table.h"
#include "support/cli_runner.h"

namespace genai::options {
namespace {

using nlohmann::json;

struct Ref {
  std::string flag;  // upstream spelling without dashes
  std::string type;
  json def;  // null = None
  std::vector<std::string> choices;
};

const std::vector<std::string> kModels = {
    "stories260k", "stories110m", "llama3_2-1b_instruct", "llama3_2-3b_instruct", "codegen2_1b", "gemma-2b",
    "gemma2-2b", "gemma3-1b", "granite_3_3-2b_instruct", "granite_speech_3_3-2b", "phi_4_mini", "qwen2_5-0_5b",
    "qwen2_5-1_5b", "qwen3-0_6b", "qwen3-1_7b", "smollm2_135m", "smollm3-3b", "glm-1_5b", "smolvlm_500m_instruct",
    "internvl3_1b", "gemma4-e2b"};

const std::vector<Ref> kUpstream = {
    // export_utils.setup_common_args_and_variables
    {"config_file", "string", nullptr, {}},
    {"soc_model", "string", nullptr, {}},
    {"build_folder", "string", nullptr, {}},
    {"host", "string", nullptr, {}},
    {"online_prepare", "flag", false, {}},
    {"ip", "string", "", {}},
    {"port", "int", -1, {}},
    {"skip_delegate_node_ids", "string", nullptr, {}},
    {"skip_delegate_node_ops", "string", nullptr, {}},
    {"compile_only", "flag", false, {}},
    {"device", "string", nullptr, {}},
    {"backend", "choice", "htp", {"htp", "gpu", "lpai"}},
    {"shared_buffer", "flag", false, {}},
    {"skip_push", "flag", false, {}},
    {"dump_intermediate_outputs", "flag", false, {}},
    {"profile_level", "int", 0, {"0", "2", "3"}},
    {"enable_x86_64", "flag", false, {}},
    {"ci", "flag", false, {}},
    {"seed", "int", nullptr, {}},
    {"target", "choice", "aarch64-android", {"aarch64-android", "aarch64-oe-linux-gcc9.3", "aarch64-oe-linux-gcc11.2"}},
    {"pre_gen_pte", "string", nullptr, {}},
    {"direct_build_folder", "string", nullptr, {}},
    {"htp_performance_mode", "int", 2, {"0", "1", "2", "3", "4", "5", "6", "7", "8"}},
    // llama.py
    {"artifact", "string", "./llama_qnn", {}},
    {"decoder_model", "choice", nullptr, kModels},
    {"checkpoint", "string", nullptr, {}},
    {"params", "string", nullptr, {}},
    {"tokenizer_bin", "string", nullptr, {}},
    {"tokenizer_model", "string", nullptr, {}},
    {"prompt", "string-list", nullptr, {}},
    {"system_prompt", "string", "", {}},
    {"temperature", "float", 0.8, {}},
    {"dtype-override", "choice", "fp32", {"fp32", "fp16"}},
    {"model_mode", "choice", "hybrid", {"kv", "hybrid", "lookahead"}},
    {"max_context_len", "int", nullptr, {}},
    {"max_seq_len", "int", 512, {}},
    {"prefill_ar_len", "int", 32, {}},
    {"embedding-quantize", "string", nullptr, {}},
    {"ngram", "int", 5, {}},
    {"window", "int", 8, {}},
    {"gcap", "int", 8, {}},
    {"use_attention_sink", "string", nullptr, {}},
    {"audio_path", "string-list", json::array(), {}},
    {"image_path", "string-list", json::array(), {}},
    {"eval_methods", "string-list", json::array({"prompt_eval"}), {"prompt_eval", "tasks_eval", "sqnr_eval"}},
    {"eval_tasks", "string-list", nullptr, {}},
    {"eval_limit", "int", 1, {}},
    {"eval_num_fewshot", "int", nullptr, {}},
    {"calib_tasks", "string-list", nullptr, {}},
    {"calib_limit", "int", 1, {}},
    {"calib_num_fewshot", "int", nullptr, {}},
    {"calib_samples", "string-list", nullptr, {}},
    {"calib_hf_dataset", "string", nullptr, {}},
    {"calib_hf_limit", "int", 1, {}},
    {"batch_size", "int", 1, {}},
    {"qat", "flag", false, {}},
    {"train_config", "string", "train/config/qad.yaml", {}},
    {"lr_config", "string", "train/config/lr_config.yaml", {}},
    {"train_tasks", "string-list", nullptr, {}},
    {"train_limit", "int", 1, {}},
    {"train_hf_dataset", "string", nullptr, {}},
    {"train_hf_limit", "int", 1000, {}},
    {"train_val_ratio", "float", 1.0, {}},
    {"use_fp16", "flag", false, {}},
    {"verbose", "flag", false, {}},
    {"freeze_all_params", "flag", false, {}},
    {"quant_recipe_suggestion", "flag", false, {}},
};

// Upstream short aliases.
const std::map<std::string, std::string> kShortAliases = {
    {"artifact", "a"}, {"dtype-override", "d"}, {"embedding-quantize", "E"}, {"use_fp16", "F"}, {"verbose", "v"}};

// Options we add (not upstream).
const std::set<std::string> kOurs = {"quant_recipe", "quant_block_size", "json", "threads", "top_p",
                                     "max_new_tokens", "eval_text", "lowering", "skip_stages",
                                     "scalar_kernels", "backend_profile", "backend_fuse_kv",
                                     "no_verify", "pte", "tokenizer", "quant_override", "quant_recipe_file",
                                     "seq_mse_candidates", "rotation", "gptq", "chat", "calib_len",
                                     "calib_max_windows", "calib_range", "eval_max_tokens", "eval_on", "gen_tokens",
                                     "qdq", "per_layer", "report", "num_sharding", "lora_adapter", "lora_calib_samples", "lora"};

// Deliberate differences (also listed in docs/options.md):
// - decoder_model and prompt are required upstream; natively the checkpoint identifies the
//   architecture (decoder_model optional) and prompts are only needed when inference runs
//   (PipelineContextBuilder reports a missing prompt), so the table does not mark them required.
// - dtype-override and embedding-quantize are spelled --dtype_override / --embedding_quantize
//   (snake_case like every other option); upstream's spellings stay accepted as aliases.
// - checkpoint keeps its name but also accepts GGUF files and HF folders.
TEST(OptionParity, EveryUpstreamOptionWithSameTypeDefaultAndChoices) {
  ASSERT_EQ(kUpstream.size(), 67u);
  for (const Ref& r : kUpstream) {
    SCOPED_TRACE(r.flag);
    const OptionSpec* s = find_option(r.flag);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->upstream);
    EXPECT_EQ(option_type_name(s->type), r.type);
    EXPECT_EQ(option_value_to_json(s->default_value), r.def);
    EXPECT_EQ(s->choices, r.choices);
    const auto alias = kShortAliases.find(r.flag);
    EXPECT_EQ(s->short_alias, alias == kShortAliases.end() ? "" : alias->second);
    if (r.flag.find('-') != std::string::npos) {
      EXPECT_EQ(s->upstream_spelling, r.flag);
    }
  }
}

TEST(OptionParity, OnlyListedAdditions) {
  std::set<std::string> upstream_names;
  for (const Ref& r : kUpstream) upstream_names.insert(find_option(r.flag)->name);
  std::set<std::string> extra;
  for (const auto& s : option_table()) {
    if (!upstream_names.contains(s.name)) {
      extra.insert(s.name);
      EXPECT_FALSE(s.upstream) << s.name;
    }
  }
  EXPECT_EQ(extra, kOurs);
  EXPECT_EQ(option_table().size(), 67u + kOurs.size());
}

TEST(OptionParity, NamesAreUniqueSnakeCase) {
  std::set<std::string> seen;
  for (const auto& s : option_table()) {
    EXPECT_TRUE(seen.insert(s.name).second) << s.name;
    EXPECT_EQ(s.name.find('-'), std::string::npos) << s.name;
    EXPECT_FALSE(s.help.empty()) << s.name;
    EXPECT_FALSE(s.native_note.empty()) << s.name;
    EXPECT_TRUE(s.scopes & kPipelineScope) << s.name;
  }
}

TEST(OptionParity, OursHaveTheirDefaults) {
  EXPECT_EQ(option_value_to_json(find_option("top_p")->default_value), 0.9);
  // No fixed default: options::effective_lowering picks qnn for a phone program, genai otherwise.
  EXPECT_TRUE(option_value_to_json(find_option("lowering")->default_value).is_null());
  EXPECT_EQ(find_option("quant_recipe")->choices,
            (std::vector<std::string>{"16a16w", "16a8w", "16a4w", "16a4w_block", "8a8w", "8a4w", "fp16"}));
  EXPECT_EQ(find_option("quant_block_size")->choices, (std::vector<std::string>{"16", "32", "64"}));
}

TEST(OptionParity, PipelineHelpListsEveryOption) {
  const auto r = genai::testing::run_genai({"pipeline", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& s : option_table()) EXPECT_NE(r.out.find("--" + s.name), std::string::npos) << s.name;
  EXPECT_NE(r.out.find("-E,--embedding_quantize,--embedding-quantize"), std::string::npos);
}

TEST(OptionParity, CompileHelpShowsCompileOptionsOnly) {
  const auto r = genai::testing::run_genai({"compile", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--soc_model"), std::string::npos);
  EXPECT_NE(r.out.find("--quant_recipe"), std::string::npos);
  EXPECT_EQ(r.out.find("--temperature"), std::string::npos);
  EXPECT_EQ(r.out.find("--prompt"), std::string::npos);
}

// docs/options.md is generated from the table; regenerate with GENAI_UPDATE_DOCS=1.
TEST(OptionParity, DocsMatchTheTable) {
  const std::string path = std::string(GENAI_SOURCE_DIR) + "/docs/options.md";
  const std::string marker = "<!-- table generated from src/options/option_table.cpp -->\n";
  std::ifstream in(path);
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = doc.find(marker);
  ASSERT_NE(at, std::string::npos) << path;
  const std::string expected = doc.substr(0, at + marker.size()) + options_markdown();
  if (std::getenv("GENAI_UPDATE_DOCS")) {
    std::ofstream(path) << expected;
    return;
  }
  EXPECT_EQ(doc, expected) << "run test_options with GENAI_UPDATE_DOCS=1 to regenerate docs/options.md";
}

}  // namespace
}  // namespace genai::options
