#include "modality/audio_modality.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/log.h"
#include "graph/speech_encoder_graph.h"
#include "media/speech_features.h"
#include "media/wav_file.h"
#include "modality/encoder.h"
#include "modality/speech_encoder_inputs.h"

namespace genai::modality {
namespace {

pipeline::Metadata audio_metadata(const SpeechTowerConfig& c, int64_t rows) {
  return {{"get_audio_token_id", static_cast<int64_t>(c.audio_token_id)},
          {"get_audio_capacity", graph::speech_encoder_capacity(c, rows)}};
}

// Three deterministic clips an encoder hears something in: a chord swelling and fading, a chirp,
// and noise bursts over a hum, of different lengths.
std::vector<media::AudioClip> generated_clips(int64_t rate, int64_t max_samples) {
  std::vector<media::AudioClip> clips;
  uint32_t state = 777u;
  auto noise = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>(state >> 16) - 32768) / 32768.0f;
  };
  const double r = static_cast<double>(rate), pi = std::numbers::pi;
  for (int kind = 0; kind < 3; ++kind) {
    media::AudioClip c;
    c.sample_rate = rate;
    c.channels = 1;
    const int64_t n = std::min<int64_t>(max_samples, rate * (3 + 2 * kind));
    c.samples.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const double t = static_cast<double>(i) / r, env = std::sin(pi * t / (static_cast<double>(n) / r));
      double v = 0.0;
      if (kind == 0) v = env * 0.2 * (std::sin(2 * pi * 220 * t) + std::sin(2 * pi * 277 * t) + std::sin(2 * pi * 330 * t));
      if (kind == 1) v = 0.4 * env * std::sin(2 * pi * (100 + 900 * t) * t);
      if (kind == 2) v = 0.1 * std::sin(2 * pi * 50 * t) + (std::fmod(t, 0.5) < 0.2 ? 0.3 * noise() : 0.0);
      c.samples[static_cast<size_t>(i)] = static_cast<float>(v);
    }
    clips.push_back(std::move(c));
  }
  return clips;
}

// The audio encoder's signature: input_features [1, rows, width], frame_mask, atten_mask
// [blocks, 1, context, context] in, audio_features [1, tokens, dim] out; and the feature rows a clip
// may fill (get_audio_capacity).
struct ClipShape {
  int64_t rows = 0, width = 0, context = 0, capacity = 0, tokens = 0, dim = 0;
};

ClipShape clip_shape(const Encoder& encoder) {
  const auto& ins = encoder.inputs();
  const auto& out = encoder.output();
  const std::string origin = encoder.runner().origin();
  const std::vector<std::string> want{std::string(graph::kInputFeatures), std::string(graph::kFrameMask), "atten_mask"};
  bool shaped = ins.size() == want.size() && out.name == graph::kAudioFeatures;
  for (size_t i = 0; shaped && i < want.size(); ++i) shaped = ins[i].name == want[i];
  ClipShape s;
  if (shaped) {
    const auto &f = ins[0].shape, &m = ins[2].shape, &o = out.shape;
    shaped = f.size() == 3 && f[0] == 1 && f[1] > 0 && f[2] > 0 && m.size() == 4 && m[1] == 1 && m[2] == m[3] && m[2] > 0 &&
             m[0] * m[2] == f[1] && o.size() == 3 && o[0] == 1 && o[1] > 0 && o[2] > 0;
    if (shaped) s.rows = f[1], s.width = f[2], s.context = m[2], s.tokens = o[1], s.dim = o[2];
  }
  if (!shaped)
    throw_input_error("{}: method {} must map input_features [1, rows, width], frame_mask and atten_mask "
                      "[blocks, 1, context, context] to audio_features [1, tokens, dim]",
                      origin, encoder.method());
  const auto capacity = encoder.runner().constant_int("get_audio_capacity");
  if (!capacity || *capacity < 1 || *capacity > s.rows)
    throw_input_error("{}: get_audio_capacity must be a row count in [1, {}]", origin, s.rows);
  s.capacity = *capacity;
  return s;
}

// --audio_path: each WAV file becomes the model's features (its feature extractor's settings), is
// encoded, and stands in the prompt as Granite Speech's processor spells it: one "<|audio|>" per
// audio embedding.
class AudioPrompter final : public MediaPrompter {
 public:
  AudioPrompter(std::unique_ptr<Encoder> encoder, media::SpeechFeatureConfig features, int32_t audio_token_id)
      : encoder_(std::move(encoder)), shape_(clip_shape(*encoder_)), features_(features), token_id_(audio_token_id) {}

  PromptMedia prompt(const std::vector<std::string>& paths) override {
    PromptMedia audio;
    audio.content_item = audio.placeholder = "<|audio|>";
    audio.token_id = token_id_;
    audio.dim = shape_.dim;
    // Each feature row stacks two hops of the mel spectrogram.
    const double row_seconds =
        2.0 * static_cast<double>(features_.hop_length) / static_cast<double>(features_.sampling_rate);
    for (const std::string& path : paths) {
      const media::SpeechFeatures clip = media::speech_features(media::read_wav(path), features_, path);
      if (clip.rows > shape_.capacity)
        throw_input_error("{}: {:.1f} s of audio; the audio encoder takes at most {:.1f} s", path,
                          static_cast<double>(clip.rows) * row_seconds, static_cast<double>(shape_.capacity) * row_seconds);
      const std::vector<float> embeddings = encode(clip);
      audio.features.insert(audio.features.end(), embeddings.begin(), embeddings.end());
      std::string tokens;
      for (int64_t i = 0; i < clip.audio_tokens; ++i) tokens += "<|audio|>";
      audio.expansions.push_back(std::move(tokens));
      log::info("{}: {} feature rows, {} audio tokens", path, clip.rows, clip.audio_tokens);
    }
    return audio;
  }

 private:
  // The clip's audio embeddings: [clip.audio_tokens, dim].
  std::vector<float> encode(const media::SpeechFeatures& clip) {
    if (clip.audio_tokens > shape_.tokens)
      throw_failure("internal: {} audio tokens from a graph of {}", clip.audio_tokens, shape_.tokens);
    const graph::TensorMap inputs =
        speech_encoder_inputs(clip, shape_.width, shape_.context, shape_.capacity, shape_.rows);
    std::vector<const float*> in;
    for (const auto& d : encoder_->inputs()) in.push_back(inputs.at(d.name).data<float>());
    std::vector<float> all(static_cast<size_t>(shape_.tokens * shape_.dim));
    encoder_->run(in, all.data());
    all.resize(static_cast<size_t>(clip.audio_tokens * shape_.dim));
    return all;
  }

  std::unique_ptr<Encoder> encoder_;
  ClipShape shape_;
  media::SpeechFeatureConfig features_;
  int32_t token_id_;
};

class AudioModality final : public Modality {
 public:
  std::string_view name() const override { return "audio"; }
  pipeline::EncoderProgram program() const override {
    return {pipeline::GraphName::kAudioEncoder, pipeline::ArtifactKey::kAudioEncoder};
  }
  std::string_view option_name() const override { return "audio_path"; }
  std::string_view token_id_constant() const override { return "get_audio_token_id"; }
  std::string_view sample_unit() const override { return "clips"; }
  bool present_in(const Model& model) const override { return model.speech != nullptr; }
  std::filesystem::path processor_config(const Model& model) const override { return tower(model).processor_config; }

  // Clips of up to 12 s.
  pipeline::GraphBundle float_bundle(const Model& model) const override {
    const SpeechTower& t = tower(model);
    const int64_t rows = graph::speech_encoder_rows(t.config);
    auto g = graph::build_speech_encoder_graph(model.speech, rows);
    std::vector<pipeline::InputSpec> inputs;
    for (graph::ValueId id : g->inputs()) inputs.push_back({g->value(id).name, g->value(id).type.dtype, g->value(id).type.shape});
    pipeline::Metadata md = audio_metadata(t.config, rows);
    md["quant_recipe"] = std::string("float");
    return pipeline::GraphBundle(g, std::move(inputs), std::move(md), std::nullopt);
  }

  // Clips: those of --audio_path, else generated calibration audio (tones, chirps and noise,
  // since nothing is downloaded).
  EncoderCalibration calibration(const Model& model, const std::vector<std::string>& audio_paths) const override {
    const SpeechTower& t = tower(model);
    const media::SpeechFeatureConfig features = media::read_speech_feature_config(t.processor_config);
    const int64_t rows = graph::speech_encoder_rows(t.config);
    const int64_t capacity = graph::speech_encoder_capacity(t.config, rows);
    std::vector<std::pair<std::string, media::AudioClip>> clips;
    if (audio_paths.empty()) {
      for (auto& c : generated_clips(features.sampling_rate, (capacity * 2 - 2) * features.hop_length))
        clips.emplace_back("generated audio", std::move(c));
    } else {
      for (const auto& path : audio_paths) clips.emplace_back(path, media::read_wav(path));
    }
    EncoderCalibration c;
    for (const auto& [origin, clip] : clips)
      c.samples.push_back(speech_encoder_inputs(media::speech_features(clip, features, origin), t.config, rows));
    c.metadata = audio_metadata(t.config, rows);
    c.output = std::string(graph::kAudioFeatures);
    c.source = audio_paths.empty() ? "generated audio" : "--audio_path";
    return c;
  }

  std::unique_ptr<MediaPrompter> open_program(const runtime::ArtifactDir& dir) const override {
    auto runner = program_encoder_runner(dir, pipeline::ArtifactKey::kAudioEncoder);
    const auto token = runner->constant_int(token_id_constant());
    if (!token) throw_input_error("{}: no get_audio_token_id constant", runner->origin());
    const std::filesystem::path processor = processor_of(dir, pipeline::ArtifactKey::kAudioEncoder);
    return std::make_unique<AudioPrompter>(std::make_unique<Encoder>(std::move(runner), std::string(graph::kAudioEncoder)),
                                           media::read_speech_feature_config(processor), static_cast<int32_t>(*token));
  }

  std::unique_ptr<MediaPrompter> open_float(std::shared_ptr<const Model> model) const override {
    const SpeechTower& t = tower(*model);
    auto runner = float_encoder_runner(float_bundle(*model), std::string(graph::kAudioEncoder), "the audio encoder graph",
                                       "the audio length");
    return std::make_unique<AudioPrompter>(std::make_unique<Encoder>(std::move(runner), std::string(graph::kAudioEncoder)),
                                           media::read_speech_feature_config(t.processor_config), t.config.audio_token_id);
  }

  void add_stats(const PromptMedia& media, double ms, GenerationStats& stats) const override {
    stats.audio_clips = static_cast<int64_t>(media.expansions.size());
    stats.audio_ms = ms;
  }
  std::string_view notes_count_name() const override { return "audio_clips"; }
  std::string_view notes_ms_name() const override { return "audio_ms"; }
  std::string_view metric_ms_name() const override { return "audio_encode_ms"; }

 private:
  static const SpeechTower& tower(const Model& model) {
    if (!model.speech) throw_failure("internal: an audio encoder for a model without one");
    return *model.speech;
  }
};

}  // namespace

std::unique_ptr<Modality> make_audio_modality() { return std::make_unique<AudioModality>(); }

}  // namespace genai::modality
