#include "orchestrator/prebuilt_artifacts.h"

#include "core/error.h"
#include "runtime/artifact_dir.h"

namespace genai::orchestrator {

pipeline::ArtifactMap read_prebuilt_artifacts(const std::filesystem::path& dir) {
  try {
    return runtime::open_artifact_dir(dir).artifacts;
  } catch (const InputError& e) {
    throw_input_error("--pre_gen_pte {}: {}", dir.string(), e.what());
  }
}

}  // namespace genai::orchestrator
