// Which engine runs each stage (only ExecuTorch exists) and the backend every stage targets.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "target/backend_type.h"

namespace genai::pipeline {

enum class EngineType { kExecuTorch };
std::string_view engine_type_name(EngineType type);  // "executorch"

class EngineProxy {
 public:
  // Every key must be a stage name; InputError "Unknown stage '<s>'. Valid stages: ..." otherwise.
  // Stages not listed use ExecuTorch; an empty map is valid.
  EngineProxy(std::map<std::string, EngineType, std::less<>> stage_engines, target::BackendType backend_type);

  EngineType engine(std::string_view stage) const;
  target::BackendType backend_type() const { return backend_type_; }
  const std::map<std::string, EngineType, std::less<>>& stage_engines() const { return stage_engines_; }

 private:
  std::map<std::string, EngineType, std::less<>> stage_engines_;
  target::BackendType backend_type_;
};

}  // namespace genai::pipeline
