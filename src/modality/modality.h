// A modality: a kind of media a model takes beside text (images, audio), with everything the
// stages need from it in one place. The stage strategies, the compiler and the artifact dir name no
// modality: they loop over the registered ones (modality_registry.h) and use
//   - its encoder program: graph name and artifact key (pipeline/encoder_programs.h);
//   - its run option (--image_path) and the constant naming its media token;
//   - whether a model has it, its float graph bundle and its processor settings;
//   - its calibration samples for the quantization stage (encoder_quantization_step.h);
//   - its encoder opened from a compiled program or from the float model, as a MediaPrompter that
//     turns the run's files into the prompt's media.
// Adding a modality is one implementation of this interface and one register_modality call.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/interpreter.h"
#include "llm/generation.h"
#include "llm/generation_stats.h"
#include "model/model.h"
#include "pipeline/encoder_programs.h"
#include "pipeline/graph_bundle.h"
#include "runtime/artifact_dir.h"

namespace genai::modality {

// A modality's encoder ready for a run: the run's files (images, clips) into the first prompt's
// media, encoded. InputError naming the file for an unreadable or unsuitable one.
class MediaPrompter {
 public:
  virtual ~MediaPrompter() = default;
  virtual PromptMedia prompt(const std::vector<std::string>& paths) = 0;
};

// What the quantization stage calibrates a modality's encoder on.
struct EncoderCalibration {
  std::vector<graph::TensorMap> samples;  // the float graph's inputs, one map per sample
  pipeline::Metadata metadata;            // the quantized program's constants (its token id, ...)
  std::string output;                     // the output whose SQNR is measured
  std::string source;                     // the option's name when files were given, else what was generated
};

class Modality {
 public:
  virtual ~Modality() = default;

  // "vision", "audio": what messages and logs call it ("the vision encoder").
  virtual std::string_view name() const = 0;
  // Its encoder's graph name and artifact key.
  virtual pipeline::EncoderProgram program() const = 0;
  // The option that gives a run its files ("image_path" for --image_path); also the files the
  // quantization stage calibrates on when given.
  virtual std::string_view option_name() const = 0;
  // The encoder program's constant with the media token's id ("get_image_token_id").
  virtual std::string_view token_id_constant() const = 0;
  // What one calibration sample is called in reports ("tiles", "clips").
  virtual std::string_view sample_unit() const = 0;

  virtual bool present_in(const Model& model) const = 0;
  // The processor settings that travel with the encoder program into the artifact dir.
  virtual std::filesystem::path processor_config(const Model& model) const = 0;
  // The encoder's float graph with its metadata (float programs, and the graph calibrated).
  virtual pipeline::GraphBundle float_bundle(const Model& model) const = 0;
  // From `paths` (the option's files) when given, else from generated media.
  virtual EncoderCalibration calibration(const Model& model, const std::vector<std::string>& paths) const = 0;

  // The encoder from the artifact dir's program and processor; InputError naming the program or
  // the manifest when either is missing or not this modality's.
  virtual std::unique_ptr<MediaPrompter> open_program(const runtime::ArtifactDir& dir) const = 0;
  // The encoder over the model's float graph, run by the interpreter.
  virtual std::unique_ptr<MediaPrompter> open_float(std::shared_ptr<const Model> model) const = 0;

  // A run's media in its statistics (files given, time spent reading and encoding them).
  virtual void add_stats(const PromptMedia& media, double ms, GenerationStats& stats) const = 0;
  // The name of that time in the stage's notes and performance metrics ("image_ms",
  // "image_encode_ms"), and of the file count in the notes ("images").
  virtual std::string_view notes_count_name() const = 0;
  virtual std::string_view notes_ms_name() const = 0;
  virtual std::string_view metric_ms_name() const = 0;
};

}  // namespace genai::modality
