#include "pipeline/engine_proxy.h"

#include "core/error.h"
#include "pipeline/stage_names.h"

namespace genai::pipeline {

std::string_view engine_type_name(EngineType type) {
  switch (type) {
    case EngineType::kExecuTorch: return "executorch";
  }
  return "unknown";
}

EngineProxy::EngineProxy(std::map<std::string, EngineType, std::less<>> stage_engines, target::BackendType backend_type)
    : stage_engines_(std::move(stage_engines)), backend_type_(backend_type) {
  for (const auto& [stage, engine] : stage_engines_) {
    if (!is_stage_name(stage)) throw_input_error("Unknown stage '{}'. Valid stages: {}", stage, valid_stage_names());
  }
}

EngineType EngineProxy::engine(std::string_view stage) const {
  if (auto it = stage_engines_.find(stage); it != stage_engines_.end()) return it->second;
  return EngineType::kExecuTorch;
}

}  // namespace genai::pipeline
