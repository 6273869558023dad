#include "orchestrator/audio_encoder_quantization.h"

#include <chrono>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "graph/speech_encoder_graph.h"
#include "media/speech_features.h"
#include "media/wav_file.h"

namespace genai::orchestrator {
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

}  // namespace

pipeline::GraphBundle float_audio_encoder_bundle(const Model& model) {
  if (!model.speech) throw_failure("internal: an audio encoder bundle for a model without one");
  const int64_t rows = graph::speech_encoder_rows(model.speech->config);
  auto g = graph::build_speech_encoder_graph(model.speech, rows);
  std::vector<pipeline::InputSpec> inputs;
  for (graph::ValueId id : g->inputs()) inputs.push_back({g->value(id).name, g->value(id).type.dtype, g->value(id).type.shape});
  pipeline::Metadata md = audio_metadata(model.speech->config, rows);
  md["quant_recipe"] = std::string("float");
  return pipeline::GraphBundle(g, std::move(inputs), std::move(md), std::nullopt);
}

EncoderQuantization quantize_audio_encoder(std::shared_ptr<const Model> model, const std::vector<std::string>& audio_paths) {
  const auto t0 = std::chrono::steady_clock::now();
  const SpeechTower& tower = *model->speech;
  const media::SpeechFeatureConfig features = media::read_speech_feature_config(tower.processor_config);
  const int64_t rows = graph::speech_encoder_rows(tower.config);
  const int64_t capacity = graph::speech_encoder_capacity(tower.config, rows);
  std::vector<std::pair<std::string, media::AudioClip>> clips;
  if (audio_paths.empty()) {
    for (auto& c : generated_clips(features.sampling_rate, (capacity * 2 - 2) * features.hop_length))
      clips.emplace_back("generated audio", std::move(c));
  } else {
    for (const auto& path : audio_paths) clips.emplace_back(path, media::read_wav(path));
  }
  std::vector<graph::TensorMap> samples;
  for (const auto& [origin, clip] : clips)
    samples.push_back(graph::speech_encoder_inputs(media::speech_features(clip, features, origin), tower.config, rows));
  return quantize_encoder_bundle(float_audio_encoder_bundle(*model), samples, audio_metadata(tower.config, rows),
                                 std::string(graph::kAudioFeatures), audio_paths.empty() ? "generated audio" : "--audio_path",
                                 t0, "audio encoder", "clips");
}

}  // namespace genai::orchestrator
