// `genai run`: generate text with the float reference forward of a checkpoint (no compilation).
#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "llm/generation.h"
#include "llm/generation_report.h"
#include "llm/graph_decoder.h"
#include "llm/reference_session.h"
#include "model/model.h"

namespace genai::cli {
namespace {

struct RunArgs {
  std::string checkpoint, tokenizer_model, tokenizer_bin, system_prompt;
  std::vector<std::string> prompts;
  int64_t max_new_tokens = 128;
  float temperature = 0.8f, top_p = 0.9f;
  uint64_t seed = 0;
  int threads = 0;
  bool json = false;
  // Static-graph path (the graphs a target runs), executed by the float interpreter.
  std::string model_mode;  // empty: the float reference forward
  int64_t max_context_len = 0, prefill_ar_len = 32;
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
  load.tokenizer_path = !a.tokenizer_model.empty() ? a.tokenizer_model : a.tokenizer_bin;
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
    "run", "Generate text with the float reference forward of a checkpoint", [](CLI::App& sub) -> CommandAction {
      auto a = std::make_shared<RunArgs>();
      sub.add_option("--checkpoint", a->checkpoint, "Model checkpoint: GGUF file, Hugging Face folder or llama2.c .bin")
          ->required();
      auto* tm = sub.add_option("--tokenizer_model,--tokenizer-model", a->tokenizer_model,
                                "Tokenizer file (tokenizer.json, sentencepiece .model); default: from the checkpoint");
      auto* tb = sub.add_option("--tokenizer_bin,--tokenizer-bin", a->tokenizer_bin, "llama2.c tokenizer.bin");
      tm->excludes(tb);
      tb->excludes(tm);
      sub.add_option("--prompt", a->prompts, "User prompt; several values are the turns of one conversation")
          ->required();
      sub.add_option("--system_prompt,--system-prompt", a->system_prompt, "System prompt (instruct models)");
      sub.add_option("--max_new_tokens,--max-new-tokens", a->max_new_tokens, "Most tokens generated per turn")
          ->capture_default_str();
      sub.add_option("--temperature", a->temperature, "Sampling temperature; 0 = greedy")->capture_default_str();
      sub.add_option("--top_p,--top-p", a->top_p, "Nucleus sampling mass in (0, 1]")->capture_default_str();
      sub.add_option("--seed", a->seed, "Seed of the sampler's random numbers")->capture_default_str();
      sub.add_option("--threads", a->threads, "Worker threads (default: all cores)");
      sub.add_option("--model_mode,--model-mode", a->model_mode,
                     "Run the static decoder graphs instead of the reference forward: kv | hybrid")
          ->check(CLI::IsMember({"kv", "hybrid"}));
      sub.add_option("--max_context_len,--max-context-len", a->max_context_len,
                     "Context length CL of the static graphs (default: min(model max, 512))");
      sub.add_option("--prefill_ar_len,--prefill-ar-len", a->prefill_ar_len, "Tokens per prefill_forward call (hybrid)")
          ->capture_default_str();
      sub.add_flag("--json", a->json, "Print one JSON object (text, tokens, stats) instead of streaming text");
      return [a] { return run(*a); };
    }};

}  // namespace
}  // namespace genai::cli
