// Errors that cross layer boundaries. Two kinds, because the CLI maps them to two exit codes:
// InputError (exit 2) means the user handed us something invalid (file, option, value) and the
// message names it; Failure (exit 1) means a valid request could not be carried out.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace genai {

enum class ExitCode : int { kOk = 0, kFailure = 1, kBadInput = 2 };

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

class InputError : public Error {
 public:
  explicit InputError(std::string message) : Error(ExitCode::kBadInput, std::move(message)) {}
};

class Failure : public Error {
 public:
  explicit Failure(std::string message) : Error(ExitCode::kFailure, std::move(message)) {}
};

template <typename... Args>
[[noreturn]] void throw_input_error(fmt::format_string<Args...> f, Args&&... args) {
  throw InputError(fmt::format(f, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void throw_failure(fmt::format_string<Args...> f, Args&&... args) {
  throw Failure(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace genai
