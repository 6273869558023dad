// --lora_adapter end to end on two families (the second in the long sweep): tiny Hugging Face folders from `genai synth`, two
// PEFT adapters each (tests/python/lora_reference.py: rank 4 on q/v, rank 8 with rsLoRA on
// k/o/gate/down), compiled into one program. Without --lora the program gives the tokens of a
// compile without adapters; each adapter's tokens differ from the base's; switching adapters
// between turns (A -> B -> none -> A) gives each run's tokens; the program stores the base's
// data once; the inputs the program cannot take are exit 2 naming the option or the file; and
// `genai eval --lora` measures an adapter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "support/cli_json.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai::testing {
namespace {

using json = nlohmann::json;

// Named data key -> size, from `genai inspect --json`.
std::map<std::string, int64_t> named_data(const std::string& pte) {
  const json j = run_genai_json({"inspect", pte, "--json"});
  std::map<std::string, int64_t> out;
  for (const auto& d : j["named_data"]) out[d["key"].get<std::string>()] = d["size"].get<int64_t>();
  return out;
}

// A tiny Hugging Face folder of `arch` in dir/model and its two PEFT adapters in dir/alpha and
// dir/beta (lora_reference.py). Returns the model folder.
std::string adapted_model(const TempDir& dir, const std::string& arch) {
  const std::string model = dir.file("model");
  const auto synth = run_genai({"synth", "--arch", arch, "--format", "hf", "--seed", "3", "--out", model});
  EXPECT_EQ(synth.exit_code, 0) << synth.err;
  const auto py = run_process({"python3", python_script("lora_reference.py"), "--adapters", model, dir.path()});
  EXPECT_EQ(py.exit_code, 0) << py.err;
  return model;
}

void adapters_end_to_end(const std::string& arch) {
  TempDir dir;
  const std::string model = adapted_model(dir, arch);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::vector<std::string> shape = {"--soc_model", "SM8650", "--enable_x86_64", "--quant_recipe", "16a8w",
                                          "--max_seq_len", "96", "--prefill_ar_len", "16"};
  const std::string base = dir.file("base"), adapted = dir.file("adapted");
  ASSERT_EQ(run_genai(std::vector<std::string>{"compile", "--checkpoint", model, "-a", base} + shape).exit_code, 0);
  const auto compiled = run_genai(std::vector<std::string>{"compile", "--checkpoint", model, "-a", adapted, "--lora_adapter",
                                          "alpha=" + dir.file("alpha"), "--lora_adapter", "beta=" + dir.file("beta")} + shape);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;

  const std::vector<std::string> prompt = {"--prompt", "Once upon a time", "--temperature", "0", "--max_new_tokens", "12",
                                           "--json"};
  auto tokens = [&](const std::string& dir_path, std::vector<std::string> extra) {
    return run_genai_json(std::vector<std::string>{"run", "-a", dir_path} + prompt + extra)["tokens"];
  };
  const json plain = tokens(base, {});
  ASSERT_EQ(plain.size(), 12u);
  EXPECT_EQ(tokens(adapted, {}), plain);  // no adapter: the base model exactly
  const json alpha = tokens(adapted, {"--lora", "alpha"}), beta = tokens(adapted, {"--lora", "beta"});
  EXPECT_NE(alpha, plain);
  EXPECT_NE(beta, plain);
  EXPECT_NE(alpha, beta);

  // A -> B -> none -> A in one process: each segment as its own run.
  const json switched = run_genai_json({"run", "-a", adapted, "--lora", "alpha", "--prompt", "Once upon a time", "--prompt",
                                        "/lora beta", "--prompt", "Once upon a time", "--prompt", "/lora none", "--prompt",
                                        "Once upon a time", "--prompt", "/lora alpha", "--prompt", "Once upon a time",
                                        "--temperature", "0", "--max_new_tokens", "12", "--json"});
  json want = json::array();
  for (const json* part : {&alpha, &beta, &plain, &alpha})
    for (const auto& t : *part) want.push_back(t);
  EXPECT_EQ(switched["tokens"], want);

  // The base's data once: every named data of the base program, the same size, and the adapters'
  // own bytes beside them.
  const auto base_data = named_data(base + "/text_decoder.pte");
  const auto adapted_data = named_data(adapted + "/text_decoder.pte");
  int64_t base_bytes = 0, adapted_bytes = 0;
  for (const auto& [key, size] : base_data) {
    base_bytes += size;
    ASSERT_TRUE(adapted_data.count(key)) << key;
    EXPECT_EQ(adapted_data.at(key), size) << key;
  }
  for (const auto& [key, size] : adapted_data) adapted_bytes += size;
  EXPECT_GT(adapted_bytes, base_bytes);
  std::printf("%s: named data %lld bytes without adapters, %lld with two\n", arch.c_str(),
              static_cast<long long>(base_bytes), static_cast<long long>(adapted_bytes));
  const json manifest = run_genai_json({"inspect", adapted + "/text_decoder.pte", "--json"});
  std::vector<std::string> methods;
  for (const auto& m : manifest["methods"]) methods.push_back(m["name"].get<std::string>());
  for (const char* m : {"kv_forward_lora_alpha", "prefill_forward_lora_alpha", "kv_forward_lora_beta", "prefill_forward_lora_beta"})
    EXPECT_NE(std::find(methods.begin(), methods.end(), m), methods.end()) << m;

  // inspect lists the adapters: names, ranks, target modules.
  const json listed = manifest["lora_adapters"];
  ASSERT_EQ(listed.size(), 2u) << manifest.dump();
  auto modules = [](const json& a) {
    auto m = a["target_modules"].get<std::vector<std::string>>();
    std::sort(m.begin(), m.end());
    return m;
  };
  EXPECT_EQ(listed[0]["name"], "alpha");
  EXPECT_EQ(listed[0]["rank"], 4);
  EXPECT_EQ(modules(listed[0]), (std::vector<std::string>{"q_proj", "v_proj"}));
  EXPECT_EQ(listed[1]["name"], "beta");
  EXPECT_EQ(listed[1]["rank"], 8);
  EXPECT_EQ(modules(listed[1]), (std::vector<std::string>{"down_proj", "gate_proj", "k_proj", "o_proj"}));
  EXPECT_EQ(listed[1]["rslora"], true);

  // bench runs an adapter and reports the cost of a switch.
  const json bench = run_genai_json({"bench", "-a", adapted, "--lora", "beta", "--pp", "8", "--tg", "4", "--reps", "1", "--json"});
  EXPECT_EQ(bench["lora"], "beta");
  EXPECT_GE(bench["lora_switch_ms"].get<double>(), 0.0);

  // An adapter calibrated on its own text: its methods change, the other's and the base's do not.
  const std::string text = dir.file("alpha_calibration.txt");
  write_file(text, "The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs. "
                   "How vexingly quick daft zebras jump! Sphinx of black quartz, judge my vow.");
  const std::string own = dir.file("own");
  const auto own_compile = run_genai(std::vector<std::string>{"compile", "--checkpoint", model, "-a", own, "--lora_adapter",
                                                              "alpha=" + dir.file("alpha"), "--lora_adapter",
                                                              "beta=" + dir.file("beta"), "--lora_calib_samples",
                                                              "alpha=" + text} +
                                     shape);
  ASSERT_EQ(own_compile.exit_code, 0) << own_compile.err;
  EXPECT_EQ(tokens(own, {}), plain);
  EXPECT_EQ(tokens(own, {"--lora", "beta"}), beta);
  EXPECT_EQ(named_data(own + "/text_decoder.pte"), adapted_data);  // the same weights
  EXPECT_NE(read_text(own + "/text_decoder.pte"), read_text(adapted + "/text_decoder.pte"));  // alpha's encodings

  // Inputs the program cannot take: exit 2 naming what is wrong.
  const auto no_such = run_genai(std::vector<std::string>{"compile", "--checkpoint", model, "-a", dir.file("z"),
                                                          "--lora_adapter", "alpha=" + dir.file("alpha"),
                                                          "--lora_calib_samples", "gamma=" + text} +
                                 shape);
  EXPECT_EQ(no_such.exit_code, 2);
  EXPECT_NE(no_such.err.find("no --lora_adapter is named gamma"), std::string::npos) << no_such.err;
  const auto unknown = run_genai(std::vector<std::string>{"run", "-a", adapted, "--lora", "gamma"} + prompt);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no LoRA adapter gamma (adapters: alpha, beta)"), std::string::npos) << unknown.err;
  const auto bad_name = run_genai(std::vector<std::string>{"compile", "--checkpoint", model, "-a", dir.file("x"), "--lora_adapter",
                                          "a-b=" + dir.file("alpha")} + shape);
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_NE(bad_name.err.find("--lora_adapter"), std::string::npos) << bad_name.err;
  const auto missing = run_genai(std::vector<std::string>{"compile", "--checkpoint", model, "-a", dir.file("y"), "--lora_adapter",
                                         "a=" + dir.file("nowhere")} + shape);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find(dir.file("nowhere") + "/adapter_config.json"), std::string::npos) << missing.err;
}

// The second family's run is the long sweep's: the switching is the scheduler's, the same for
// every family, and LoraParity holds both families' adapters to PEFT and to their QDQ reference
// in every run.
TEST(LoraCli, AdaptersSwitchBetweenTurnsAndTheBaseStaysExact) { adapters_end_to_end("llama"); }
TEST(LoraCli, LongQwen2AdaptersSwitchBetweenTurnsAndTheBaseStaysExact) { adapters_end_to_end("qwen2"); }

// `genai eval --lora`: the adapter measured against its own float model. Its compiled methods and
// its QDQ reference give the same figures (the program equals the reference code for code), and
// its float model is not the base's.
TEST(LoraEval, AnAdapterIsMeasuredByItsMethodsAsByItsReference) {
  TempDir dir;
  const std::string model = adapted_model(dir, "llama");
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::vector<std::string> eval = {"eval", "--checkpoint", model, "--quant_recipe", "16a8w", "--max_context_len", "48",
                                         "--eval_max_tokens", "192", "--calib_len", "24", "--eval_methods", "sqnr_eval",
                                         "--json"};
  const std::vector<std::string> adapters = {"--lora_adapter", "alpha=" + dir.file("alpha"), "--lora_adapter",
                                             "beta=" + dir.file("beta")};
  const json base = run_genai_json(eval);
  const json program = run_genai_json(eval + adapters + std::vector<std::string>{"--lora", "alpha", "--eval_on", "program"});
  const json reference = run_genai_json(eval + adapters + std::vector<std::string>{"--lora", "alpha", "--eval_on", "qdq"});
  EXPECT_EQ(program["lora"], "alpha");
  EXPECT_FALSE(base.contains("lora"));
  EXPECT_EQ(program["eval_tokens"], base["eval_tokens"]);
  EXPECT_DOUBLE_EQ(program["sqnr_db"].get<double>(), reference["sqnr_db"].get<double>());
  EXPECT_DOUBLE_EQ(program["perplexity"]["quantized"].get<double>(), reference["perplexity"]["quantized"].get<double>());
  EXPECT_EQ(program["top1_agreement"], reference["top1_agreement"]);
  EXPECT_GT(program["sqnr_db"].get<double>(), 15.0);
  const double adapted = program["perplexity"]["float"].get<double>(), plain = base["perplexity"]["float"].get<double>();
  EXPECT_GT(std::abs(adapted - plain), 1e-3 * plain) << adapted << " vs " << plain;

  const auto unknown = run_genai(eval + adapters + std::vector<std::string>{"--lora", "gamma"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no --lora_adapter is named gamma (adapters: alpha, beta)"), std::string::npos) << unknown.err;
  const auto unnamed = run_genai(eval + adapters);
  EXPECT_EQ(unnamed.exit_code, 2);
  EXPECT_NE(unnamed.err.find("--lora NAME"), std::string::npos) << unnamed.err;
}

}  // namespace
}  // namespace genai::testing
