// libFuzzer target: Hugging Face config.json -> ModelConfig (and a vision-language config's
// vision tower). Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fuzz/fuzz_files.h"
#include "model/hf_config.h"
#include "model/vision_tower.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = genai::fuzz::scratch_dir() / "config.json";
  genai::fuzz::write_file(path, std::span<const uint8_t>(data, size));
  genai::ModelConfig c;
  try {
    c = genai::read_hf_config(path);
    if (const auto top = genai::read_hf_config_json(path); genai::is_vision_language_config(top))
      (void)genai::read_vision_tower_config(top, path.string());
  } catch (const genai::InputError&) {
    return 0;
  }
  // A config that reads must write back to one that reads again.
  genai::fuzz::write_file(path, genai::hf_config_json(c));
  try {
    (void)genai::read_hf_config(path);
  } catch (const genai::InputError& e) {
    std::fprintf(stderr, "config.json that read does not read back after writing: %s\n", e.what());
    std::abort();
  }
  return 0;
}
