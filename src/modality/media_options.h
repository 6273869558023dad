// A run's media as its options give them: each modality's files come from its own option
// (Modality::option_name, e.g. --image_path); a modality whose option the option table does not
// have (one registered at run time without a CLI option) gets no files, and calibrates on
// generated media.
#pragma once

#include <string>
#include <vector>

#include "modality/modality.h"
#include "options/option_values.h"

namespace genai::modality {

std::vector<std::string> media_paths(const Modality& modality, const options::OptionValues& values);
// The one modality whose files the run gives, or null. InputError naming both options when two
// modalities are given files: a prompt carries one kind of media.
const Modality* given_modality(const options::OptionValues& values);

}  // namespace genai::modality
