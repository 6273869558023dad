#include "eval/compiled_evaluation.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "backends/register_builtin.h"
#include "compile/compiler.h"
#include "compile/decoder_metadata.h"
#include "core/error.h"
#include "llm/compiled_session.h"
#include "model/model.h"
#include "runtime/program_instance.h"
#include "target/qnn_spec_builder.h"
#include "target/soc.h"

namespace genai::eval {
namespace {

// Any SoC our HTP backend lowers for: the program runs on the host either way, and the
// arithmetic (the integer rules of the HTP) does not depend on the SoC.
constexpr std::string_view kEvalSoc = "SM8650";

constexpr std::string_view kDirPrefix = "genai-eval-";

// The process a private directory belongs to: genai-eval-<pid>-<random>; 0 for another name.
pid_t owner_of(const std::string& name) {
  if (!name.starts_with(kDirPrefix)) return 0;
  const size_t dash = name.find('-', kDirPrefix.size());
  if (dash == std::string::npos) return 0;
  try {
    return static_cast<pid_t>(std::stol(name.substr(kDirPrefix.size(), dash - kDirPrefix.size())));
  } catch (const std::exception&) {
    return 0;
  }
}

// A process killed while it evaluated (SIGKILL runs no destructor) leaves its directory behind:
// the directories of processes that no longer exist are removed. A reused pid keeps its old
// directory until that process is gone too.
void remove_orphaned_dirs(const std::filesystem::path& temp) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(temp, ec)) {
    const pid_t owner = owner_of(entry.path().filename().string());
    if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH) std::filesystem::remove_all(entry.path(), ec);
  }
}

std::filesystem::path private_temp_dir() {
  const std::filesystem::path temp = std::filesystem::temp_directory_path();
  remove_orphaned_dirs(temp);
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const auto dir = temp / fmt::format("{}{}-{:08x}{:08x}", kDirPrefix, ::getpid(), rd(), rd());
    std::error_code ec;
    if (std::filesystem::create_directory(dir, ec)) return dir;
  }
  throw_failure("eval: cannot create a temporary directory under {}", temp.string());
}

}  // namespace

EvalProgramShape eval_program_shape(int64_t window) { return {window, window + 1}; }

CompiledWindows::CompiledWindows(const Model& model, const pipeline::GraphBundles& bundles, const std::string& adapter)
    : dir_(private_temp_dir()) {
  try {
    backends::register_builtin_backends();
    compile::CompileRequest req;
    req.soc = &target::resolve_soc(kEvalSoc);
    req.backend_type = target::BackendType::kHtpBackend;
    req.graphs = compile::with_decoder_metadata(model.config, bundles);
    req.compile_specs = target::QnnSpecBuilder(kEvalSoc).build();
    req.artifact_dir = dir_;
    req.sync_programs = false;  // removed with this object; a crash leaves nothing to trust
    const compile::CompileResult r = compile::compile_artifacts(req);
    session_ = make_program_session(runtime::ProgramInstance::load(r.artifacts.at(pipeline::ArtifactKey::kTextDecoder)));
    if (!adapter.empty()) session_->set_adapter(adapter);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

CompiledWindows::CompiledWindows(const std::filesystem::path& text_decoder) {
  backends::register_builtin_backends();
  session_ = make_program_session(runtime::ProgramInstance::load(text_decoder));
}

CompiledWindows::~CompiledWindows() {
  session_.reset();  // unmaps the program before its file goes
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

int64_t CompiledWindows::max_window() const { return session_->max_context(); }

WindowLogits CompiledWindows::window_logits() {
  return [this](std::span<const int32_t> tokens) {
    if (static_cast<int64_t>(tokens.size()) > session_->max_context())
      throw_failure("eval: a window of {} tokens exceeds the program's context of {}", tokens.size(),
                    session_->max_context());
    session_->reset();
    return session_->forward_all(tokens);
  };
}

}  // namespace genai::eval
