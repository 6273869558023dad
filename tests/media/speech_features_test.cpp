// Audio input for Granite Speech: WAV files of every sample format we read, turned into the
// extractor's features (tests/python/speech_features_reference.py: transformers'
// GraniteSpeechFeatureExtractor, its mel spectrogram as torchaudio defines it) within 1e-4, with
// the same number of audio tokens; bad files and wrong rates are InputErrors naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "media/speech_features.h"
#include "media/wav_file.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/test_requirements.h"
#include "support/wav_files.h"

namespace genai::media {
namespace {

TEST(SpeechFeatures, EqualTransformersExtractorForEverySampleFormat) {
  testing::TempDir dir;
  const auto ref = testing::run_process({"python3", testing::python_script("speech_features_reference.py"), dir.path()});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers + torch (scripts/install_deps.sh --test): " + ref.err);
  const auto cases = nlohmann::json::parse(testing::read_text(dir.file("cases.json")));
  ASSERT_EQ(cases.size(), 7u);
  const SpeechFeatureConfig config;  // the extractor's defaults: 16 kHz, 80 mels
  for (const auto& c : cases) {
    SCOPED_TRACE(c["wav"].get<std::string>());
    const std::string wav = dir.file(c["wav"].get<std::string>());
    const SpeechFeatures got = speech_features(read_wav(wav), config, wav);
    const auto bytes = testing::read_bytes(dir.file(c["values"].get<std::string>()));
    std::vector<float> want(bytes.size() / sizeof(float));
    std::memcpy(want.data(), bytes.data(), bytes.size());
    EXPECT_EQ(got.rows, c["rows"].get<int64_t>());
    EXPECT_EQ(got.width, c["width"].get<int64_t>());
    EXPECT_EQ(got.audio_tokens, c["audio_tokens"].get<int64_t>());
    ASSERT_EQ(got.values.size(), want.size());
    float worst = 0.0f;
    for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got.values[i] - want[i]));
    EXPECT_LT(worst, 1e-4f);  // values are O(1): log10 of mel power, scaled by 1/4 and shifted by 1
    std::printf("%s: largest difference %.3g\n", c["wav"].get<std::string>().c_str(), worst);
  }
}

TEST(SpeechFeatures, AudioTokensFollowTheProjectorWindows) {
  const SpeechFeatureConfig c;
  EXPECT_EQ(speech_audio_tokens(16000, c), 12);   // 101 mel frames -> 50 rows -> 4 windows of 15 -> 12
  EXPECT_EQ(speech_audio_tokens(160000, c), 102);  // 10 s
  EXPECT_EQ(speech_audio_tokens(480000, c), 300);  // 30 s
}

TEST(SpeechFeatures, BadFilesAndWrongRatesAreInputErrorsNamingTheFile) {
  testing::TempDir dir;
  auto expect_error = [&](const std::string& name, const std::string& content, const std::string& words,
                          bool features = false) {
    const std::string path = dir.file(name);
    if (!content.empty()) testing::write_file(path, content);
    try {
      const AudioClip clip = read_wav(path);
      if (features) speech_features(clip, SpeechFeatureConfig{}, path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  const std::string second(32000, '\0');  // one second of 16-bit silence
  expect_error("absent.wav", "", "cannot be read");
  expect_error("text.wav", "just text, no audio", "not a WAV file");
  expect_error("cut.wav", testing::wav_header(1, 1, 16000, 16, 32000) + second.substr(0, 1000), "truncated");
  expect_error("adpcm.wav", testing::wav_header(2, 1, 16000, 16, 32000) + second, "not supported");
  expect_error("rate.wav", testing::wav_header(1, 1, 44100, 16, 32000) + second, "44100 Hz; the model takes 16000 Hz", true);
  expect_error("stereo.wav", testing::wav_header(1, 2, 16000, 16, 32000) + second, "2 channels", true);
  expect_error("short.wav", testing::wav_header(1, 1, 16000, 16, 100) + second.substr(0, 100), "at least 257", true);
}

TEST(SpeechFeatures, ConfigFieldsItCannotHonourAreInputErrorsNamingThem) {
  EXPECT_THROW(speech_feature_config(nlohmann::json::parse(R"({"dither": 1.0})"), "p.json"), InputError);
  EXPECT_THROW(speech_feature_config(nlohmann::json::parse(R"({"feature_extractor_type": "WhisperFeatureExtractor"})"), "p.json"),
               InputError);
  const auto c = speech_feature_config(
      nlohmann::json::parse(R"({"feature_extractor_type": "GraniteSpeechFeatureExtractor", "n_mels": 64, "sampling_rate": 8000})"),
      "p.json");
  EXPECT_EQ(c.n_mels, 64);
  EXPECT_EQ(c.sampling_rate, 8000);
}

}  // namespace
}  // namespace genai::media
