#include "runtime/artifact_dir.h"

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace genai::runtime {
namespace {

namespace fs = std::filesystem;

// compile/compiler.h documents the manifest (kManifestFileName); the runtime sits beside the
// compile layer, not on it, so the name is repeated here.
constexpr const char* kManifestName = "manifest.json";

// A manifest entry naming a file: a plain name inside the artifact dir (the dir is self-contained
// so it can be copied or pushed to a device as a whole).
fs::path file_in_dir(const fs::path& dir, const fs::path& manifest, const std::string& key, const nlohmann::json& value) {
  if (!value.is_string()) throw_input_error("{}: '{}' must be a file name (string)", manifest.string(), key);
  const std::string name = value.get<std::string>();
  const fs::path p(name);
  if (name.empty() || p.is_absolute() || p.has_parent_path() || name == "." || name == "..")
    throw_input_error("{}: '{}' must be a file name inside the artifact dir, got '{}'", manifest.string(), key, name);
  const fs::path full = dir / p;
  std::error_code ec;
  if (!fs::is_regular_file(full, ec))
    throw_input_error("{}: '{}' names {}, which does not exist", manifest.string(), key, full.string());
  return full;
}

std::string optional_string(const nlohmann::json& m, const fs::path& manifest, const char* key) {
  auto it = m.find(key);
  if (it == m.end() || it->is_null()) return "";
  if (!it->is_string()) throw_input_error("{}: '{}' must be a string", manifest.string(), key);
  return it->get<std::string>();
}

}  // namespace

ArtifactDir open_artifact_dir(const fs::path& dir_in) {
  std::error_code ec;
  if (!fs::is_directory(dir_in, ec))
    throw_input_error("artifact dir {} does not exist or is not a directory (-a/--artifact)", dir_in.string());
  ArtifactDir a;
  a.dir = fs::absolute(dir_in, ec);
  if (ec) a.dir = dir_in;
  const fs::path manifest = a.dir / kManifestName;
  if (!fs::is_regular_file(manifest, ec))
    throw_input_error("{}: missing; -a must name a folder written by `genai compile`", manifest.string());
  std::ifstream in(manifest, std::ios::binary);
  if (!in) throw_input_error("{}: cannot be read", manifest.string());
  std::stringstream text;
  text << in.rdbuf();
  try {
    a.manifest = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw_input_error("{}: not valid JSON: {}", manifest.string(), e.what());
  }
  const nlohmann::json& m = a.manifest;
  if (!m.is_object()) throw_input_error("{}: must hold a JSON object", manifest.string());
  if (optional_string(m, manifest, "format") != "genai-artifacts")
    throw_input_error("{}: 'format' must be \"genai-artifacts\"", manifest.string());
  auto version = m.find("version");
  if (version == m.end() || !version->is_number_integer() || version->get<int64_t>() != 1)
    throw_input_error("{}: 'version' must be 1 (the only manifest version this build reads)", manifest.string());
  auto artifacts = m.find("artifacts");
  if (artifacts == m.end() || !artifacts->is_object())
    throw_input_error("{}: 'artifacts' must be an object of artifact key -> file name", manifest.string());
  for (const auto& [key, value] : artifacts->items()) {
    pipeline::ArtifactKey k;
    try {
      k = pipeline::parse_artifact_key(key);
    } catch (const InputError& e) {
      throw_input_error("{}: artifacts: {}", manifest.string(), e.what());
    }
    a.artifacts[k] = file_in_dir(a.dir, manifest, "artifacts." + key, value);
  }
  if (auto t = m.find("tokenizer"); t != m.end() && !t->is_null()) a.tokenizer_path = file_in_dir(a.dir, manifest, "tokenizer", *t);
  a.soc_model = optional_string(m, manifest, "soc_model");
  a.backend = optional_string(m, manifest, "backend");
  return a;
}

}  // namespace genai::runtime
