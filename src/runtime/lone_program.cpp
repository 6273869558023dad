#include "runtime/lone_program.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"
#include "pipeline/graph_names.h"
#include "pte/program_reader.h"
#include "target/backend_type.h"
#include "target/compile_spec.h"
#include "target/soc.h"

namespace genai::runtime {
namespace {

namespace fs = std::filesystem;

// The target the program was compiled for, as its delegates' QNN compile specs record it. A spec
// that does not decode, or a chipset this build does not know, leaves it unnamed: the run does
// not need it, and the delegate's own executor reports a bad spec with the method's name.
void read_recorded_target(const pte::Program& program, ArtifactDir& out) {
  for (const pte::Method& m : program.methods) {
    for (const pte::Delegate& d : m.delegates) {
      std::optional<target::QnnOptions> o;
      try {
        o = target::options_from_specs(d.compile_specs);
      } catch (const InputError&) {
        continue;
      }
      if (!o) continue;
      if (o->soc_model != target::Chipset::UNKNOWN_SM) {
        try {
          out.soc_model = std::string(target::soc_info(o->soc_model).name);
        } catch (const InputError&) {
        }
      }
      if (o->backend_type != target::BackendType::kUndefinedBackend) out.backend = target::backend_type_name(o->backend_type);
      return;
    }
  }
}

}  // namespace

const std::vector<std::string>& lone_program_constants() {
  static const std::vector<std::string> names{"get_max_seq_len", "get_max_context_len", "get_vocab_size", "get_n_layers"};
  return names;
}

ArtifactDir open_lone_program(const fs::path& pte, std::string_view option) {
  std::error_code ec;
  if (!fs::is_regular_file(pte, ec))
    throw_input_error("{} {}: does not exist or is not a file (a .pte program)", option, pte.string());
  ArtifactDir a;
  a.has_manifest = false;
  a.manifest = nullptr;
  const fs::path file = fs::absolute(pte, ec);
  a.dir = (ec ? pte : file).parent_path();
  // The structure (flatbuffer, segments, indices) is verified here; content hashes at load.
  pte::LoadedProgram loaded;
  try {
    loaded = pte::read_program(ec ? pte : file);
  } catch (const InputError& e) {
    throw_input_error("{}: {}", option, e.what());
  }
  const pte::Program& program = loaded.program;

  std::vector<std::string> missing;
  const std::string kv(pipeline::graph_name_str(pipeline::GraphName::kKvForward));
  const pte::Method* kv_method = program.find_method(kv);
  if (!kv_method || pte::method_kind(*kv_method) == pte::MethodKind::kConstant) missing.push_back("method " + kv);
  for (const std::string& name : lone_program_constants()) {
    const pte::Method* m = program.find_method(name);
    if (!m || pte::method_kind(*m) != pte::MethodKind::kConstant) missing.push_back("constant method " + name);
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw_input_error("{} {}: lacks what the runner needs without a manifest: {} (a llama-style decoder program "
                      "has kv_forward, optionally prefill_forward, and the get_* constant methods)",
                      option, pte.string(), list);
  }
  if (const auto use_kv = program.constant_values("get_use_kv_cache"); use_kv.size() == 1) {
    const auto* b = std::get_if<pte::Bool>(&use_kv.front());
    const auto* i = std::get_if<pte::Int>(&use_kv.front());
    if ((b && !b->value) || (i && i->value == 0))
      throw_input_error("{} {}: get_use_kv_cache is false; the runner runs KV-cache decoder programs only", option,
                        pte.string());
  }
  read_recorded_target(program, a);
  a.artifacts[pipeline::ArtifactKey::kTextDecoder] = ec ? pte : file;
  return a;
}

}  // namespace genai::runtime
