// An artifact dir as compilation wrote it: manifest.json (compile/compiler.h documents it), the
// programs it names by artifact key and the tokenizer. Opening checks that every file the
// manifest names exists (InputError naming the manifest and the missing file). A lone .pte run
// without its dir (runtime/lone_program.h) fills the same struct with no manifest.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/artifact_keys.h"
#include "runtime/load_verification.h"

namespace genai::runtime {

struct ArtifactDir {
  std::filesystem::path dir;
  nlohmann::json manifest;  // null for a lone program
  bool has_manifest = true;  // false: a lone .pte (nothing recorded to check it against)
  pipeline::ArtifactMap artifacts;  // key -> absolute path
  std::optional<std::filesystem::path> tokenizer_path;
  // Each encoder program's processor settings (preprocessor_config.json) by its artifact key.
  std::map<pipeline::ArtifactKey, std::filesystem::path> processors;
  std::string soc_model, backend;
  std::map<std::string, FileChecksum> checksums;  // by file name; empty for an older manifest

  // What the manifest records about `file` (a path in this dir), or null.
  const FileChecksum* checksum_of(const std::filesystem::path& file) const;
};

ArtifactDir open_artifact_dir(const std::filesystem::path& dir);

}  // namespace genai::runtime
