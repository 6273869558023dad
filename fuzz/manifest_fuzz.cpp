// libFuzzer target: an artifact dir's manifest.json (open_artifact_dir). The dir holds a few files
// a manifest may name (programs, a tokenizer), so valid references resolve and the checks behind
// them run. Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/error.h"
#include "fuzz/fuzz_files.h"
#include "runtime/artifact_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto dir = [] {
    const auto d = genai::fuzz::scratch_dir() / "artifacts";
    std::filesystem::create_directories(d);
    for (const char* name : {"text_decoder.pte", "prefill.pte", "kv.pte", "tokenizer.json", "tokenizer.bin"})
      genai::fuzz::write_file(d / name, std::string_view("fuzz"));
    return d;
  }();
  genai::fuzz::write_file(dir / "manifest.json", std::span<const uint8_t>(data, size));
  try {
    (void)genai::runtime::open_artifact_dir(dir);
  } catch (const genai::InputError&) {
  }
  return 0;
}
