// `genai synth`: writes a random-weight model of a real shape with a usable tokenizer.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/log.h"
#include "model/synth.h"

namespace genai::cli {
namespace {

CommandAction setup_synth(CLI::App& sub) {
  auto req = std::make_shared<SynthRequest>();
  auto json_out = std::make_shared<bool>(false);
  std::string shapes;
  for (const std::string& s : synth_shape_names()) shapes += (shapes.empty() ? "" : ", ") + s;
  sub.add_option("--shape", req->shape, "Model shape: " + shapes)->capture_default_str();
  sub.add_option("--arch", req->arch,
                 "Architecture (default: the shape's own, phi3 for phi-4-mini and llama for the others): " +
                     supported_architectures() + "; or smolvlm, internvl3, granite_speech (multimodal folders, --format hf)");
  sub.add_option("--format", req->format, "Checkpoint format: gguf, hf (folder), llama2c (.bin + tokenizer.bin)")
      ->capture_default_str();
  sub.add_option("--seed", req->seed, "Seed of the random weights and vocabulary")->capture_default_str();
  sub.add_option("--out", req->out, "Output file (gguf, llama2c) or folder (hf)")->required();
  sub.add_option("--weight_type", req->weight_type,
                 "Stored weight type: f32, f16, bf16, q8_0, q4_0 (gguf); f32, f16, bf16 (hf); f32 (llama2c)")
      ->capture_default_str();
  sub.add_flag("--json", *json_out, "Print a JSON summary on stdout");
  return [req, json_out]() {
    SynthResult r = write_synth_model(*req);
    log::info("wrote {} ({} {}, {} parameters)", r.checkpoint.string(), req->format, req->shape, r.parameters);
    if (*json_out) {
      nlohmann::json j = {{"checkpoint", r.checkpoint.string()}, {"tokenizer", r.tokenizer.string()},
                          {"format", req->format},             {"shape", req->shape},
                          {"arch", req->arch.empty() || find_architecture(req->arch) ? std::string(architecture_name(r.config.arch)) : req->arch},
                          {"weight_type", req->weight_type},   {"seed", req->seed},
                          {"parameters", r.parameters}};
      std::printf("%s\n", j.dump().c_str());
    }
    return 0;
  };
}

const CommandRegistration kSynth("synth", "Write a random-weight model (gguf, hf, llama2c) with a tokenizer",
                                 setup_synth);

}  // namespace
}  // namespace genai::cli
