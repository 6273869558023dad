// The layer order (GENAI_LAYER_NAMES in the top CMakeLists.txt, bottom-up) holds for #include too:
// a file in src/<layer>/ includes only "<dir>/..." headers of its own layer or of layers below it.
// genai_layer() checks the CMake DEPs at configure time; this test checks the sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<std::string> layer_order() {
  std::ifstream in(fs::path(GENAI_SOURCE_DIR) / "CMakeLists.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(set\(GENAI_LAYER_NAMES([^)]*)\))"))) return {};
  std::vector<std::string> layers;
  std::istringstream names(m[1].str());
  for (std::string name; names >> name;) layers.push_back(name);
  return layers;
}

TEST(Layering, LayerListIsReadFromTheTopCMakeLists) {
  const auto layers = layer_order();
  ASSERT_FALSE(layers.empty()) << "no set(GENAI_LAYER_NAMES ...) in " << GENAI_SOURCE_DIR << "/CMakeLists.txt";
  EXPECT_EQ(layers.front(), "core");
  for (const auto& l : layers) EXPECT_TRUE(fs::is_directory(fs::path(GENAI_SOURCE_DIR) / "src" / l)) << l;
}

TEST(Layering, NoLayerIncludesALayerAboveIt) {
  const auto layers = layer_order();
  ASSERT_FALSE(layers.empty());
  auto rank = [&](const std::string& name) {
    const auto it = std::find(layers.begin(), layers.end(), name);
    return it == layers.end() ? -1 : static_cast<int>(it - layers.begin());
  };
  const fs::path src = fs::path(GENAI_SOURCE_DIR) / "src";
  const std::regex include_re(R"(^\s*#\s*include\s*"([A-Za-z0-9_]+)/)");
  std::vector<std::string> violations;
  size_t files = 0;
  for (const auto& layer : layers) {
    const int own = rank(layer);
    if (!fs::is_directory(src / layer)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(src / layer)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      ++files;
      const std::string rel = fs::relative(entry.path(), GENAI_SOURCE_DIR).generic_string();
      std::ifstream in(entry.path());
      std::string line;
      for (int line_no = 1; std::getline(in, line); ++line_no) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string dir = m[1].str();
        const int other = rank(dir);
        if (other <= own) continue;  // own layer, a lower one, or not a layer (hwy/, schema/ ...)
        violations.push_back(rel + ":" + std::to_string(line_no) + ": layer '" + layer + "' includes \"" + dir +
                             "/...\" from layer '" + dir + "', which is above it in GENAI_LAYER_NAMES");
      }
    }
  }
  EXPECT_GT(files, 0u);
  std::string report;
  for (const auto& v : violations) report += v + "\n";
  EXPECT_TRUE(violations.empty()) << report;  // no exceptions
}

}  // namespace
