// `genai run`: generate text with the float reference forward of a checkpoint (no compilation).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "llm/generation.h"
#include "llm/generation_report.h"
#include "llm/graph_decoder.h"
#include "options/cli_options.h"
#include "options/validate.h"
#include "llm/reference_session.h"
#include "model/model.h"

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
  // Static-graph path (the graphs a target runs), executed by the float interpreter; empty: the
  // float reference forward.
  std::string model_mode;
  int64_t max_context_len = 0, prefill_ar_len = 32;

  static RunArgs from(const options::OptionValues& v) {
    options::validate(v);
    RunArgs a;
    if (!v.has_value("checkpoint")) throw_input_error("genai run needs --checkpoint (GGUF file, Hugging Face folder or llama2.c .bin)");
    if (!v.has_value("prompt")) throw_input_error("genai run needs --prompt");
    if (v.has_value("tokenizer_model") && v.has_value("tokenizer_bin"))
      throw_input_error("--tokenizer_model and --tokenizer_bin exclude each other");
    a.checkpoint = v.get_string("checkpoint");
    a.tokenizer_path = v.get_optional_string("tokenizer_model").value_or(v.get_optional_string("tokenizer_bin").value_or(""));
    a.prompts = v.get_list("prompt");
    a.system_prompt = v.get_string("system_prompt");
    // Without --max_new_tokens a turn may generate up to --max_seq_len tokens (upstream's seq_len
    // bound); the context length stops it earlier when full.
    a.max_new_tokens = v.get_optional_int("max_new_tokens").value_or(v.get_int("max_seq_len"));
    if (v.was_set("model_mode") && !v.was_set("max_seq_len"))
      a.max_new_tokens = std::min(a.max_new_tokens, options::effective_max_context_len(v));
    a.temperature = static_cast<float>(v.get_float("temperature"));
    a.top_p = static_cast<float>(v.get_float("top_p"));
    a.seed = static_cast<uint64_t>(v.get_optional_int("seed").value_or(0));
    a.threads = static_cast<int>(v.get_int("threads"));
    a.json = v.get_flag("json");
    if (v.was_set("model_mode")) {
      a.model_mode = v.get_string("model_mode");
      a.max_context_len = options::effective_max_context_len(v);
      a.prefill_ar_len = v.get_int("prefill_ar_len");
    } else if (v.was_set("max_context_len") || v.was_set("prefill_ar_len")) {
      throw_input_error("--max_context_len and --prefill_ar_len shape the static graphs: give --model_mode kv|hybrid too");
    }
    return a;
  }
};

int run(const RunArgs& a) {
  if (a.threads > 0) ThreadPool::set_global_threads(a.threads);
  GenerationOptions options;
  options.prompts = a.prompts;
  options.system_prompt = a.system_prompt;
  options.max_new_tokens = a.max_new_tokens;
  options.sampler = SamplerConfig{a.temperature, a.top_p, a.seed};
  options.sampler.validate();
  if (options.max_new_tokens < 0) throw_input_error("--max_new_tokens must be >= 0, got {}", options.max_new_tokens);

  const auto t0 = std::chrono::steady_clock::now();
  LoadOptions load;
  load.tokenizer_path = a.tokenizer_path;
  const auto model_ptr = std::make_shared<const Model>(load_model(a.checkpoint, load));
  const Model& model = *model_ptr;
  if (!model.tokenizer)
    throw_input_error("{}: no tokenizer in the checkpoint; pass --tokenizer_model or --tokenizer_bin", a.checkpoint);
  std::unique_ptr<DecoderSession> session;
  if (a.model_mode.empty()) {
    session = std::make_unique<ReferenceSession>(model);
  } else {
    GraphSessionOptions g;
    g.mode = graph::model_mode_from_name(a.model_mode);
    g.max_context_len = a.max_context_len > 0 ? a.max_context_len : std::min<int64_t>(model.config.max_positions, 512);
    g.prefill_ar_len = a.prefill_ar_len;
    session = make_graph_session(model_ptr, g);
  }
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  log::info("loaded {} ({} layers, dim {}, vocab {}, chat format {}) in {:.0f} ms", a.checkpoint, model.config.n_layers,
            model.config.dim, model.config.vocab_size, chat_format_name(model.chat_format), load_ms);

  TextSink sink;
  if (!a.json)
    sink = [](std::string_view piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
  GenerationResult result = generate(*session, *model.tokenizer, model.chat_format, options, sink);
  result.stats.load_ms = load_ms;
  const double rss = peak_rss_mb();
  if (a.json) {
    // A random or badly-behaved model may emit byte tokens that are not valid UTF-8: replace them
    // (U+FFFD) rather than fail after all the work.
    const std::string out = generation_json(result, rss).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", out.c_str());
  } else {
    std::printf("\n");
    std::fflush(stdout);  // the reply before the stats, which go to stderr
    log::info("{}", format_stats(result.stats, rss));
  }
  return 0;
}

const CommandRegistration kRegistration{
    "run", "Generate text from a checkpoint: the float reference forward, or its static graphs (--model_mode)",
    [](CLI::App& sub) -> CommandAction {
      auto values = std::make_shared<options::OptionValues>(options::kRunScope);
      options::add_options_to(sub, *values, options::kRunScope);
      return [values] { return run(RunArgs::from(*values)); };
    }};

}  // namespace
}  // namespace genai::cli
