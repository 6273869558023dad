// A run's media as its settings give them (pipeline::MediaFiles, resolved from the options by
// orchestrator/stage_settings.h): each modality's files come from its own option
// (Modality::option_name, e.g. --image_path); a modality whose option the option table does not
// have (one registered at run time without a CLI option) gets no files, and calibrates on
// generated media.
#pragma once

#include <string>
#include <vector>

#include "modality/modality.h"
#include "pipeline/stage_settings.h"

namespace genai::modality {

std::vector<std::string> media_paths(const Modality& modality, const pipeline::MediaFiles& files);
// The one modality whose files the run gives, or null. InputError naming both options when two
// modalities are given files: a prompt carries one kind of media.
const Modality* given_modality(const pipeline::MediaFiles& files);

}  // namespace genai::modality
