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
#include "graph/speech_encoder_graph.h"
#include "llm/audio_encoder.h"
#include "llm/image_encoder.h"
#include "llm/program_method_runner.h"
#include "llm/reference_session.h"
#include "model/model.h"
#include "options/validate.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/chat_format_choice.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/prompt_audio.h"
#include "orchestrator/prompt_images.h"
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
  // Which encoders the model has; each is loaded only for a run that gives its media.
  bool has_vision = false, has_audio = false;
  // A vision-language model's encoder, its image processor's settings and its image token.
  std::unique_ptr<ImageEncoder> image_encoder;
  std::optional<ImageProcessing> image_processing;
  int32_t image_token_id = -1;
  // A speech model's encoder, its feature extractor's settings and its audio token.
  std::unique_ptr<AudioEncoder> audio_encoder;
  std::optional<media::SpeechFeatureConfig> audio_features;
  int32_t audio_token_id = -1;
};

// The tokenizer: the prepared one, else --tokenizer/--tokenizer_model/--tokenizer_bin, else the
// artifact dir's (a lone program has none).
std::shared_ptr<const Tokenizer> run_tokenizer(const InferenceInputConfig& in, const runtime::ArtifactDir* dir,
                                               std::filesystem::path& path_out) {
  if (in.tokenizer) return in.tokenizer;
  const options::OptionValues& o = in.inference_options;
  std::optional<std::filesystem::path> path = in.runtime_tokenizer_path;
  if (auto file = options::tokenizer_file_option(o)) path = *file;
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
  const std::optional<std::string> lone = in.inference_options.get_optional_string("pte");
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
  const options::OptionValues& o = in.inference_options;
  auto vision = dir.artifacts.find(ArtifactKey::kVisionEncoder);
  auto audio = dir.artifacts.find(ArtifactKey::kAudioEncoder);
  s.has_vision = vision != dir.artifacts.end();
  s.has_audio = audio != dir.artifacts.end();
  if (s.has_vision && !o.get_list("image_path").empty()) {
    auto runner = std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(vision->second, dir.checksum_of(vision->second)));
    const auto token = runner->constant_int("get_image_token_id");
    const auto family = runner->program().constant_string("get_vision_family");
    if (!token || !family)
      throw_input_error("{}: no get_image_token_id or get_vision_family constant", vision->second.string());
    if (!dir.processor_path)
      throw_input_error("{}: a vision_encoder artifact but no processor (preprocessor_config.json)",
                        (dir.dir / "manifest.json").string());
    s.image_token_id = static_cast<int32_t>(*token);
    s.image_processing.emplace(vision_family_from_name(*family, vision->second.string()), *dir.processor_path);
    s.image_encoder = std::make_unique<ImageEncoder>(std::move(runner));
  }
  if (s.has_audio && !o.get_list("audio_path").empty()) {
    auto runner = std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(audio->second, dir.checksum_of(audio->second)));
    const auto token = runner->constant_int("get_audio_token_id");
    if (!token) throw_input_error("{}: no get_audio_token_id constant", audio->second.string());
    if (!dir.processor_path)
      throw_input_error("{}: an audio_encoder artifact but no processor (preprocessor_config.json)",
                        (dir.dir / "manifest.json").string());
    s.audio_token_id = static_cast<int32_t>(*token);
    s.audio_features = media::read_speech_feature_config(*dir.processor_path);
    s.audio_encoder = std::make_unique<AudioEncoder>(std::move(runner));
  }
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
  const options::OptionValues& o = in.inference_options;
  SessionSource s;
  s.tokenizer = in.tokenizer ? in.tokenizer : in.model->tokenizer;
  if (!s.tokenizer)
    throw_input_error("{}: no tokenizer in the checkpoint; pass --tokenizer_model or --tokenizer_bin",
                      in.model->checkpoint_path.string());
  s.program = in.model->checkpoint_path.string();
  s.kv_io_dtype = "float32";
  const auto& vision = in.model->vision;
  const auto& speech = in.model->speech;
  s.has_vision = vision != nullptr;
  s.has_audio = speech != nullptr;
  if (speech && !o.get_list("audio_path").empty()) {
    s.audio_encoder = make_graph_audio_encoder(speech, graph::speech_encoder_rows(speech->config));
    s.audio_features = media::read_speech_feature_config(speech->processor_config);
    s.audio_token_id = speech->config.audio_token_id;
  }
  if (vision && !o.get_list("image_path").empty()) {
    s.image_encoder = make_graph_image_encoder(vision);
    s.image_processing.emplace(vision->config.family, vision->processor_config);
    s.image_token_id = vision->config.image_token_id;
  }
  // Image or audio features replace token embeddings: the static graphs with the embedding as its
  // own step.
  if (!o.was_set("model_mode") && !vision && !speech) {
    if (o.has_value("use_attention_sink"))
      throw_input_error("--use_attention_sink evicts from the static graphs' KV cache: give --model_mode kv|hybrid too, "
                        "or run compiled programs");
    s.session = std::make_unique<ReferenceSession>(*in.model);
    s.max_context_len = in.model->config.max_positions;
    return s;
  }
  GraphSessionOptions g;
  g.mode = graph_mode(o);
  g.decode_ar_len = decode_ar_len(o);
  const int64_t context = options::effective_max_context_len(o);
  g.max_context_len = context > 0 ? context : std::min<int64_t>(in.model->config.max_positions, 512);
  g.prefill_ar_len = o.get_int("prefill_ar_len");
  g.attention_sink = attention_sink_setting(o, nlohmann::json());
  g.separate_embedding = vision != nullptr || speech != nullptr;
  s.session = make_graph_session(in.model, g);
  s.max_context_len = g.max_context_len;
  s.static_graphs = true;
  return s;
}

// Tokens a turn may generate: --max_new_tokens, else --max_seq_len when given, else the program's
// own max_seq_len, else the --max_seq_len default (the context end stops a turn earlier when full).
// Static float graphs (--model_mode) without --max_seq_len stop at their context.
int64_t turn_budget(const options::OptionValues& o, const SessionSource& s) {
  int64_t n = o.get_int("max_seq_len");
  if (const auto given = o.get_optional_int("max_new_tokens")) n = *given;
  else if (!o.was_set("max_seq_len") && s.max_seq_len > 0) n = s.max_seq_len;
  if (n < 0) throw_input_error("--max_new_tokens must be >= 0, got {}", n);
  if (s.static_graphs && !o.was_set("max_seq_len")) n = std::min(n, options::effective_max_context_len(o));
  return n;
}

class Inference final : public InferenceStrategy {
 public:
  Inference(TextSink on_text, GenerationObserver on_generation, PromptSource next_prompt)
      : on_text_(std::move(on_text)), on_generation_(std::move(on_generation)), next_prompt_(std::move(next_prompt)) {}

  InferenceOutputConfig invoke(const PipelineContext&, const InferenceInputConfig& in, StageNotes& notes) override {
    in.check_ready();
    const options::OptionValues& o = in.inference_options;
    const auto t0 = Clock::now();
    const bool programs = in.artifact_paths.contains(ArtifactKey::kTextDecoder);
    SessionSource src = programs ? compiled_source(in) : float_source(in);
    if (src.tokenizer->vocab_size() > src.session->vocab_size())
      throw_input_error("tokenizer {} has {} tokens but the program's vocabulary (get_vocab_size) has {}: it does not "
                        "belong to this model",
                        src.tokenizer_path.empty() ? std::string("of the run") : src.tokenizer_path.string(),
                        src.tokenizer->vocab_size(), src.session->vocab_size());
    const ChatFormatChoice chat = choose_chat_format(in.chat_template, *src.tokenizer, o);
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    log::info("loaded {} (context {}, KV {}, chat format {}) in {:.0f} ms", src.program, src.max_context_len,
              src.kv_io_dtype, chat_format_name(chat.format), load_ms);

    GenerationOptions g;
    g.prompts = in.prompt;
    g.system_prompt = o.get_string("system_prompt");
    g.max_new_tokens = turn_budget(o, src);
    g.sampler = SamplerConfig{static_cast<float>(o.get_float("temperature")), static_cast<float>(o.get_float("top_p")),
                              static_cast<uint64_t>(o.get_optional_int("seed").value_or(0))};
    g.sampler.validate();
    g.lookahead = lookahead_setting(o, src.compiled_options);
    // Media the model has no encoder for: name what it does take.
    auto no_encoder = [&](std::string_view option, std::string_view encoder) {
      const char* takes = src.has_vision ? " (it takes --image_path)" : src.has_audio ? " (it takes --audio_path)" : " (a text-only model)";
      throw_input_error("{}: {} has no {} encoder{}{}", option, src.program, encoder, programs ? " among its artifacts" : "", takes);
    };
    const std::vector<std::string> images = o.get_list("image_path"), clips = o.get_list("audio_path");
    if (!images.empty() && !src.has_vision) no_encoder("--image_path", "vision");
    if (!clips.empty() && !src.has_audio) no_encoder("--audio_path", "audio");
    if (!images.empty() && !clips.empty()) throw_input_error("--audio_path and --image_path: a model takes one kind of media");
    double image_ms = 0.0, audio_ms = 0.0;
    if (!images.empty()) {
      const auto i0 = Clock::now();
      g.media = prompt_images(images, *src.image_encoder, *src.image_processing, src.image_token_id);
      image_ms = std::chrono::duration<double, std::milli>(Clock::now() - i0).count();
      notes["images"] = images.size();
      notes["image_ms"] = image_ms;
    }
    if (!clips.empty()) {
      const auto a0 = Clock::now();
      g.media = prompt_audio(clips, *src.audio_encoder, *src.audio_features, src.audio_token_id);
      audio_ms = std::chrono::duration<double, std::milli>(Clock::now() - a0).count();
      notes["audio_clips"] = clips.size();
      notes["audio_ms"] = audio_ms;
    }
    if (programs) {
      if (const auto sink = attention_sink_setting(o, src.compiled_options)) {
        auto* scheduler = dynamic_cast<DecoderScheduler*>(src.session.get());
        if (!scheduler) throw_input_error("--use_attention_sink: {} runs without our KV cache scheduler", src.program);
        scheduler->set_attention_sink(*sink);
      }
    }
    // A bar only when the text is not streamed to the same terminal.
    std::unique_ptr<ProgressBar> bar;
    TextSink sink = on_text_;
    if (!sink) {
      bar = std::make_unique<ProgressBar>("generating", g.max_new_tokens * static_cast<int64_t>(g.prompts.size()));
      sink = [&bar](std::string_view) { bar->advance(); };
    }
    GenerationResult result =
        in.interactive ? converse(*src.session, *src.tokenizer, chat.format, g, sink, in.prompt)
                       : generate(*src.session, *src.tokenizer, chat.format, g, sink);
    if (const auto* scheduler = dynamic_cast<const DecoderScheduler*>(src.session.get()))
      result.stats.evictions = scheduler->evictions();
    if (!images.empty()) {
      result.stats.images = static_cast<int64_t>(g.media->expansions.size());
      result.stats.image_tiles = g.media->tiles;
      result.stats.image_ms = image_ms;
    }
    if (!clips.empty()) {
      result.stats.audio_clips = static_cast<int64_t>(g.media->expansions.size());
      result.stats.audio_ms = audio_ms;
    }
    if (bar) bar->finish();
    if (on_text_ && !in.interactive) on_text_("\n");  // end the streamed answer before the stage's log line
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
    if (!images.empty()) out.performance_metrics["image_encode_ms"] = image_ms;
    if (!clips.empty()) out.performance_metrics["audio_encode_ms"] = audio_ms;
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
  // --chat: the given prompts, then one turn per line from the prompt source until it ends; the
  // cache carries over, so each turn prefills only its own text.
  GenerationResult converse(DecoderSession& session, const Tokenizer& tokenizer, ChatFormat format,
                            const GenerationOptions& g, const TextSink& sink, const std::vector<std::string>& given) {
    if (!next_prompt_) throw_input_error("--chat reads its prompts from a terminal: use genai run");
    Conversation conversation(session, tokenizer, format, g);
    auto turn = [&](const std::string& prompt) {
      conversation.turn(prompt, sink);
      if (sink) sink("\n");
    };
    for (const auto& p : given) turn(p);
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
