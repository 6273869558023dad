// Reading a small file whole: configs, tokenizers, manifests, encodings, task and calibration
// texts. Large inputs (checkpoints, programs) are mapped instead (mapped_file.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace genai {

// The file's bytes; nullopt when it cannot be opened or read, so that each caller names the
// option or role of the file in its own InputError ("--config_file X: cannot open").
std::optional<std::string> read_whole_file(const std::filesystem::path& path);

}  // namespace genai
