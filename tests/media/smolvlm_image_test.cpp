// Image input for SmolVLM: PNG and JPEG files decoded, resized with Pillow's filters and cut into
// tiles exactly as transformers' SmolVLMImageProcessorPil does (tests/python/
// smolvlm_image_reference.py writes the images and the processor's pixel values for three
// configurations: LANCZOS with splitting, BICUBIC with CLIP's mean and std, no splitting): every
// float the same. Bad files and configurations are InputErrors naming them.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "media/image_file.h"
#include "media/pil_resample.h"
#include "media/smolvlm_image_processor.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/test_requirements.h"

namespace genai::media {
namespace {

TEST(SmolVlmImage, PixelValuesEqualTransformersPillowPathForEveryImageKindAndConfig) {
  testing::TempDir dir;
  const auto ref = testing::run_process({"python3", testing::python_script("smolvlm_image_reference.py"), dir.path()});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers + pillow (scripts/install_deps.sh --test): " + ref.err);
  const auto cases = nlohmann::json::parse(testing::read_text(dir.file("cases.json")));
  ASSERT_EQ(cases.size(), 15u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["values"].get<std::string>());
    const RgbImage image = read_image(dir.file(c["image"].get<std::string>()));
    const ProcessedImage got = preprocess_smolvlm(image, smolvlm_image_config(c["config"], "case config"));
    const auto want = testing::read_f32_file(dir.file(c["values"].get<std::string>()));
    EXPECT_EQ(got.rows, c["rows"].get<int64_t>());
    EXPECT_EQ(got.cols, c["cols"].get<int64_t>());
    const auto shape = c["shape"].get<std::vector<int64_t>>();
    ASSERT_EQ(shape.size(), 4u);
    EXPECT_EQ(got.tiles(), shape[0]);
    EXPECT_EQ(got.tile_height, shape[2]);
    EXPECT_EQ(got.tile_width, shape[3]);
    ASSERT_EQ(got.pixels.size(), want.size());
    size_t differ = 0, first = want.size();
    for (size_t i = 0; i < want.size(); ++i)
      if (std::memcmp(&got.pixels[i], &want[i], sizeof(float)) != 0 && differ++ == 0) first = i;
    EXPECT_EQ(differ, 0u) << "first at " << first << ": " << (first < want.size() ? got.pixels[first] : 0.0f)
                          << " vs " << (first < want.size() ? want[first] : 0.0f);
  }
}

TEST(SmolVlmImage, SizesFollowTheProcessorsRounding) {
  // Longest edge to 2048, the other side truncated then made even: 640x480 -> 2048x1536.
  EXPECT_EQ(smolvlm_resized_size(480, 640, 2048), (std::array<int64_t, 2>{1536, 2048}));
  EXPECT_EQ(smolvlm_resized_size(157, 203, 96), (std::array<int64_t, 2>{74, 96}));  // int(74.2...) = 74, even
  EXPECT_EQ(smolvlm_resized_size(203, 157, 97), (std::array<int64_t, 2>{97, 76}));  // int(75.01) = 75 -> 76
  EXPECT_EQ(smolvlm_resized_size(10, 9000, 9000), (std::array<int64_t, 2>{4, 4096}));  // capped at 4096
  EXPECT_EQ(smolvlm_tiled_size(74, 96, 32), (std::array<int64_t, 2>{96, 96}));
  EXPECT_EQ(smolvlm_tiled_size(1536, 2048, 512), (std::array<int64_t, 2>{1536, 2048}));
}

TEST(SmolVlmImage, MissingTruncatedAndNonImageFilesAreInputErrorsNamingThem) {
  testing::TempDir dir;
  const auto expect_input_error = [](const std::string& path, const std::string& words) {
    try {
      read_image(path);
      ADD_FAILURE() << path << " was read";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  expect_input_error(dir.file("absent.png"), "cannot be read");
  testing::write_file(dir.file("notes.png"), "just some text, not pixels");
  expect_input_error(dir.file("notes.png"), "not an image");
  // A real PNG and JPEG, cut short.
  RgbImage img(40, 30);
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>(i * 7);
  const auto ref = testing::run_process({"python3", "-c",
                                         "import sys, numpy as np; from PIL import Image;"
                                         "a = (np.arange(40*30*3) * 7 % 256).astype(np.uint8).reshape(30, 40, 3);"
                                         "Image.fromarray(a).save(sys.argv[1]); Image.fromarray(a).save(sys.argv[2])",
                                         dir.file("full.png"), dir.file("full.jpg")});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "pillow (scripts/install_deps.sh --test): " + ref.err);
  EXPECT_EQ(read_image(dir.file("full.png")).pixels, img.pixels);  // lossless
  EXPECT_EQ(read_image(dir.file("full.jpg")).width, 40);
  // A PNG whose header claims 20000 x 20000 pixels: refused before anything is allocated.
  const auto bomb = testing::run_process(
      {"python3", "-c",
       "import sys, struct, zlib; from PIL import Image; Image.new('L', (1, 1)).save(sys.argv[1]);"
       "b = bytearray(open(sys.argv[1], 'rb').read()); b[16:24] = struct.pack('>II', 20000, 20000);"
       "b[29:33] = struct.pack('>I', zlib.crc32(bytes(b[12:29]))); open(sys.argv[1], 'wb').write(b)",
       dir.file("bomb.png")});
  ASSERT_EQ(bomb.exit_code, 0) << bomb.err;
  expect_input_error(dir.file("bomb.png"), "decompression-bomb limit");
  for (const std::string name : {"full.png", "full.jpg"}) {
    const auto bytes = testing::read_bytes(dir.file(name));
    const std::string cut = dir.file("cut_" + name);
    std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               static_cast<std::streamsize>(bytes.size() / 2));
    expect_input_error(cut, "not a readable");
  }
}

TEST(SmolVlmImage, ConfigFieldsItCannotHonourAreInputErrorsNamingThem) {
  const auto expect_error = [](const std::string& text, const std::string& words) {
    try {
      smolvlm_image_config(nlohmann::json::parse(text), "preprocessor_config.json");
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("preprocessor_config.json"), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  expect_error(R"({"crop_size": 224})", "'crop_size' is not handled");
  expect_error(R"({"resample": 0})", "valid: 1 LANCZOS, 2 BILINEAR, 3 BICUBIC");
  expect_error(R"({"size": {"height": 3, "width": 4}})", "longest_edge");
  expect_error(R"({"image_processor_type": "CLIPImageProcessor"})", "not SmolVLM");
  expect_error(R"({"image_mean": [0.5, 0.5]})", "three numbers");
  const auto c = smolvlm_image_config(nlohmann::json::parse(R"({"size": {"longest_edge": 2048},
      "max_image_size": {"longest_edge": 512}, "resample": 1, "image_processor_type": "SmolVLMImageProcessor"})"),
                                      "x");
  EXPECT_EQ(c.longest_edge, 2048);
  EXPECT_EQ(c.tile, 512);
  EXPECT_EQ(c.resample, Resample::kLanczos);
}

}  // namespace
}  // namespace genai::media
