// `genai run`: generate text with the compiled programs of an artifact dir (-a, on this machine or
// on a phone through adb with --device), with one compiled program alone (--pte FILE --tokenizer
// FILE: no manifest, as upstream's llama runner runs a .pte), or with the float reference forward
// of a checkpoint. On this machine it is the pipeline's inference stage
// (orchestrator::pipeline_run_from_options): -a DIR runs it on prebuilt programs (as --pre_gen_pte
// DIR), --pte on the lone program, --checkpoint after model_preparation
// on the prepared float model (quantization and compilation skipped). This file checks the run's
// own option rules, forwards --device runs, and prints the result as it always has.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <unistd.h>
#include <optional>

#include <nlohmann/json.hpp>

#include "backends/execution_options.h"
#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "llm/generation.h"
#include "llm/generation_report.h"
#include "options/cli_options.h"
#include "options/validate.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/context_from_options.h"
#include "orchestrator/genai_pipeline.h"
#include "orchestrator/stage_settings.h"
#include "pipeline/engine_proxy.h"
#include "pipeline/stage_names.h"
#include "runtime/load_verification.h"
#include "runtime/device_runner.h"
#include "target/backend_type.h"

namespace genai::cli {
namespace {

// The run command's view of the option table (src/options): what it reads and how.
struct RunArgs {
  std::string checkpoint, tokenizer_path, system_prompt;
  std::vector<std::string> prompts;
  int64_t max_new_tokens = 0;
  float temperature = 0.8f, top_p = 0.9f;
  uint64_t seed = 0;
  int threads = 0;
  bool json = false;
  // Compiled path (-a): the artifact dir, and where it runs (--device / --host: a phone via adb).
  std::string artifact_dir, device, host, runner_binary;
  std::string lone_program;  // --pte FILE: a program without its artifact dir
  bool skip_push = false;
  std::optional<int64_t> seed_given;
  bool budget_given = false;  // --max_new_tokens or --max_seq_len set
  bool chat = false;          // --chat: turns from stdin

  static RunArgs from(const options::OptionValues& v, const std::string& runner_binary) {
    options::validate(v);
    RunArgs a;
    // --pre_gen_pte DIR is upstream's spelling of "run these prebuilt programs".
    if (v.has_value("pte")) {
      if (v.was_set("artifact"))
        throw_input_error("--pte FILE and -a/--artifact DIR exclude each other: run one program file without a "
                          "manifest, or the artifact dir");
      if (v.has_value("device")) throw_input_error("--device runs an artifact dir on a phone: give -a/--artifact DIR, not --pte");
      if (!options::tokenizer_file_option(v))
        throw_input_error("--pte {} needs --tokenizer FILE: a program without its artifact dir has no manifest naming "
                          "a tokenizer",
                          v.get_string("pte"));
      a.lone_program = v.get_string("pte");
    } else if (v.was_set("artifact") || v.has_value("pre_gen_pte")) {
      a.artifact_dir = v.was_set("artifact") ? v.get_string("artifact") : v.get_string("pre_gen_pte");
      a.device = v.get_optional_string("device").value_or("");
      a.host = v.get_optional_string("host").value_or("");
      a.skip_push = v.get_flag("skip_push");
      a.runner_binary = runner_binary;
      if (a.device.empty() && (!a.host.empty() || !runner_binary.empty() || a.skip_push))
        throw_input_error("--host, --runner_binary and --skip_push go with --device SERIAL (a phone through adb)");
    } else if (!v.has_value("checkpoint")) {
      throw_input_error(
          "genai run needs -a/--artifact DIR (compiled programs), --pte FILE --tokenizer FILE (one program without "
          "manifest) or --checkpoint (GGUF file, Hugging Face folder or llama2.c .bin)");
    } else if (v.has_value("device")) {
      throw_input_error("--device runs compiled programs: give -a/--artifact DIR");
    }
    a.chat = v.get_flag("chat");
    if (a.chat && v.get_flag("json"))
      throw_input_error("--chat streams each answer to the terminal; --json prints one result: give one of them");
    if (a.chat && v.has_value("device")) throw_input_error("--chat runs on this machine; --device runs one prompt list on a phone");
    if (!v.has_value("prompt") && !a.chat) throw_input_error("genai run needs --prompt (or --chat: prompts from stdin)");
    // What the inference stage reads, as its settings (orchestrator/stage_settings.h): the same
    // values the device's run is given.
    const pipeline::InferenceSettings s = orchestrator::resolve_stage_settings(v).inference;
    const pipeline::GraphShapeSettings& g = s.graphs;
    a.checkpoint = v.get_optional_string("checkpoint").value_or("");
    a.tokenizer_path = s.tokenizer_file.value_or("");
    if (v.has_value("prompt")) a.prompts = v.get_list("prompt");
    a.system_prompt = s.system_prompt;
    // Without --max_new_tokens a turn may generate up to --max_seq_len tokens (upstream's seq_len
    // bound); the context length stops it earlier when full.
    a.max_new_tokens = s.max_new_tokens.value_or(g.max_seq_len.value);
    a.budget_given = s.max_new_tokens.has_value() || g.max_seq_len.given;
    if (g.model_mode.given && !g.max_seq_len.given) a.max_new_tokens = std::min(a.max_new_tokens, g.effective_max_context_len());
    a.temperature = static_cast<float>(s.temperature);
    a.top_p = static_cast<float>(s.top_p);
    a.seed_given = s.seed;
    a.seed = static_cast<uint64_t>(a.seed_given.value_or(0));
    a.threads = static_cast<int>(v.get_int("threads"));
    backends::apply_execution_options(v);
    runtime::set_load_verification(!v.get_flag("no_verify"));
    a.json = v.get_flag("json");
    // Bad sampling options stop the run before anything is loaded.
    SamplerConfig{a.temperature, a.top_p, a.seed}.validate();
    if (a.max_new_tokens < 0) throw_input_error("--max_new_tokens must be >= 0, got {}", a.max_new_tokens);
    if (!a.artifact_dir.empty() || !a.lone_program.empty()) {
      const char* given = a.lone_program.empty() ? "-a" : "--pte";
      for (const char* fixed : {"max_context_len", "prefill_ar_len"})
        if (v.was_set(fixed)) log::warn("--{} has no effect with {}: the compiled programs fix it", fixed, given);
      // --model_mode picks the decoding on compiled programs: lookahead (its decode graph must hold
      // the tree) or plain; the graphs themselves are fixed.
      if (v.was_set("model_mode") && v.get_string("model_mode") == "kv")
        log::warn("--model_mode kv with {}: the compiled programs fix the graphs; decoding is plain", given);
      // The checkpoint serves only the float and QDQ sides of --eval_methods tasks_eval / sqnr_eval.
      const auto methods = v.get_list("eval_methods");
      const bool compares = std::any_of(methods.begin(), methods.end(),
                                        [](const std::string& m) { return m == "tasks_eval" || m == "sqnr_eval"; });
      if (v.was_set("checkpoint") && !compares)
        log::warn("--checkpoint has no effect with {} unless --eval_methods names tasks_eval or sqnr_eval", given);
    } else if (!v.was_set("model_mode") && (v.was_set("max_context_len") || v.was_set("prefill_ar_len"))) {
      // (With --model_mode the inference stage runs the checkpoint's static graphs of that shape.)
      throw_input_error("--max_context_len and --prefill_ar_len shape the static graphs: give --model_mode kv|hybrid too");
    }
    return a;
  }
};

// The reply (streamed already unless --json) and the stats, the same for every runner; with
// compiled programs, --json also says where they came from (`program`: the file, its manifest or
// null for a lone --pte program, and what the load verified); `eval` holds --eval_methods' results.
void report(const GenerationResult& result, bool json, const nlohmann::json& program_source, const nlohmann::json& eval) {
  const double rss = peak_rss_mb();
  if (json) {
    nlohmann::json j = generation_json(result, rss);
    if (!program_source.is_null()) j["program"] = program_source;
    if (!eval.is_null()) j["eval"] = eval;
    // A random or badly-behaved model may emit byte tokens that are not valid UTF-8: replace them
    // (U+FFFD) rather than fail after all the work.
    const std::string out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", out.c_str());
  } else {
    std::fflush(stdout);  // the reply (ended by the stage's newline) before the stats, on stderr
    log::info("{}", format_stats(result.stats, rss));
  }
}

// --chat's prompts: one line of stdin each, after a "> " cue when stdin is a terminal; end of
// input (Ctrl-D) ends the conversation.
orchestrator::PromptSource stdin_prompts() {
  const bool terminal = isatty(STDIN_FILENO) != 0;
  return [terminal]() -> std::optional<std::string> {
    if (terminal) {
      std::fputs("> ", stdout);
      std::fflush(stdout);
    }
    std::string line;
    if (!std::getline(std::cin, line)) {
      if (terminal) std::fputs("\n", stdout);
      return std::nullopt;
    }
    return line;
  };
}

TextSink stdout_sink(bool json) {
  if (json) return {};
  return [](std::string_view piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
}

// The same options, for the device's `genai run` (values attached with '=' so a prompt that
// starts with '-' stays a value).
std::vector<std::string> forwarded_run_args(const RunArgs& a) {
  std::vector<std::string> args;
  for (const auto& p : a.prompts) args.push_back("--prompt=" + p);
  if (!a.system_prompt.empty()) args.push_back("--system_prompt=" + a.system_prompt);
  if (a.budget_given) args.push_back(fmt::format("--max_new_tokens={}", a.max_new_tokens));
  args.push_back(fmt::format("--temperature={}", a.temperature));
  args.push_back(fmt::format("--top_p={}", a.top_p));
  if (a.seed_given) args.push_back(fmt::format("--seed={}", *a.seed_given));
  if (a.threads > 0) args.push_back(fmt::format("--threads={}", a.threads));
  if (!a.tokenizer_path.empty()) args.push_back("--tokenizer_model=" + std::filesystem::path(a.tokenizer_path).filename().string());
  return args;
}

int run_on_device(const RunArgs& a, runtime::ArtifactDir dir) {
  runtime::DeviceRunRequest req;
  req.target = {a.device, a.host};
  if (!a.tokenizer_path.empty()) req.extra_files.push_back(std::filesystem::absolute(a.tokenizer_path));
  req.artifacts = std::move(dir);
  req.runner_binary = runtime::resolve_runner_binary(a.runner_binary);
  req.run_args = forwarded_run_args(a);
  req.skip_push = a.skip_push;
  log::info("running {} on device {} ({})", req.artifacts.dir.string(), a.device, runtime::device_workspace(req.artifacts));
  const runtime::DeviceRunResult r = runtime::run_on_device(req);
  const nlohmann::json& j = r.output;
  if (a.json) {
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("%s\n", j.value("text", std::string()).c_str());
  std::fflush(stdout);
  const nlohmann::json& st = j["stats"];
  log::info("device {}: {} prompt tokens, {} generated; load {:.0f} ms, time to first token {:.1f} ms, prefill {:.1f} tok/s, "
            "decode {:.1f} tok/s, peak RSS {:.1f} MiB",
            a.device, st.value("prompt_tokens", int64_t{0}), st.value("generated_tokens", int64_t{0}),
            st.value("load_ms", 0.0), st.value("ttft_ms", 0.0), st.value("prefill_tok_s", 0.0),
            st.value("decode_tok_s", 0.0), j.value("peak_rss_mb", 0.0));
  return 0;
}

int run(const RunArgs& a, const options::OptionValues& given) {
  if (a.threads > 0) ThreadPool::set_global_threads(a.threads);
  if (!a.device.empty()) return run_on_device(a, runtime::open_artifact_dir(a.artifact_dir));

  options::OptionValues values = given;
  orchestrator::SkipPlan command_skips;
  if (!a.artifact_dir.empty()) {
    values.set("pre_gen_pte", a.artifact_dir, options::OptionSource::kCommandLine);  // -a DIR: its programs
  } else if (!a.lone_program.empty()) {
    // --pte FILE: the pipeline skips every stage but inference (orchestrator/stage_plan.h).
  } else {
    for (auto stage : {pipeline::kStageQuantization, pipeline::kStageCompilation})
      command_skips.emplace(std::string(stage), "genai run --checkpoint: the float model");
  }
  const orchestrator::PipelineRun plan = orchestrator::pipeline_run_from_options(values, command_skips);

  std::optional<GenerationResult> generated;
  orchestrator::StrategyRegistry registry;
  orchestrator::BuiltinStrategyOptions builtin;
  builtin.on_text = stdout_sink(a.json);
  builtin.on_generation = [&generated](const GenerationResult& r) { generated = r; };
  if (a.chat) builtin.next_prompt = stdin_prompts();
  orchestrator::register_builtin_strategies(registry, builtin);
  const pipeline::EngineProxy proxy({}, plan.backend);
  const orchestrator::PipelineResult result =
      orchestrator::GenAIPipeline::from_proxy(proxy, registry, plan.skip).invoke(plan.context);
  if (!generated) throw_failure("genai run: the inference stage produced no result");
  // Loading a checkpoint is model_preparation's work; the stats count it as load time, as always.
  generated->stats.load_ms += 1000.0 * result.stage(pipeline::kStageModelPreparation).seconds;
  const nlohmann::json& notes = result.stage(pipeline::kStageInference).notes;
  auto note = [&notes](const char* key) { return notes.contains(key) ? notes[key] : nlohmann::json(); };
  report(*generated, a.json, note("program_source"), note("eval"));
  return 0;
}

const CommandRegistration kRun{
    "run",
    "Generate text: compiled programs of an artifact dir (-a; --device SERIAL runs them on a phone via adb), or a "
    "checkpoint's float reference forward / static graphs (--model_mode)",
    [](CLI::App& sub) -> CommandAction {
      auto values = std::make_shared<options::OptionValues>(options::kRunScope);
      options::add_options_to(sub, *values, options::kRunScope);
      auto runner = std::make_shared<std::string>();
      sub.add_option("--runner_binary", *runner,
                     "With --device: the aarch64 genai binary pushed to the phone (default: genai-aarch64 next to genai, else "
                     "build-aarch64/genai from scripts/build_aarch64.sh)");
      return [values, runner] { return run(RunArgs::from(*values, *runner), *values); };
    }};

}  // namespace
}  // namespace genai::cli
