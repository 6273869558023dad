// Image input for InternVL: the tile grid closest to the image's aspect ratio, BICUBIC resizes,
// row-major tiles and the thumbnail, exactly as transformers' GotOcr2ImageProcessorPil with
// crop_to_patches (tests/python/internvl_image_reference.py: every float the same).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "media/image_file.h"
#include "media/internvl_image_processor.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/test_requirements.h"

namespace genai::media {
namespace {

TEST(InternVlImage, PixelValuesEqualTransformersPillowPathForEveryImageKind) {
  testing::TempDir dir;
  const auto ref = testing::run_process({"python3", testing::python_script("internvl_image_reference.py"), dir.path()});
  GENAI_REQUIRE_AVAILABLE(ref.exit_code == 0, "transformers + pillow (scripts/install_deps.sh --test): " + ref.err);
  const auto cases = nlohmann::json::parse(testing::read_text(dir.file("cases.json")));
  ASSERT_EQ(cases.size(), 10u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["values"].get<std::string>());
    const ProcessedImage got =
        preprocess_internvl(read_image(dir.file(c["image"].get<std::string>())), internvl_image_config(c["config"], "case"));
    const auto bytes = testing::read_bytes(dir.file(c["values"].get<std::string>()));
    std::vector<float> want(bytes.size() / sizeof(float));
    std::memcpy(want.data(), bytes.data(), bytes.size());
    EXPECT_EQ(got.tiles(), c["tiles"].get<int64_t>());
    ASSERT_EQ(got.pixels.size(), want.size());
    size_t differ = 0;
    for (size_t i = 0; i < want.size(); ++i) differ += std::memcmp(&got.pixels[i], &want[i], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u);
  }
}

TEST(InternVlImage, GridsFollowTheClosestAspectRatioAndItsTieRule) {
  // Checked against transformers' get_optimal_tiled_canvas (tile 448, 1..12 tiles).
  EXPECT_EQ(internvl_grid(480, 640, 448, 1, 12), (std::array<int64_t, 2>{4, 3}));
  EXPECT_EQ(internvl_grid(640, 480, 448, 1, 12), (std::array<int64_t, 2>{3, 4}));
  EXPECT_EQ(internvl_grid(448, 448, 448, 1, 12), (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(internvl_grid(1080, 1920, 448, 1, 12), (std::array<int64_t, 2>{4, 2}));
  EXPECT_EQ(internvl_grid(100, 1000, 448, 1, 12), (std::array<int64_t, 2>{10, 1}));
  // Square: 1 x 1, 2 x 2 and 3 x 3 tie; the image covers more than half of 3 x 3 tiles, so that.
  EXPECT_EQ(internvl_grid(1000, 1000, 448, 1, 12), (std::array<int64_t, 2>{3, 3}));
  EXPECT_EQ(internvl_image_prompt(2, 2), "<img><IMG_CONTEXT><IMG_CONTEXT><IMG_CONTEXT><IMG_CONTEXT></img>");
}

TEST(InternVlImage, ConfigFieldsItCannotHonourAreInputErrorsNamingThem) {
  const auto expect_error = [](const std::string& text, const std::string& words) {
    try {
      internvl_image_config(nlohmann::json::parse(text), "preprocessor_config.json");
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"size": {"height": 448, "width": 224}})", "not square");
  expect_error(R"({"do_center_crop": true})", "'do_center_crop' is not handled");
  expect_error(R"({"image_processor_type": "SiglipImageProcessor"})", "not InternVL's");
  expect_error(R"({"min_patches": 5, "max_patches": 2})", "exceeds max_patches");
}

}  // namespace
}  // namespace genai::media
