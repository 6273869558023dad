// Encoder programs: an encoder beside the decoder (a modality's: the vision tower, the audio
// tower, ...) is one graph compiled into a program of its own, its graph name and artifact key a
// pair. The built-in pairs are vision_encoder and audio_encoder; a modality the enums do not name
// registers its pair at run time (modality/modality_registry.h), and from then on the names parse,
// print and compile like the built-in ones: the compiler, the manifest and the artifact dir take
// the pairs from here instead of naming each encoder.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "pipeline/artifact_keys.h"
#include "pipeline/graph_names.h"

namespace genai::pipeline {

struct EncoderProgram {
  GraphName graph;
  ArtifactKey key;
};

// The built-in pairs, then the registered ones in registration order.
std::vector<EncoderProgram> encoder_programs();
// The artifact key of an encoder graph; nullopt for the decoder's graphs.
std::optional<ArtifactKey> encoder_program_key(GraphName graph);
bool is_encoder_program(ArtifactKey key);

// A new pair of names (valid for the rest of the process). Registering the same pair again returns
// it; a name already taken by another graph or key is a Failure.
EncoderProgram register_encoder_program(std::string_view graph_name, std::string_view artifact_key);

// Used by the name tables of graph_names.cpp and artifact_keys.cpp for values past their enums.
std::optional<std::string_view> registered_graph_name(GraphName graph);
std::optional<GraphName> registered_graph(std::string_view name);
std::optional<std::string_view> registered_artifact_key_name(ArtifactKey key);
std::optional<ArtifactKey> registered_artifact_key(std::string_view name);
std::vector<ArtifactKey> registered_artifact_keys();
std::vector<std::string_view> registered_graph_names();

}  // namespace genai::pipeline
