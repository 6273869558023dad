#include "media/speech_features.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "media/processor_fields.h"

namespace genai::media {
namespace {

// torchaudio's melscale_fbanks (HTK scale, norm None) in float32: [n_freqs, n_mels].
std::vector<float> mel_filters(const SpeechFeatureConfig& c) {
  const int64_t n_freqs = c.n_fft / 2 + 1, n_mels = c.n_mels;
  const float f_max = static_cast<float>(c.sampling_rate / 2);
  auto hz_to_mel = [](float f) { return 2595.0f * std::log10(1.0f + f / 700.0f); };
  auto linspace = [](float a, float b, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    // torch.linspace: start + i * step for the first half, end - (n - 1 - i) * step for the rest.
    const float step = n > 1 ? (b - a) / static_cast<float>(n - 1) : 0.0f;
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = i < n / 2 ? a + static_cast<float>(i) * step : b - static_cast<float>(n - 1 - i) * step;
    return v;
  };
  const std::vector<float> freqs = linspace(0.0f, f_max, n_freqs);
  std::vector<float> f_pts = linspace(hz_to_mel(0.0f), hz_to_mel(f_max), n_mels + 2);
  for (float& m : f_pts) m = 700.0f * (std::pow(10.0f, m / 2595.0f) - 1.0f);
  std::vector<float> fb(static_cast<size_t>(n_freqs * n_mels));
  for (int64_t i = 0; i < n_freqs; ++i)
    for (int64_t m = 0; m < n_mels; ++m) {
      const float down = -(f_pts[static_cast<size_t>(m)] - freqs[static_cast<size_t>(i)]) /
                         (f_pts[static_cast<size_t>(m + 1)] - f_pts[static_cast<size_t>(m)]);
      const float up = (f_pts[static_cast<size_t>(m + 2)] - freqs[static_cast<size_t>(i)]) /
                       (f_pts[static_cast<size_t>(m + 2)] - f_pts[static_cast<size_t>(m + 1)]);
      fb[static_cast<size_t>(i * n_mels + m)] = std::max(0.0f, std::min(down, up));
    }
  return fb;
}

}  // namespace

SpeechFeatureConfig speech_feature_config(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw_input_error("{}: not a JSON object", origin);
  SpeechFeatureConfig c;
  for (const auto& [key, v] : j.items()) {
    if (key == "sampling_rate") c.sampling_rate = positive_int_field(v, origin, key);
    else if (key == "n_fft") c.n_fft = positive_int_field(v, origin, key);
    else if (key == "win_length") c.win_length = positive_int_field(v, origin, key);
    else if (key == "hop_length") c.hop_length = positive_int_field(v, origin, key);
    else if (key == "n_mels" || key == "feature_size") c.n_mels = positive_int_field(v, origin, key);
    else if (key == "projector_window_size") c.projector_window_size = positive_int_field(v, origin, key);
    else if (key == "projector_downsample_rate") c.projector_downsample_rate = positive_int_field(v, origin, key);
    else if (key == "melspec_kwargs") {  // how transformers saves the spectrogram's settings
      if (!v.is_object()) throw_input_error("{}: melspec_kwargs must be an object", origin);
      for (const auto& [k, x] : v.items()) {
        const std::string field = "melspec_kwargs." + k;
        if (k == "sample_rate") c.sampling_rate = positive_int_field(x, origin, field);
        else if (k == "n_fft") c.n_fft = positive_int_field(x, origin, field);
        else if (k == "win_length") c.win_length = positive_int_field(x, origin, field);
        else if (k == "hop_length") c.hop_length = positive_int_field(x, origin, field);
        else if (k == "n_mels") c.n_mels = positive_int_field(x, origin, field);
        else throw_input_error("{}: field '{}' is not handled (handled: sample_rate, n_fft, win_length, hop_length, n_mels)",
                               origin, field);
      }
    } else if (key == "padding_value") {
      if (!v.is_number() || v.get<double>() != 0.0) throw_input_error("{}: padding_value {} is not handled (0)", origin, v.dump());
    } else if (key == "feature_extractor_type" || key == "processor_class") {
      const std::string name = v.is_string() ? v.get<std::string>() : std::string();
      if (name.rfind("GraniteSpeech", 0) != 0)
        throw_input_error("{}: {} {} is not Granite Speech's", origin, key, v.dump());
    } else if (key == "padding_side" || key == "return_attention_mask") {
      // How a batch is padded: one clip at a time here.
    } else {
      throw_input_error("{}: field '{}' is not handled (handled: sampling_rate, n_fft, win_length, hop_length, n_mels, "
                        "projector_window_size, projector_downsample_rate, padding_value)",
                        origin, key);
    }
  }
  if (c.win_length > c.n_fft || c.projector_downsample_rate > c.projector_window_size)
    throw_input_error("{}: win_length {} exceeds n_fft {}, or projector_downsample_rate {} exceeds projector_window_size {}",
                      origin, c.win_length, c.n_fft, c.projector_downsample_rate, c.projector_window_size);
  return c;
}

SpeechFeatureConfig read_speech_feature_config(const std::filesystem::path& path) {
  return speech_feature_config(read_json_file(path), path.string());
}

int64_t speech_audio_tokens(int64_t samples, const SpeechFeatureConfig& c) {
  const int64_t mel = samples / c.hop_length + 1, encoder = mel / 2;
  const int64_t blocks = (encoder + c.projector_window_size - 1) / c.projector_window_size;
  return blocks * (c.projector_window_size / c.projector_downsample_rate);
}

SpeechFeatures speech_features(const AudioClip& clip, const SpeechFeatureConfig& c, const std::string& origin) {
  if (clip.channels != 1)
    throw_input_error("{}: {} channels; the model takes mono audio (one channel)", origin, clip.channels);
  if (clip.sample_rate != c.sampling_rate)
    throw_input_error("{}: sampled at {} Hz; the model takes {} Hz (resample it first)", origin, clip.sample_rate,
                      c.sampling_rate);
  const int64_t n = clip.frames(), pad = c.n_fft / 2;
  if (n <= pad)
    throw_input_error("{}: {} samples; at least {} are needed (half an FFT frame)", origin, n, pad + 1);
  // Reflect padding (the edge sample not repeated), as torch.stft(center=True, pad_mode="reflect").
  std::vector<float> x(static_cast<size_t>(n + 2 * pad));
  for (int64_t i = 0; i < n + 2 * pad; ++i) {
    int64_t k = i - pad;
    if (k < 0) k = -k;
    if (k >= n) k = 2 * (n - 1) - k;
    x[static_cast<size_t>(i)] = clip.samples[static_cast<size_t>(k)];
  }
  // The periodic Hann window of win_length, centred in the n_fft frame.
  std::vector<double> window(static_cast<size_t>(c.n_fft), 0.0);
  const int64_t left = (c.n_fft - c.win_length) / 2;
  for (int64_t k = 0; k < c.win_length; ++k)
    window[static_cast<size_t>(left + k)] =
        static_cast<float>(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(c.win_length)));
  const int64_t n_freqs = c.n_fft / 2 + 1, frames = 1 + n / c.hop_length;
  std::vector<double> cos_t(static_cast<size_t>(n_freqs * c.n_fft)), sin_t(cos_t.size());
  for (int64_t f = 0; f < n_freqs; ++f)
    for (int64_t k = 0; k < c.n_fft; ++k) {
      const double angle = 2.0 * std::numbers::pi * static_cast<double>((f * k) % c.n_fft) / static_cast<double>(c.n_fft);
      cos_t[static_cast<size_t>(f * c.n_fft + k)] = std::cos(angle);
      sin_t[static_cast<size_t>(f * c.n_fft + k)] = std::sin(angle);
    }
  const std::vector<float> fb = mel_filters(c);
  std::vector<float> logmel(static_cast<size_t>(frames * c.n_mels));
  std::vector<double> frame(static_cast<size_t>(c.n_fft));
  std::vector<float> power(static_cast<size_t>(n_freqs));
  float top = -INFINITY;
  for (int64_t t = 0; t < frames; ++t) {
    for (int64_t k = 0; k < c.n_fft; ++k)
      frame[static_cast<size_t>(k)] = static_cast<double>(x[static_cast<size_t>(t * c.hop_length + k)]) * window[static_cast<size_t>(k)];
    for (int64_t f = 0; f < n_freqs; ++f) {
      double re = 0.0, im = 0.0;
      const double* ct = &cos_t[static_cast<size_t>(f * c.n_fft)];
      const double* st = &sin_t[static_cast<size_t>(f * c.n_fft)];
      for (int64_t k = 0; k < c.n_fft; ++k) {
        re += frame[static_cast<size_t>(k)] * ct[k];
        im -= frame[static_cast<size_t>(k)] * st[k];
      }
      power[static_cast<size_t>(f)] = static_cast<float>(re * re + im * im);
    }
    for (int64_t m = 0; m < c.n_mels; ++m) {
      float mel = 0.0f;
      for (int64_t f = 0; f < n_freqs; ++f) mel += power[static_cast<size_t>(f)] * fb[static_cast<size_t>(f * c.n_mels + m)];
      const float l = std::log10(std::max(mel, 1e-10f));
      logmel[static_cast<size_t>(t * c.n_mels + m)] = l;
      top = std::max(top, l);
    }
  }
  for (float& l : logmel) l = std::max(l, top - 8.0f) / 4.0f + 1.0f;
  SpeechFeatures out;
  const int64_t kept = frames - frames % 2;  // an odd last frame dropped; pairs stacked
  out.rows = kept / 2;
  out.width = 2 * c.n_mels;
  out.values.assign(logmel.begin(), logmel.begin() + kept * c.n_mels);
  out.audio_tokens = speech_audio_tokens(n, c);
  return out;
}

}  // namespace genai::media
