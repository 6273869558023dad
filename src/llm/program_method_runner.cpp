#include "llm/program_method_runner.h"

#include <fmt/format.h>

namespace genai {

std::string ProgramMethodRunner::context_source() const {
  return fmt::format("get_max_context_len of {}", program_->path().string());
}

}  // namespace genai
