// A modality's encoder as the runner uses it: one method of a MethodRunner (the float interpreter
// on the encoder's graph, or the encoder's program), float inputs in, one float output out.
// Quantized programs take and give codes: each input and output moves through an EncoderIo
// (encoder_io.h), with the encodings the program publishes as constants. What the inputs mean
// (a tile's pixels, a clip's features and masks) is the modality's; this class only runs them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "llm/method_runner.h"
#include "llm/program_method_runner.h"
#include "modality/encoder_io.h"
#include "pipeline/encoder_programs.h"
#include "pipeline/graph_bundle.h"
#include "runtime/artifact_dir.h"

namespace genai::modality {

class Encoder {
 public:
  // InputError naming the runner's origin when it has no `method`, the method has not exactly one
  // output, or an input or output is neither float32 nor uint8 / uint16 codes with their constants.
  Encoder(std::unique_ptr<MethodRunner> runner, std::string method);
  ~Encoder();

  const MethodRunner& runner() const { return *runner_; }
  const std::string& method() const { return method_; }
  const std::vector<runtime::IoDesc>& inputs() const;
  const runtime::IoDesc& output() const;

  // Runs the method once: `inputs` in signature order, each pointing at its numel() floats;
  // the output's numel() floats into `output`.
  void run(std::span<const float* const> inputs, float* output);

 private:
  std::unique_ptr<MethodRunner> runner_;
  std::string method_;
  std::vector<std::unique_ptr<EncoderIo>> in_;
  std::unique_ptr<EncoderIo> out_;
};

// The runner of an encoder's float graph (its bundle) on the interpreter, as method `method`; the
// bundle's integer metadata are its int constants, as a compiled program's would be.
std::unique_ptr<MethodRunner> float_encoder_runner(const pipeline::GraphBundle& bundle, std::string method,
                                                   std::string origin, std::string context_source);
// The runner of the artifact dir's encoder program `key`, checked against the manifest's checksum.
// InputError naming the dir when it has no such program.
std::unique_ptr<ProgramMethodRunner> program_encoder_runner(const runtime::ArtifactDir& dir, pipeline::ArtifactKey key);
// The artifact dir's processor settings for `key`; InputError naming the manifest when absent.
std::filesystem::path processor_of(const runtime::ArtifactDir& dir, pipeline::ArtifactKey key);

}  // namespace genai::modality
