#include "runtime/artifact_dir.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/chunked_digest.h"
#include "core/error.h"
#include "pipeline/encoder_programs.h"

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

std::map<std::string, FileChecksum> read_checksums(const nlohmann::json& m, const fs::path& manifest) {
  std::map<std::string, FileChecksum> out;
  auto it = m.find("checksums");
  if (it == m.end() || it->is_null()) return out;
  if (!it->is_object())
    throw_input_error("{}: 'checksums' must be an object of file name -> {{\"size\", \"chunked_xxh3_128\"}}",
                      manifest.string());
  for (const auto& [name, entry] : it->items()) {
    auto size = entry.is_object() ? entry.find("size") : entry.end();
    if (!entry.is_object() || size == entry.end() || !size->is_number_unsigned())
      throw_input_error("{}: checksums.{} must be {{\"size\": bytes, \"chunked_xxh3_128\": 32 hex digits}}",
                        manifest.string(), name);
    FileChecksum c;
    c.size = size->get<uint64_t>();
    // The digest this manifest records: XXH3 since it was introduced, SHA-256 before.
    bool found = false;
    for (DigestKind kind : {DigestKind::kXxh3_128, DigestKind::kSha256}) {
      auto digest = entry.find(std::string(digest_field(kind)));
      if (digest == entry.end()) continue;
      if (!digest->is_string() || digest->get<std::string>().size() != digest_hex_digits(kind))
        throw_input_error("{}: checksums.{}.{} must be {} hex digits", manifest.string(), name, digest_field(kind),
                          digest_hex_digits(kind));
      c.kind = kind;
      c.digest = digest->get<std::string>();
      found = true;
      break;
    }
    if (!found)
      throw_input_error("{}: checksums.{} must be {{\"size\": bytes, \"chunked_xxh3_128\": 32 hex digits}}",
                        manifest.string(), name);
    if (auto payloads = entry.find("payloads"); payloads != entry.end()) {
      if (!payloads->is_object())
        throw_input_error("{}: checksums.{}.payloads must be an object of method name -> digest", manifest.string(), name);
      for (const auto& [method, d] : payloads->items()) {
        if (!d.is_string() || d.get<std::string>().size() != digest_hex_digits(DigestKind::kXxh3_128))
          throw_input_error("{}: checksums.{}.payloads.{} must be {} hex digits", manifest.string(), name, method,
                            digest_hex_digits(DigestKind::kXxh3_128));
        c.payloads[method] = d.get<std::string>();
      }
    }
    out[name] = c;
  }
  return out;
}

// A file the manifest names must be the one compilation wrote: its size (cheap, catches
// truncation and most swaps), and its digest when asked.
void check_file(const ArtifactDir& a, const fs::path& manifest, const fs::path& file, bool digest) {
  if (a.checksums.empty() || !load_verification()) return;  // an older manifest records none
  const FileChecksum* want = a.checksum_of(file);
  if (!want) throw_input_error("{}: 'checksums' has no entry for {}", manifest.string(), file.filename().string());
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec || size != want->size)
    throw_input_error("{}: is {} bytes, but {} records {} (truncated or replaced; recompile with `genai compile`)",
                      file.string(), ec ? 0 : size, manifest.string(), want->size);
  if (digest && chunked_digest_file_hex(file, want->kind) != want->digest)
    throw_input_error("{}: its content does not match the checksum {} records (corrupted or replaced; recompile "
                      "with `genai compile`, or pass --no_verify to skip the check)",
                      file.string(), manifest.string());
}

}  // namespace

const FileChecksum* ArtifactDir::checksum_of(const fs::path& file) const {
  auto it = checksums.find(file.filename().string());
  return it == checksums.end() ? nullptr : &it->second;
}

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
  if (auto t = m.find("processors"); t != m.end() && !t->is_null()) {
    if (!t->is_object())
      throw_input_error("{}: 'processors' must be an object of artifact key -> file name", manifest.string());
    for (const auto& [key, value] : t->items()) {
      pipeline::ArtifactKey k;
      try {
        k = pipeline::parse_artifact_key(key);
      } catch (const InputError& e) {
        throw_input_error("{}: processors: {}", manifest.string(), e.what());
      }
      a.processors[k] = file_in_dir(a.dir, manifest, "processors." + key, value);
    }
  }
  // An older manifest's one "processor" (one encoder per model then): its encoder's, whichever it is.
  if (auto t = m.find("processor"); t != m.end() && !t->is_null()) {
    const fs::path file = file_in_dir(a.dir, manifest, "processor", *t);
    for (const auto& [key, path] : a.artifacts)
      if (pipeline::is_encoder_program(key)) a.processors.emplace(key, file);
  }
  a.soc_model = optional_string(m, manifest, "soc_model");
  a.backend = optional_string(m, manifest, "backend");
  a.checksums = read_checksums(m, manifest);
  for (const auto& [key, path] : a.artifacts) check_file(a, manifest, path, false);
  if (a.tokenizer_path) check_file(a, manifest, *a.tokenizer_path, true);
  // The tokenizer's companions (tokenizer_config.json: special tokens, chat template), read
  // beside it without the manifest naming them elsewhere: every other file it records.
  for (const auto& [name, sum] : a.checksums) {
    const fs::path file = file_in_dir(a.dir, manifest, "checksums." + name, name);
    const bool program = std::any_of(a.artifacts.begin(), a.artifacts.end(), [&](const auto& kv) { return kv.second == file; });
    if (!program && file != a.tokenizer_path) check_file(a, manifest, file, true);
  }
  return a;
}

}  // namespace genai::runtime
