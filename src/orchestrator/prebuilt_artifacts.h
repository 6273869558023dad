// The artifact map of an earlier run's artifact dir (--pre_gen_pte DIR): the programs its
// manifest.json names (runtime::open_artifact_dir checks the manifest and every file).
#pragma once

#include <filesystem>

#include "pipeline/artifact_keys.h"

namespace genai::orchestrator {

// InputError naming --pre_gen_pte, the dir and what is wrong with it.
pipeline::ArtifactMap read_prebuilt_artifacts(const std::filesystem::path& dir);

}  // namespace genai::orchestrator
