// Pipeline errors. They are genai::Errors, so the CLI maps them to exit codes: a StageError keeps
// the code of its cause (bad input stays exit 2), configuration errors are bad input.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include "core/error.h"

namespace genai::pipeline {

class PipelineError : public Error {
 public:
  explicit PipelineError(std::string message, ExitCode code = ExitCode::kFailure) : Error(code, std::move(message)) {}
};

// "[<stage>] <message>" + " (caused by <Type>: <what>)" when there is a cause.
class StageError : public PipelineError {
 public:
  StageError(std::string stage_name, const std::string& message, std::exception_ptr cause = nullptr);
  const std::string& stage_name() const { return stage_name_; }
  std::exception_ptr original_exception() const { return cause_; }

 private:
  std::string stage_name_;
  std::exception_ptr cause_;
};

// Invalid pipeline configuration found while building it (exit 2).
class ConfigValidationError : public PipelineError {
 public:
  explicit ConfigValidationError(std::string message) : PipelineError(std::move(message), ExitCode::kBadInput) {}
};

// "Engine '<name>' is not available" + ": <message>" when given.
class EngineNotAvailableError : public PipelineError {
 public:
  explicit EngineNotAvailableError(std::string engine_name, const std::optional<std::string>& message = std::nullopt);
  const std::string& engine_name() const { return engine_name_; }

 private:
  std::string engine_name_;
};

}  // namespace genai::pipeline
