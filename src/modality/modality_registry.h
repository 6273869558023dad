// The process-wide registry of modalities (modality.h). The built-in ones (vision, audio) are
// registered on first use; another is one register_modality call, after which every stage handles
// it (tests/modality/fake_modality_test.cpp shows a third one through quantization and
// compilation).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "modality/modality.h"

namespace genai::modality {

// Idempotent by name: the first registration stays. Its encoder program's names come first
// (pipeline::register_encoder_program: the compiler and the artifact dir know them from there);
// Failure otherwise.
void register_modality(std::unique_ptr<Modality> modality);
// Registration order, built-ins first.
std::vector<const Modality*> modalities();
// null when absent.
const Modality* find_modality(std::string_view name);
// The modalities `model` has, registration order.
std::vector<const Modality*> modalities_of(const Model& model);
// A model with any modality: its decoder takes embeddings, which the encoders' rows replace (the
// token embedding is a graph of its own).
bool takes_media(const Model& model);

}  // namespace genai::modality
