#include "modality/modality_registry.h"

#include <mutex>

#include "core/error.h"
#include "modality/audio_modality.h"
#include "modality/vision_modality.h"

namespace genai::modality {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Modality>> modalities;  // registration order
};

void add(Registry& r, std::unique_ptr<Modality> modality) {
  for (const auto& m : r.modalities)
    if (m->name() == modality->name()) return;  // idempotent: the first registration stays
  r.modalities.push_back(std::move(modality));
}

// The built-in modalities first, so that no caller has to register them.
Registry& registry() {
  static Registry r;
  static const bool built_in = [] {
    add(r, make_vision_modality());
    add(r, make_audio_modality());
    return true;
  }();
  (void)built_in;
  return r;
}

}  // namespace

void register_modality(std::unique_ptr<Modality> modality) {
  if (!modality) throw_failure("register_modality: null modality");
  const pipeline::EncoderProgram p = modality->program();
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  // The program's names must already be the pipeline's (a registered pair parses back to itself).
  if (pipeline::encoder_program_key(p.graph) != p.key)
    throw_failure("register_modality {}: its encoder program is not registered (pipeline::register_encoder_program)",
                  modality->name());
  add(r, std::move(modality));
}

std::vector<const Modality*> modalities() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<const Modality*> out;
  for (const auto& m : r.modalities) out.push_back(m.get());
  return out;
}

const Modality* find_modality(std::string_view name) {
  for (const Modality* m : modalities())
    if (m->name() == name) return m;
  return nullptr;
}

std::vector<const Modality*> modalities_of(const Model& model) {
  std::vector<const Modality*> out;
  for (const Modality* m : modalities())
    if (m->present_in(model)) out.push_back(m);
  return out;
}

bool takes_media(const Model& model) { return !modalities_of(model).empty(); }

}  // namespace genai::modality
