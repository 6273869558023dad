#include "orchestrator/strategy_registry.h"

#include <fmt/format.h>

#include "pipeline/exceptions.h"

namespace genai::orchestrator {

bool StrategyRegistry::contains(std::string_view stage, std::string_view engine) const {
  return factories_.contains(std::pair<std::string, std::string>(stage, engine));
}

std::vector<std::string> StrategyRegistry::engines(std::string_view stage) const {
  std::vector<std::string> out;
  for (const auto& [key, factory] : factories_) {
    if (key.first == stage) out.push_back(key.second);
  }
  return out;  // map order: sorted by engine within a stage
}

void StrategyRegistry::throw_not_available(std::string_view stage, std::string_view engine) const {
  std::string known;
  for (const auto& e : engines(stage)) known += (known.empty() ? "" : ", ") + e;
  throw pipeline::EngineNotAvailableError(
      std::string(engine),
      fmt::format("no {} strategy for it (engines with one: {})", stage, known.empty() ? "none" : known));
}

}  // namespace genai::orchestrator
