// Granite Speech's audio features (transformers' GraniteSpeechFeatureExtractor): a power mel
// spectrogram as torchaudio's MelSpectrogram computes it (periodic Hann window centred in the FFT
// frame, the signal reflect-padded by half a frame at both ends, HTK mel filters without
// normalisation), then log10 clamped at 1e-10, floored at the clip's maximum minus 8, scaled by
// 1/4 and shifted by 1; an odd last frame dropped and frame pairs stacked (100 Hz -> 50 Hz rows of
// 2 * n_mels). The DFT is a matrix product in double (one size, 512 points, per model).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "media/wav_file.h"

namespace genai::media {

struct SpeechFeatureConfig {
  int64_t sampling_rate = 16000;
  int64_t n_fft = 512, win_length = 400, hop_length = 160, n_mels = 80;
  int64_t projector_window_size = 15, projector_downsample_rate = 5;
};

// preprocessor_config.json of a Granite Speech folder; unhandled fields and values are
// InputErrors naming the file and the field.
SpeechFeatureConfig speech_feature_config(const nlohmann::json& config, const std::string& origin);
SpeechFeatureConfig read_speech_feature_config(const std::filesystem::path& path);

struct SpeechFeatures {
  int64_t rows = 0, width = 0;  // [rows, 2 * n_mels]
  std::vector<float> values;
  int64_t audio_tokens = 0;     // the projector's outputs for this clip (<|audio|> tokens)
};

// `clip` must be mono at the configured rate and longer than half an FFT frame: InputError naming
// `origin` otherwise.
SpeechFeatures speech_features(const AudioClip& clip, const SpeechFeatureConfig& config, const std::string& origin);
// The projector's outputs for a clip of `samples` samples (the extractor's _get_num_audio_features).
int64_t speech_audio_tokens(int64_t samples, const SpeechFeatureConfig& config);

}  // namespace genai::media
