#include "orchestrator/stage.h"

#include <exception>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "pipeline/exceptions.h"

namespace genai::orchestrator::detail {

void log_stage_start(std::string_view stage, std::string_view engine) { log::info("[{}] started ({})", stage, engine); }

void log_stage_done(std::string_view stage, double seconds) { log::info("[{}] completed in {:.1f}s", stage, seconds); }

void rethrow_as_stage_error(std::string_view stage) {
  try {
    throw;
  } catch (const pipeline::StageError&) {
    throw;
  } catch (...) {
    const std::exception_ptr cause = std::current_exception();
    log::debug("[{}] failed", stage);
    throw pipeline::StageError(std::string(stage), "stage failed", cause);
  }
}

}  // namespace genai::orchestrator::detail
