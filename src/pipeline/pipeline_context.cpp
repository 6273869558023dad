#include "pipeline/pipeline_context.h"

#include <algorithm>

#include "pipeline/exceptions.h"

namespace genai::pipeline {
namespace {

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
}

}  // namespace

PipelineContext::PipelineContext(std::string model_name, std::string soc_model, std::vector<std::string> prompt,
                                 std::string artifact_dir, options::OptionValues extra_options)
    : model_name_(std::move(model_name)),
      soc_model_(std::move(soc_model)),
      prompt_(std::move(prompt)),
      artifact_dir_(std::move(artifact_dir)),
      extra_options_(std::move(extra_options)) {}

PipelineContextBuilder PipelineContext::builder() { return PipelineContextBuilder(); }

PipelineContextBuilder& PipelineContextBuilder::with_model(std::string model_name) {
  model_name_ = std::move(model_name);
  return *this;
}

PipelineContextBuilder& PipelineContextBuilder::with_soc(std::string soc_model) {
  soc_model_ = std::move(soc_model);
  return *this;
}

PipelineContextBuilder& PipelineContextBuilder::with_prompt(const std::string& prompt) {
  if (blank(prompt)) throw ConfigValidationError("prompt cannot be empty or blank");
  prompt_ = {prompt};
  return *this;
}

PipelineContextBuilder& PipelineContextBuilder::with_prompt(const std::vector<std::string>& prompts) {
  std::vector<std::string> kept;
  std::copy_if(prompts.begin(), prompts.end(), std::back_inserter(kept), [](const std::string& p) { return !blank(p); });
  if (kept.empty()) throw ConfigValidationError("prompt list cannot be empty (all entries are blank or list is empty)");
  prompt_ = std::move(kept);
  return *this;
}

PipelineContextBuilder& PipelineContextBuilder::with_artifact_dir(std::string dir) {
  artifact_dir_ = std::move(dir);
  return *this;
}

PipelineContextBuilder& PipelineContextBuilder::with_extra_options(options::OptionValues extra_options) {
  extra_options_ = std::move(extra_options);
  return *this;
}

PipelineContextBuilder& PipelineContextBuilder::prompt_optional(bool optional) {
  prompt_optional_ = optional;
  return *this;
}

PipelineContext PipelineContextBuilder::build() const {
  std::vector<std::string> missing;
  if (!model_name_) missing.push_back("model_name (use .with_model())");
  if (!soc_model_) missing.push_back("soc_model (use .with_soc())");
  if (prompt_.empty() && !prompt_optional_) missing.push_back("prompt (use .with_prompt())");
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw ConfigValidationError("Cannot build PipelineContext, missing required fields: " + list);
  }
  return PipelineContext(*model_name_, *soc_model_, prompt_, artifact_dir_, extra_options_);
}

}  // namespace genai::pipeline
