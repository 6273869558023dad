// inference: the text_decoder program of the artifact dir (this run's, or --pre_gen_pte's) on
// the host runtime through make_compiled_session, driven by the generation loop with the
// prompts, chat template and sampling options of the run.
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "backends/register_builtin.h"
#include "core/error.h"
#include "core/progress.h"
#include "llm/compiled_session.h"
#include "llm/generation.h"
#include "llm/generation_report.h"
#include "llm/generation_stats.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/model_lookup.h"
#include "runtime/artifact_dir.h"
#include "tokenizer/factory.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;

ChatFormat chat_format_from_name(const std::string& name) {
  for (ChatFormat f : {ChatFormat::kNone, ChatFormat::kChatML, ChatFormat::kLlama3, ChatFormat::kLlama2}) {
    if (chat_format_name(f) == name) return f;
  }
  throw_failure("unknown chat format '{}' (none, chatml, llama3, llama2)", name);
}

class Inference final : public InferenceStrategy {
 public:
  explicit Inference(TextSink on_text) : on_text_(std::move(on_text)) {}

  InferenceOutputConfig invoke(const PipelineContext&, const InferenceInputConfig& in, StageNotes& notes) override {
    in.check_ready();
    const options::OptionValues& o = in.inference_options;
    const runtime::ArtifactDir dir = runtime::open_artifact_dir(in.artifact_paths.at(ArtifactKey::kTextDecoder).parent_path());

    // Tokenizer: the prepared one, else --tokenizer_model/--tokenizer_bin, else the artifact dir's.
    std::shared_ptr<const Tokenizer> tokenizer = in.tokenizer;
    if (!tokenizer) {
      std::optional<std::filesystem::path> path = in.runtime_tokenizer_path;
      if (auto t = o.get_optional_string("tokenizer_model")) path = *t;
      else if (auto b = o.get_optional_string("tokenizer_bin")) path = *b;
      else if (!path) path = dir.tokenizer_path;
      if (!path)
        throw_input_error("{}: the artifact dir carries no tokenizer; pass --tokenizer_model or --tokenizer_bin",
                          dir.dir.string());
      tokenizer = load_tokenizer_file(*path);
    }
    ChatFormat chat = ChatFormat::kNone;
    std::string chat_from = "none";
    if (in.chat_template) {
      chat = chat_format_from_name(*in.chat_template);
      chat_from = "model_preparation";
    } else if (!tokenizer->chat_template().empty()) {
      chat = detect_chat_format(tokenizer->chat_template());
      chat_from = "tokenizer template";
    } else if (auto name = o.get_optional_string("decoder_model"); name && find_decoder_model(*name)) {
      chat = find_decoder_model(*name)->chat_format;
      chat_from = "--decoder_model";
    }

    CompiledSessionInfo info;
    const auto session = make_compiled_session(dir, &info);

    GenerationOptions g;
    g.prompts = in.prompt;
    g.system_prompt = o.get_string("system_prompt");
    // Without --max_new_tokens a turn may run to --max_seq_len; the context end stops it earlier.
    g.max_new_tokens = o.get_optional_int("max_new_tokens").value_or(o.get_int("max_seq_len"));
    g.sampler = SamplerConfig{static_cast<float>(o.get_float("temperature")), static_cast<float>(o.get_float("top_p")),
                              static_cast<uint64_t>(o.get_optional_int("seed").value_or(0))};
    g.sampler.validate();
    // A bar only when the text is not streamed to the same terminal.
    std::unique_ptr<ProgressBar> bar;
    TextSink sink = on_text_;
    if (!sink) {
      bar = std::make_unique<ProgressBar>("generating", g.max_new_tokens * static_cast<int64_t>(g.prompts.size()));
      sink = [&bar](std::string_view) { bar->advance(); };
    }
    GenerationResult result = generate(*session, *tokenizer, chat, g, sink);
    if (bar) bar->finish();
    if (on_text_) on_text_("\n");  // end the streamed answer before the stage's log line
    result.stats.load_ms = info.load_ms;

    InferenceOutputConfig out;
    for (const auto& t : result.turns) out.inference_results.push_back(t.text);
    out.tokens = result.tokens;
    const GenerationStats& s = result.stats;
    out.performance_metrics = {{"load_ms", s.load_ms},
                               {"ttft_ms", s.ttft_ms},
                               {"prefill_tok_s", s.prefill_tok_s()},
                               {"decode_tok_s", s.decode_tok_s()},
                               {"prompt_tokens", static_cast<double>(s.prompt_tokens)},
                               {"generated_tokens", static_cast<double>(s.generated_tokens)}};
    const nlohmann::json report = generation_json(result, peak_rss_mb());
    notes["stats"] = report.at("stats");
    notes["peak_rss_mb"] = report.at("peak_rss_mb");
    notes["stop_reason"] = result.turns.empty() ? "" : std::string(stop_reason_name(result.turns.back().stop_reason));
    notes["program"] = dir.artifacts.at(ArtifactKey::kTextDecoder).string();
    notes["kv_io_dtype"] = info.kv_io_dtype;
    notes["max_context_len"] = info.max_context_len;
    notes["chat_format"] = std::string(chat_format_name(chat));
    notes["chat_format_from"] = chat_from;
    notes["summary"] = fmt::format("{} + {} tokens, prefill {:.1f} tok/s, decode {:.1f} tok/s ({} KV, context {})",
                                   s.prompt_tokens, s.generated_tokens, s.prefill_tok_s(), s.decode_tok_s(),
                                   info.kv_io_dtype, info.max_context_len);
    return out;
  }

 private:
  TextSink on_text_;
};

}  // namespace

std::unique_ptr<InferenceStrategy> make_inference_strategy(TextSink on_text) {
  backends::register_builtin_backends();  // idempotent: the stage also works when run alone
  return std::make_unique<Inference>(std::move(on_text));
}

}  // namespace genai::orchestrator
