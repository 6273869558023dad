// The compilation strategy: lower every graph through the compiler adapter, group the methods by
// artifact key, size the group's scratch, add the constant methods, then write the programs, the
// tokenizer and finally manifest.json (the commit marker), all into a staged copy swapped in at once.
#include "compile/compiler.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <limits>

#include <fmt/format.h>

#include "compile/compiler_adapter.h"
#include "compile/constant_methods.h"
#include "compile/runtime_tokenizer.h"
#include "compile/source_checksum.h"
#include "core/atomic_dir.h"
#include "core/atomic_file.h"
#include "model/lora_adapter.h"
#include "pipeline/adapter_graphs.h"
#include "core/chunked_digest.h"
#include "core/error.h"
#include "core/log.h"
#include "core/mapped_file.h"
#include "pipeline/encoder_programs.h"
#include "pte/payload_digests.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "target/compile_spec.h"

namespace genai::compile {
namespace {

struct Group {
  std::vector<std::pair<pipeline::GraphName, CompiledMethod>> methods;
  uint64_t scratch = 0;      // largest planned_bytes of its methods
  uint64_t lower_bound = 0;  // largest lower bound of its methods
  pte::Program program;
};

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// Unions the methods' named data: one entry per key (a key names its content, so equal keys must
// carry equal bytes), sorted by key so the program does not depend on method order.
std::vector<pte::NamedData> union_named_data(const Group& group, pipeline::ArtifactKey key) {
  std::map<std::string, const pte::NamedData*> by_key;
  for (const auto& [name, method] : group.methods) {
    for (const pte::NamedData& d : method.named_data) {
      auto [it, inserted] = by_key.emplace(d.key, &d);
      if (!inserted && !(it->second->data == d.data)) {
        throw_failure("compile {}: named data key {} holds different bytes in two methods", artifact_key_name(key),
                      d.key);
      }
    }
  }
  std::vector<pte::NamedData> out;
  out.reserve(by_key.size());
  for (const auto& [k, d] : by_key) out.push_back(*d);
  return out;
}

nlohmann::json manifest_json(const CompileRequest& request, const CompileResult& result,
                             const std::optional<RuntimeTokenizer>& tokenizer, const std::optional<std::string>& sha) {
  nlohmann::json m = nlohmann::json::object();
  m["format"] = "genai-artifacts";
  m["version"] = 1;
  nlohmann::json artifacts = nlohmann::json::object(), methods = nlohmann::json::object();
  for (const auto& [key, path] : result.artifacts) artifacts[std::string(artifact_key_name(key))] = path.filename().string();
  for (const auto& [key, names] : result.methods) methods[std::string(artifact_key_name(key))] = names;
  m["artifacts"] = artifacts;
  m["methods"] = methods;
  m["tokenizer"] = tokenizer ? nlohmann::json(tokenizer->file_name) : nlohmann::json(nullptr);
  if (!request.processor_paths.empty()) {
    nlohmann::json processors = nlohmann::json::object();
    for (const auto& [key, path] : request.processor_paths)
      processors[std::string(artifact_key_name(key))] = processor_file_name(key);
    m["processors"] = std::move(processors);
  }
  m["soc_model"] = std::string(request.soc->name);
  m["backend"] = target::backend_type_name(request.backend_type);
  m["options"] = request.options;
  if (request.checkpoint_path) {
    m["source"] = {{"path", request.checkpoint_path->string()}, {"sha256", *sha}};
  } else {
    m["source"] = nullptr;
  }
  m["planned_bytes"] = result.planned_bytes;
  m["lower_bound_bytes"] = result.lower_bound_bytes;
  if (request.params > 0) m["params"] = request.params;
  // Size and digest of every file named above, read back from the dir: the runtime refuses a
  // truncated, swapped or corrupted file instead of running it (runtime/artifact_dir.h).
  nlohmann::json checksums = nlohmann::json::object();
  auto record = [&](const std::filesystem::path& file, const MappedFile& bytes) -> nlohmann::json& {
    return checksums[file.filename().string()] = {
               {"size", bytes.size()},
               {std::string(digest_field(DigestKind::kXxh3_128)), chunked_digest_hex(bytes, DigestKind::kXxh3_128)}};
  };
  for (const auto& [key, path] : result.artifacts) {
    const auto mapped = MappedFile::open(path);
    nlohmann::json& entry = record(path, *mapped);  // its pages leave the resident set as they are hashed
    // Per method, its delegate payloads' digest: a corrupted payload is then named by method.
    const auto digests = pte::delegate_payload_digests(pte::read_program_bytes(mapped->bytes(), path.string(), mapped).program);
    if (!digests.empty()) entry["payloads"] = digests;
  }
  // Beside the manifest: the staged dir while a replacement is written (core/atomic_dir.h).
  if (tokenizer) {
    const auto dir = result.manifest_path.parent_path();
    record(dir / tokenizer->file_name, *MappedFile::open(dir / tokenizer->file_name));
    for (const auto& companion : tokenizer->companions) record(dir / companion, *MappedFile::open(dir / companion));
  }
  for (const auto& [key, path] : request.processor_paths) {
    const auto file = result.manifest_path.parent_path() / processor_file_name(key);
    record(file, *MappedFile::open(file));
  }
  m["checksums"] = checksums;
  return m;
}

}  // namespace

pipeline::ArtifactKey artifact_key_of(pipeline::GraphName graph) {
  // An encoder's graph is a program of its own, whichever modality it serves.
  if (const auto key = pipeline::encoder_program_key(graph)) return *key;
  // An adapter's graphs are methods of their base graph's program.
  if (const auto adapted = pipeline::adapter_graph_of(graph)) return artifact_key_of(adapted->base);
  switch (graph) {
    case pipeline::GraphName::kKvForward:
    case pipeline::GraphName::kPrefillForward:
    case pipeline::GraphName::kKvForwardAr1:
      return pipeline::ArtifactKey::kTextDecoder;
    case pipeline::GraphName::kTokEmbeddingKvForward:
    case pipeline::GraphName::kTokEmbeddingPrefillForward:
    case pipeline::GraphName::kTokEmbeddingKvForwardAr1:
      return pipeline::ArtifactKey::kTokEmbedding;
    default:
      break;
  }
  throw_failure("compile: graph {} belongs to no artifact", static_cast<int>(graph));
}

std::string artifact_file_name(pipeline::ArtifactKey key) { return std::string(artifact_key_name(key)) + ".pte"; }

std::string processor_file_name(pipeline::ArtifactKey key) {
  return fmt::format("{}_{}", artifact_key_name(key), kProcessorFileName);
}

std::vector<CompileSpec> specs_with_spill_fill_size(const std::vector<CompileSpec>& specs, uint64_t scratch) {
  std::vector<CompileSpec> out = specs;
  for (CompileSpec& spec : out) {
    if (spec.key != kQnnCompileSpecKey) continue;
    target::QnnOptions options = target::decode_qnn_options(spec.value);
    if (!options.htp_options) return out;
    if (scratch > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      throw_failure("compile: scratch of {} bytes does not fit the compile spec's max_sf_buf_size (int32)", scratch);
    }
    options.htp_options->max_sf_buf_size = static_cast<int32_t>(scratch);
    spec.value = target::encode_qnn_options(options);
    return out;  // the runtime reads the first QNN entry only
  }
  return out;
}

CompileResult compile_artifacts(const CompileRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  namespace fs = std::filesystem;
  if (!request.soc) throw_input_error("compile: no target SoC (--soc_model; valid: {})", target::valid_soc_names());
  if (request.graphs.empty()) throw_input_error("compile: no graphs to compile");
  if (request.artifact_dir.empty()) throw_input_error("compile: no artifact dir (-a/--artifact)");
  const std::string soc_name(request.soc->name);
  const std::string backend_name = target::backend_type_name(request.backend_type);
  const bool qnn_lowering = request.lowering == "qnn";
  if (qnn_lowering && request.backend_type != target::BackendType::kHtpBackend)
    throw_input_error("--lowering qnn needs --backend htp, got --backend {}", backend_name);
  if (!qnn_lowering && request.lowering != "genai")
    throw_input_error("--lowering {}: valid choices: genai, qnn", request.lowering);
  const Backend* backend = qnn_lowering ? find_backend("qnn") : find_backend(request.backend_type);
  if (!backend && qnn_lowering) throw_input_error("--lowering qnn: this build has no QNN lowering");
  if (!backend) {
    const auto names = backend_names();
    throw_input_error("--backend {}: this build cannot compile for it on {} (available backends: {})", backend_name,
                      soc_name, names.empty() ? std::string("none registered") : join(names));
  }

  LoweringTarget target;
  target.soc = request.soc;
  target.backend_type = request.backend_type;
  target.compile_specs = request.compile_specs;
  target.use_fp16 = request.use_fp16;
  target.shared_buffer = request.shared_buffer;
  target.kv_fusion = request.kv_fusion;
  check_target_matches_specs(target);  // before any lowering work

  // The checkpoint's checksum (a read of the whole file) runs beside the lowering, which leaves
  // a core idle for much of its time; it is awaited before the dir is touched.
  std::future<std::string> source_sha;
  if (request.checkpoint_path) {
    source_sha = std::async(std::launch::async, [path = *request.checkpoint_path] {
      const auto start = std::chrono::steady_clock::now();
      std::string sha = source_checksum(path);
      log::debug("checksum of {}: {:.2f} s", path.string(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      return sha;
    });
  }

  // Lower the graphs of each program together (kv_forward before prefill_forward: GraphBundles is
  // ordered by name enum).
  const CompilerAdapter adapter(*backend);
  std::map<pipeline::ArtifactKey, std::vector<std::pair<pipeline::GraphName, GraphToLower>>> to_lower;
  for (const auto& [graph, bundle] : request.graphs)
    to_lower[artifact_key_of(graph)].emplace_back(graph, GraphToLower{std::string(pipeline::graph_name_str(graph)), &bundle});
  std::map<pipeline::ArtifactKey, Group> groups;
  for (const auto& [key, items] : to_lower) {
    std::vector<GraphToLower> graphs;
    for (const auto& [graph, g] : items) graphs.push_back(g);
    const auto start = std::chrono::steady_clock::now();
    std::vector<CompiledMethod> compiled = key == pipeline::ArtifactKey::kTextDecoder && request.num_sharding > 1
                                               ? adapter.compile_sharded_group(graphs, request.num_sharding, target)
                                               : adapter.compile_group(graphs, target);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (size_t i = 0; i < items.size(); ++i) {
      log::info("compiled {} for {} ({}, lowering {}): planned {} bytes, lower bound {} ({:.2f} s for {} graph{})",
                graphs[i].method_name, soc_name, backend_name, request.lowering, compiled[i].planned_bytes,
                compiled[i].lower_bound_bytes, seconds, items.size(), items.size() == 1 ? "" : "s");
      groups[key].methods.emplace_back(items[i].first, std::move(compiled[i]));
    }
  }

  CompileResult result;
  for (auto& [key, group] : groups) {
    // Real methods sorted by name, as upstream's emitter orders them.
    std::stable_sort(group.methods.begin(), group.methods.end(),
                     [](const auto& a, const auto& b) { return a.second.method.name < b.second.method.name; });
    for (const auto& [graph, m] : group.methods) {
      group.scratch = std::max(group.scratch, m.planned_bytes);
      group.lower_bound = std::max(group.lower_bound, m.lower_bound_bytes);
    }
    if (group.scratch > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw_failure("compile {}: scratch of {} bytes does not fit a program", artifact_key_name(key), group.scratch);
    }
    const std::vector<CompileSpec> specs = specs_with_spill_fill_size(request.compile_specs, group.scratch);
    pte::Program& program = group.program;
    std::vector<std::string> names;
    for (auto& [graph, m] : group.methods) {
      m.method.non_const_buffer_sizes = {0, static_cast<int64_t>(group.scratch)};
      for (pte::Delegate& d : m.method.delegates) d.compile_specs = specs;
      program.methods.push_back(m.method);
      names.push_back(m.method.name);
      result.method_reports[m.method.name] = MethodReport{m.delegate_id, m.planned_bytes, m.lower_bound_bytes};
    }
    program.named_data = union_named_data(group, key);
    if (key == pipeline::ArtifactKey::kTextDecoder) {
      auto decode = request.graphs.find(pipeline::GraphName::kKvForward);
      if (decode == request.graphs.end()) {
        throw_input_error("compile: the text decoder needs the kv_forward graph (its constant methods come from it)");
      }
      for (pte::Method& c : decoder_constant_methods(decode->second)) {
        names.push_back(c.name);
        program.methods.push_back(std::move(c));
      }
      // Each LoRA adapter's description, from its decode method's metadata.
      for (const auto& [graph, bundle] : request.graphs) {
        const auto adapted = pipeline::adapter_graph_of(graph);
        if (!adapted || adapted->base != pipeline::GraphName::kKvForward) continue;
        for (pte::Method& c : metadata_constant_methods(bundle))
          if (c.name.rfind(kLoraAdapterConstantPrefix, 0) == 0) {
            names.push_back(c.name);
            program.methods.push_back(std::move(c));
          }
      }
    } else if (pipeline::is_encoder_program(key)) {
      // An encoder's program holds its one graph; its metadata become its constant methods.
      for (pte::Method& c : metadata_constant_methods(request.graphs.at(group.methods.front().first))) {
        names.push_back(c.name);
        program.methods.push_back(std::move(c));
      }
    }
    const auto check_start = std::chrono::steady_clock::now();
    if (auto problem = pte::find_program_problem(program)) {
      throw_failure("compile {}: inconsistent program: {}", artifact_key_name(key), *problem);
    }
    log::debug("program {} assembled and checked: {:.2f} s", artifact_key_name(key),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - check_start).count());
    result.methods[key] = std::move(names);
    result.artifacts[key] = request.artifact_dir / artifact_file_name(key);
    result.planned_bytes += group.scratch;
    result.lower_bound_bytes += group.lower_bound;
  }

  // Source checksum before touching the dir: an unreadable checkpoint fails with nothing written.
  std::optional<std::string> sha;
  if (source_sha.valid()) sha = source_sha.get();

  // Writing. Everything goes to a staged copy of the dir, manifest.json last, and one swap makes
  // it the dir's content: a kill at any moment leaves the previous complete set or the new one
  // (core/atomic_dir.h; with no previous set, files are written in place and the manifest, the
  // commit marker, comes last).
  std::error_code ec;
  if (fs::exists(request.artifact_dir, ec) && !fs::is_directory(request.artifact_dir, ec)) {
    throw_input_error("-a/--artifact {}: exists and is not a folder", request.artifact_dir.string());
  }
  fs::create_directories(request.artifact_dir, ec);
  if (ec) throw_input_error("-a/--artifact {}: cannot create the folder: {}", request.artifact_dir.string(), ec.message());
  DirectoryReplacement replacement(request.artifact_dir, std::string(kManifestFileName));
  const fs::path& stage = replacement.staging();
  // While writing, the result names the staged files (what the manifest describes); after the
  // swap, the dir's.
  const pipeline::ArtifactMap final_paths = result.artifacts;
  for (auto& [key, path] : result.artifacts) path = stage / path.filename();
  for (const auto& [key, group] : groups) {
    const auto start = std::chrono::steady_clock::now();
    pte::WriteOptions write_options;
    write_options.sync = request.sync_programs;
    const pte::ProgramLayout layout = pte::write_program(result.artifacts.at(key), group.program, write_options);
    log::info("wrote {} ({} bytes, {} methods, {} named data, {:.2f} s)", final_paths.at(key).string(),
              layout.file_size, group.program.methods.size(), group.program.named_data.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  groups.clear();  // the programs are on disk: their weights' bytes need not stay in memory
  std::optional<RuntimeTokenizer> tokenizer;
  if (request.tokenizer_path) {
    const auto start = std::chrono::steady_clock::now();
    tokenizer = write_runtime_tokenizer(*request.tokenizer_path, stage);
    log::debug("tokenizer {}: {:.2f} s", tokenizer->file_name,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  for (const auto& [key, path] : request.processor_paths) {
    if (!pipeline::is_encoder_program(key) || !result.artifacts.contains(key))
      throw_failure("compile: a processor for {}, which is no encoder program of this request", artifact_key_name(key));
    write_file_atomic(stage / processor_file_name(key), MappedFile::open(path)->bytes());
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.manifest_path = stage / kManifestFileName;
  write_file_atomic(result.manifest_path, manifest_json(request, result, tokenizer, sha).dump(2) + "\n");
  replacement.commit();
  result.artifacts = final_paths;
  result.manifest_path = request.artifact_dir / kManifestFileName;
  return result;
}

}  // namespace genai::compile
