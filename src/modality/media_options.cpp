#include "modality/media_options.h"

#include "core/error.h"
#include "modality/modality_registry.h"
#include "options/option_table.h"

namespace genai::modality {

std::vector<std::string> media_paths(const Modality& modality, const options::OptionValues& values) {
  if (!options::find_option(modality.option_name())) return {};
  return values.get_list(modality.option_name());
}

const Modality* given_modality(const options::OptionValues& values) {
  const Modality* given = nullptr;
  for (const Modality* m : modalities()) {
    if (media_paths(*m, values).empty()) continue;
    if (given) throw_input_error("--{} and --{}: a model takes one kind of media", given->option_name(), m->option_name());
    given = m;
  }
  return given;
}

}  // namespace genai::modality
