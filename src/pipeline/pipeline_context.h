// PipelineContext: what one pipeline run is about (model, SoC, prompts, artifact folder, extra
// options). Immutable; built through PipelineContextBuilder, which rejects blank prompts and
// reports every missing field at once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "options/option_values.h"

namespace genai::pipeline {

inline constexpr const char* kDefaultArtifactDir = "./genai_artifacts";

class PipelineContextBuilder;

class PipelineContext {
 public:
  static PipelineContextBuilder builder();

  const std::string& model_name() const { return model_name_; }
  const std::string& soc_model() const { return soc_model_; }
  const std::vector<std::string>& prompt() const { return prompt_; }
  const std::string& artifact_dir() const { return artifact_dir_; }
  const options::OptionValues& extra_options() const { return extra_options_; }

 private:
  friend class PipelineContextBuilder;
  PipelineContext(std::string model_name, std::string soc_model, std::vector<std::string> prompt, std::string artifact_dir,
                  options::OptionValues extra_options);

  // const: a context cannot be changed after build(), not even by assignment.
  const std::string model_name_;
  const std::string soc_model_;
  const std::vector<std::string> prompt_;
  const std::string artifact_dir_;
  const options::OptionValues extra_options_;
};

class PipelineContextBuilder {
 public:
  PipelineContextBuilder& with_model(std::string model_name);
  PipelineContextBuilder& with_soc(std::string soc_model);
  // ConfigValidationError "prompt cannot be empty or blank" for a blank prompt; stored unstripped.
  PipelineContextBuilder& with_prompt(const std::string& prompt);
  // Keeps the non-blank entries in order; ConfigValidationError when none remain.
  PipelineContextBuilder& with_prompt(const std::vector<std::string>& prompts);
  PipelineContextBuilder& with_artifact_dir(std::string dir);
  PipelineContextBuilder& with_extra_options(options::OptionValues extra_options);
  // A run without inference (--compile_only): build() then accepts a missing prompt.
  PipelineContextBuilder& prompt_optional(bool optional = true);

  // ConfigValidationError "Cannot build PipelineContext, missing required fields: ..." listing
  // model_name, soc_model and prompt (each with the setter to use) that are missing.
  PipelineContext build() const;

 private:
  std::optional<std::string> model_name_;
  std::optional<std::string> soc_model_;
  std::vector<std::string> prompt_;
  std::string artifact_dir_ = kDefaultArtifactDir;
  options::OptionValues extra_options_;
  bool prompt_optional_ = false;
};

}  // namespace genai::pipeline
