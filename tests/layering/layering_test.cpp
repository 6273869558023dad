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

// Issue 39, "no stage reads an option by string key": the option set becomes typed settings once
// (orchestrator/stage_settings.cpp, resolve_stage_settings) and every stage reads fields
// (pipeline/stage_settings.h). In the layers from pipeline up, only these files read OptionValues
// by key; the option layer below and the CLI (src/cli, no layer) are its front ends.
TEST(Layering, NoStageReadsAnOptionByKey) {
  const std::vector<std::string> allowed = {
      "src/orchestrator/stage_settings.cpp",        // the resolver
      "src/orchestrator/context_from_options.cpp",  // the front door: the run's checks, its context
      "src/orchestrator/stage_plan.cpp",            // which stages the options skip
      "src/backends/execution_options.cpp",         // process-wide switches the CLI applies
  };
  const auto layers = layer_order();
  const auto first = std::find(layers.begin(), layers.end(), "pipeline");
  ASSERT_NE(first, layers.end());
  const std::regex key_read(
      R"(\.(get_flag|get_int|get_float|get_string|get_list|get_optional_int|get_optional_string|was_set|has_value|set|set_from_text)\(\s*")");
  const std::regex bag(R"(\bextra_options\(\)|\binference_options\b)");
  const fs::path root(GENAI_SOURCE_DIR);
  std::vector<std::string> violations;
  size_t files = 0;
  for (auto layer = first; layer != layers.end(); ++layer) {
    if (!fs::is_directory(root / "src" / *layer)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / "src" / *layer)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      if (std::find(allowed.begin(), allowed.end(), rel) != allowed.end()) continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int line_no = 1; std::getline(in, line); ++line_no) {
        // The orchestrator resolves the context's option set where it starts the stages.
        const bool resolves = rel == "src/orchestrator/genai_pipeline.cpp" &&
                              line.find("resolve_stage_settings(context.extra_options())") != std::string::npos;
        // The context carries the option set the run was given (pipeline_context.h).
        const bool holds = rel.rfind("src/pipeline/pipeline_context.", 0) == 0;
        if (std::regex_search(line, key_read) || (!resolves && !holds && std::regex_search(line, bag)))
          violations.push_back(rel + ":" + std::to_string(line_no) + ": " + line);
      }
    }
  }
  EXPECT_GT(files, 0u);
  std::string report;
  for (const auto& v : violations) report += v + "\n";
  EXPECT_TRUE(violations.empty()) << "read the stage's settings (pipeline/stage_settings.h) instead; resolve the "
                                     "option in orchestrator/stage_settings.cpp:\n"
                                  << report;
}

}  // namespace
