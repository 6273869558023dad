// libFuzzer target: tokenizer.json with its tokenizer_config.json (bos/eos, add_bos_token, chat
// template). The input is the tokenizer.json text, then optionally a NUL byte and the
// tokenizer_config.json text (JSON has no raw NUL, so the split is unambiguous). Whatever loads is
// used: encode, decode, token bytes, chat-format detection. Anything but InputError is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/error.h"
#include "fuzz/fuzz_files.h"
#include "fuzz/fuzz_tokenizer.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const auto& dir = genai::fuzz::scratch_dir();
  genai::fuzz::write_file(dir / "tokenizer.json", input.substr(0, nul));
  std::error_code ec;
  if (nul == std::string_view::npos)
    std::filesystem::remove(dir / "tokenizer_config.json", ec);
  else
    genai::fuzz::write_file(dir / "tokenizer_config.json", input.substr(nul + 1));
  try {
    auto tok = genai::load_tokenizer_json(dir / "tokenizer.json");
    genai::fuzz::exercise_tokenizer(*tok, "<|im_end|>");
    (void)genai::detect_chat_format(tok->chat_template());
    (void)genai::chat_default_system_prompt(tok->chat_template());
  } catch (const genai::InputError&) {
  }
  try {
    (void)genai::read_tokenizer_json_vocab(dir / "tokenizer.json");
  } catch (const genai::InputError&) {
  }
  return 0;
}
