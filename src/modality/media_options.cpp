#include "modality/media_options.h"

#include "core/error.h"
#include "modality/modality_registry.h"

namespace genai::modality {

std::vector<std::string> media_paths(const Modality& modality, const pipeline::MediaFiles& files) {
  const auto it = files.find(modality.option_name());
  return it == files.end() ? std::vector<std::string>{} : it->second;
}

const Modality* given_modality(const pipeline::MediaFiles& files) {
  const Modality* given = nullptr;
  for (const Modality* m : modalities()) {
    if (media_paths(*m, files).empty()) continue;
    if (given) throw_input_error("--{} and --{}: a model takes one kind of media", given->option_name(), m->option_name());
    given = m;
  }
  return given;
}

}  // namespace genai::modality
