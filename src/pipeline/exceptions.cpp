#include "pipeline/exceptions.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <typeinfo>

#include <fmt/format.h>

namespace genai::pipeline {
namespace {

// Unqualified class name of an exception ("InputError", "out_of_range").
std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::string name = (status == 0 && demangled) ? demangled.get() : type.name();
  if (auto colon = name.rfind("::"); colon != std::string::npos) name = name.substr(colon + 2);
  return name;
}

struct Cause {
  std::string text;
  ExitCode code = ExitCode::kFailure;
};

Cause describe(const std::exception_ptr& cause) {
  if (!cause) return {};
  try {
    std::rethrow_exception(cause);
  } catch (const Error& e) {
    return {fmt::format(" (caused by {}: {})", type_name(typeid(e)), e.what()), e.code()};
  } catch (const std::exception& e) {
    return {fmt::format(" (caused by {}: {})", type_name(typeid(e)), e.what()), ExitCode::kFailure};
  } catch (...) {
    return {" (caused by an unknown exception)", ExitCode::kFailure};
  }
}

}  // namespace

StageError::StageError(std::string stage_name, const std::string& message, std::exception_ptr cause)
    : PipelineError(fmt::format("[{}] {}{}", stage_name, message, describe(cause).text), describe(cause).code),
      stage_name_(std::move(stage_name)),
      cause_(std::move(cause)) {}

EngineNotAvailableError::EngineNotAvailableError(std::string engine_name, const std::optional<std::string>& message)
    : PipelineError(fmt::format("Engine '{}' is not available{}", engine_name, message ? ": " + *message : std::string())),
      engine_name_(std::move(engine_name)) {}

}  // namespace genai::pipeline
