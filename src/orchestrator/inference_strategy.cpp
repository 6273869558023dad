// inference: a decoder session driven by the generation loop with the prompts, chat format and
// sampling options of the run. The session runs
//   - the text_decoder program of the artifact dir (this run's, or --pre_gen_pte's / `genai run
//     -a`'s), or a lone program without manifest (--pte FILE), on the host runtime through
//     make_compiled_session, or, when there are no programs,
//   - the prepared float model (`genai run --checkpoint`): its reference forward, or with
//     --model_mode the static graphs a target would run, on the float interpreter.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/register_builtin.h"
#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "llm/compiled_session.h"
#include "llm/decoder_scheduler.h"
#include "llm/generation.h"
#include "llm/generation_report.h"
#include "llm/generation_stats.h"
#include "llm/graph_decoder.h"
#include "llm/program_method_runner.h"
#include "llm/reference_session.h"
#include "modality/media_options.h"
#include "modality/modality_registry.h"
#include "model/model.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/chat_format_choice.h"
#include "orchestrator/option_readers.h"
#include "runtime/artifact_dir.h"
#include "runtime/load_verification.h"
#include "runtime/lone_program.h"
#include "tokenizer/factory.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;
using Clock = std::chrono::steady_clock;

// What generation runs on, with the facts the report shows.
struct SessionSource {
  std::unique_ptr<DecoderSession> session;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::filesystem::path tokenizer_path;  // for messages; empty when prepared
  int64_t max_seq_len = 0;               // the program's own bound (0: none)
  int64_t max_context_len = 0;
  std::string kv_io_dtype;
  std::string program;  // the program file, or the checkpoint
  // Compiled programs: where they came from and what their load checked (the --json "program").
  nlohmann::json source;
  bool static_graphs = false;  // the float model's --model_mode graphs
  nlohmann::json compiled_options;  // the options the programs were compiled with (manifest), or null
  // The modalities the model has (registration order), and the encoder of the one whose media
  // the run gives: it alone is loaded.
  std::vector<const modality::Modality*> modalities;
  std::unique_ptr<modality::MediaPrompter> media_encoder;
};

// The tokenizer: the prepared one, else --tokenizer/--tokenizer_model/--tokenizer_bin, else the
// artifact dir's (a lone program has none).
std::shared_ptr<const Tokenizer> run_tokenizer(const InferenceInputConfig& in, const runtime::ArtifactDir* dir,
                                               std::filesystem::path& path_out) {
  if (in.tokenizer) return in.tokenizer;
  std::optional<std::filesystem::path> path = in.runtime_tokenizer_path;
  if (const auto& file = in.settings.tokenizer_file) path = *file;
  else if (!path && dir) path = dir->tokenizer_path;
  if (!path && dir && !dir->has_manifest)
    throw_input_error("{}: a program without manifest carries no tokenizer; pass --tokenizer FILE",
                      dir->artifacts.at(ArtifactKey::kTextDecoder).string());
  if (!path)
    throw_input_error("{}: the artifact dir carries no tokenizer; pass --tokenizer_model or --tokenizer_bin",
                      dir ? dir->dir.string() : std::string("inference"));
  path_out = *path;
  return load_tokenizer_file(*path);
}

SessionSource compiled_source(const InferenceInputConfig& in) {
  const std::optional<std::string>& lone = in.settings.lone_program;
  const runtime::ArtifactDir dir =
      lone ? runtime::open_lone_program(*lone)
           : runtime::open_artifact_dir(in.artifact_paths.at(ArtifactKey::kTextDecoder).parent_path());
  SessionSource s;
  s.tokenizer = run_tokenizer(in, &dir, s.tokenizer_path);
  CompiledSessionInfo info;
  s.session = make_compiled_session(dir, &info);
  s.max_seq_len = info.max_seq_len;
  s.max_context_len = info.max_context_len;
  s.kv_io_dtype = info.kv_io_dtype;
  s.program = dir.artifacts.at(ArtifactKey::kTextDecoder).string();
  const InferenceSettings& o = in.settings;
  for (const modality::Modality* m : modality::modalities())
    if (dir.artifacts.contains(m->program().key)) s.modalities.push_back(m);
  const modality::Modality* given = modality::given_modality(o.media);
  if (given && std::find(s.modalities.begin(), s.modalities.end(), given) != s.modalities.end())
    s.media_encoder = given->open_program(dir);
  if (dir.has_manifest && dir.manifest.contains("options") && dir.manifest["options"].is_object())
    s.compiled_options = dir.manifest["options"];
  // A lone program has nothing recording its checksum: only its structure and the hashes its
  // named-data keys carry can be checked.
  nlohmann::json checked = nlohmann::json::array({"structure"});
  if (runtime::load_verification()) checked.push_back(dir.has_manifest ? "manifest_checksums" : "named_data_hashes");
  s.source = {{"file", s.program},
              {"manifest", dir.has_manifest ? nlohmann::json((dir.dir / "manifest.json").string()) : nlohmann::json(nullptr)},
              {"soc_model", dir.soc_model},
              {"backend", dir.backend},
              {"verified", checked}};
  if (!dir.has_manifest)
    log::info("{}: no manifest; configuration from its constant methods and method signatures", s.program);
  return s;
}

// The prepared float model: the reference forward, or with --model_mode its static graphs.
SessionSource float_source(const InferenceInputConfig& in) {
  const InferenceSettings& o = in.settings;
  SessionSource s;
  s.tokenizer = in.tokenizer ? in.tokenizer : in.model->tokenizer;
  if (!s.tokenizer)
    throw_input_error("{}: no tokenizer in the checkpoint; pass --tokenizer_model or --tokenizer_bin",
                      in.model->checkpoint_path.string());
  s.program = in.model->checkpoint_path.string();
  s.kv_io_dtype = "float32";
  s.modalities = modality::modalities_of(*in.model);
  const modality::Modality* given = modality::given_modality(o.media);
  if (given && std::find(s.modalities.begin(), s.modalities.end(), given) != s.modalities.end())
    s.media_encoder = given->open_float(in.model);
  // Image or audio features replace token embeddings: the static graphs with the embedding as its
  // own step.
  const bool media = !s.modalities.empty();
  if (!o.graphs.model_mode.given && !media) {
    if (o.attention_sink)
      throw_input_error("--use_attention_sink evicts from the static graphs' KV cache: give --model_mode kv|hybrid too, "
                        "or run compiled programs");
    s.session = std::make_unique<ReferenceSession>(*in.model);
    s.max_context_len = in.model->config.max_positions;
    return s;
  }
  GraphSessionOptions g;
  g.mode = graph_mode(o.graphs);
  g.decode_ar_len = decode_ar_len(o.graphs);
  const int64_t context = o.graphs.effective_max_context_len();
  g.max_context_len = context > 0 ? context : std::min<int64_t>(in.model->config.max_positions, 512);
  g.prefill_ar_len = o.graphs.prefill_ar_len;
  g.attention_sink = attention_sink_setting(o, nlohmann::json());
  g.separate_embedding = media;
  s.session = make_graph_session(in.model, g);
  s.max_context_len = g.max_context_len;
  s.static_graphs = true;
  return s;
}

// Tokens a turn may generate: --max_new_tokens, else --max_seq_len when given, else the program's
// own max_seq_len, else the --max_seq_len default (the context end stops a turn earlier when full).
// Static float graphs (--model_mode) without --max_seq_len stop at their context.
int64_t turn_budget(const InferenceSettings& o, const SessionSource& s) {
  int64_t n = o.graphs.max_seq_len.value;
  if (const auto given = o.max_new_tokens) n = *given;
  else if (!o.graphs.max_seq_len.given && s.max_seq_len > 0) n = s.max_seq_len;
  if (n < 0) throw_input_error("--max_new_tokens must be >= 0, got {}", n);
  if (s.static_graphs && !o.graphs.max_seq_len.given) n = std::min(n, o.graphs.effective_max_context_len());
  return n;
}

class Inference final : public InferenceStrategy {
 public:
  Inference(TextSink on_text, GenerationObserver on_generation, PromptSource next_prompt)
      : on_text_(std::move(on_text)), on_generation_(std::move(on_generation)), next_prompt_(std::move(next_prompt)) {}

  InferenceOutputConfig invoke(const PipelineContext&, const InferenceInputConfig& in, StageNotes& notes) override {
    in.check_ready();
    const InferenceSettings& o = in.settings;
    const auto t0 = Clock::now();
    const bool programs = in.artifact_paths.contains(ArtifactKey::kTextDecoder);
    SessionSource src = programs ? compiled_source(in) : float_source(in);
    if (src.tokenizer->vocab_size() > src.session->vocab_size())
      throw_input_error("tokenizer {} has {} tokens but the program's vocabulary (get_vocab_size) has {}: it does not "
                        "belong to this model",
                        src.tokenizer_path.empty() ? std::string("of the run") : src.tokenizer_path.string(),
                        src.tokenizer->vocab_size(), src.session->vocab_size());
    const ChatFormatChoice chat = choose_chat_format(in.chat_template, *src.tokenizer, o.decoder_model);
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    log::info("loaded {} (context {}, KV {}, chat format {}) in {:.0f} ms", src.program, src.max_context_len,
              src.kv_io_dtype, chat_format_name(chat.format), load_ms);

    GenerationOptions g;
    g.prompts = in.prompt;
    g.system_prompt = o.system_prompt;
    g.max_new_tokens = turn_budget(o, src);
    g.sampler = SamplerConfig{static_cast<float>(o.temperature), static_cast<float>(o.top_p),
                              static_cast<uint64_t>(o.seed.value_or(0))};
    g.sampler.validate();
    g.lookahead = lookahead_setting(o, src.compiled_options);
    // The run's media (one modality's files), encoded into the first prompt.
    const modality::Modality* given = modality::given_modality(o.media);
    if (given && !src.media_encoder) {
      // Media the model has no encoder for: name what it does take.
      const std::string takes = src.modalities.empty() ? std::string(" (a text-only model)")
                                                       : fmt::format(" (it takes --{})", src.modalities.front()->option_name());
      throw_input_error("--{}: {} has no {} encoder{}{}", given->option_name(), src.program, given->name(),
                        programs ? " among its artifacts" : "", takes);
    }
    double media_ms = 0.0;
    if (given) {
      const std::vector<std::string> paths = modality::media_paths(*given, o.media);
      const auto m0 = Clock::now();
      g.media = src.media_encoder->prompt(paths);
      media_ms = std::chrono::duration<double, std::milli>(Clock::now() - m0).count();
      notes[std::string(given->notes_count_name())] = paths.size();
      notes[std::string(given->notes_ms_name())] = media_ms;
    }
    if (programs) {
      if (const auto sink = attention_sink_setting(o, src.compiled_options)) {
        auto* scheduler = dynamic_cast<DecoderScheduler*>(src.session.get());
        if (!scheduler) throw_input_error("--use_attention_sink: {} runs without our KV cache scheduler", src.program);
        scheduler->set_attention_sink(*sink);
      }
    }
    if (o.lora) {
      if (!programs) throw_input_error("--lora {}: adapters run in compiled programs (compile with --lora_adapter)", *o.lora);
      adapter_session(src, "--lora").set_adapter(*o.lora);
      notes["lora"] = *o.lora;
    }
    // A bar only when the text is not streamed to the same terminal.
    std::unique_ptr<ProgressBar> bar;
    TextSink sink = on_text_;
    if (!sink) {
      bar = std::make_unique<ProgressBar>("generating", g.max_new_tokens * static_cast<int64_t>(g.prompts.size()));
      sink = [&bar](std::string_view) { bar->advance(); };
    }
    GenerationResult result = converse(src, *src.tokenizer, chat.format, g, sink, in.prompt, in.settings.interactive);
    if (const auto* scheduler = dynamic_cast<const DecoderScheduler*>(src.session.get()))
      result.stats.evictions = scheduler->evictions();
    if (given) given->add_stats(*g.media, media_ms, result.stats);
    if (bar) bar->finish();
    if (on_text_ && !in.settings.interactive) on_text_("\n");  // end the streamed answer before the stage's log line
    result.stats.load_ms = load_ms;
    if (on_generation_) on_generation_(result);

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
    if (given) out.performance_metrics[std::string(given->metric_ms_name())] = media_ms;
    const nlohmann::json report = generation_json(result, peak_rss_mb());
    notes["stats"] = report.at("stats");
    notes["peak_rss_mb"] = report.at("peak_rss_mb");
    notes["stop_reason"] = result.turns.empty() ? "" : std::string(stop_reason_name(result.turns.back().stop_reason));
    notes["program"] = src.program;
    if (!src.source.is_null()) notes["program_source"] = src.source;
    notes["kv_io_dtype"] = src.kv_io_dtype;
    notes["max_context_len"] = src.max_context_len;
    notes["chat_format"] = std::string(chat_format_name(chat.format));
    notes["chat_format_from"] = chat.from;
    notes["summary"] = fmt::format("{} + {} tokens, prefill {:.1f} tok/s, decode {:.1f} tok/s ({} KV, context {})",
                                   s.prompt_tokens, s.generated_tokens, s.prefill_tok_s(), s.decode_tok_s(),
                                   src.kv_io_dtype, src.max_context_len);
    return out;
  }

 private:
  // The scheduler whose adapter a switch sets: InputError naming `option` for a session of another kind.
  static DecoderScheduler& adapter_session(SessionSource& src, std::string_view option) {
    auto* scheduler = dynamic_cast<DecoderScheduler*>(src.session.get());
    if (!scheduler) throw_input_error("{}: {} runs without our KV cache scheduler, which switches adapters", option, src.program);
    return *scheduler;
  }

  // The given prompts as turns of one conversation, then (--chat) one turn per line from the
  // prompt source until it ends; the cache carries over, so each turn prefills only its own text.
  // A turn "/lora NAME" ("/lora none": the base model) switches the LoRA adapter instead, and
  // the next turn starts a new conversation: the adapter changes every layer's keys and values,
  // so nothing cached under the old one is kept, and the turns after a switch answer as a run
  // with that adapter from the start would.
  GenerationResult converse(SessionSource& src, const Tokenizer& tokenizer, ChatFormat format, const GenerationOptions& g,
                            const TextSink& sink, const std::vector<std::string>& given, bool interactive) {
    if (interactive && !next_prompt_) throw_input_error("--chat reads its prompts from a terminal: use genai run");
    if (!interactive && given.empty()) throw_input_error("--prompt: at least one prompt is required");
    Conversation conversation(*src.session, tokenizer, format, g);
    size_t turns = 0;
    constexpr std::string_view kSwitch = "/lora";
    auto turn = [&](const std::string& prompt) {
      if (prompt.rfind(kSwitch, 0) == 0 && (prompt.size() == kSwitch.size() || prompt[kSwitch.size()] == ' ')) {
        std::string name = prompt.substr(kSwitch.size());
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(" \t\r") + 1);
        if (name.empty()) throw_input_error("{}: name an adapter, or none for the base model", kSwitch);
        adapter_session(src, kSwitch).set_adapter(name == "none" ? std::nullopt : std::optional<std::string>(name));
        conversation.start_over();
        return;
      }
      if (!interactive && sink && turns > 0) sink("\n");  // between the answers of --prompt turns
      conversation.turn(prompt, sink);
      ++turns;
      if (interactive && sink) sink("\n");
    };
    for (const auto& p : given) turn(p);
    if (interactive)
      while (const std::optional<std::string> line = next_prompt_())
        if (line->find_first_not_of(" \t\r") != std::string::npos) turn(*line);
    return conversation.result();
  }

  TextSink on_text_;
  GenerationObserver on_generation_;
  PromptSource next_prompt_;
};

}  // namespace

std::unique_ptr<InferenceStrategy> make_inference_strategy(TextSink on_text, GenerationObserver on_generation,
                                                           PromptSource next_prompt) {
  backends::register_builtin_backends();  // idempotent: the stage also works when run alone
  return std::make_unique<Inference>(std::move(on_text), std::move(on_generation), std::move(next_prompt));
}

}  // namespace genai::orchestrator
