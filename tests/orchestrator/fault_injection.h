// The test seam for "this stage fails": wraps the strategy a registry holds for one stage in one
// that throws Failure before the real one runs. Production code has no switch for it; tests
// install it on the registry they build the pipeline from.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/strategy_registry.h"

namespace genai::orchestrator::testing {

template <typename S>
class FailingStrategy final : public S {
 public:
  typename S::Output invoke(const pipeline::PipelineContext&, const typename S::Input&, StageNotes&) override {
    throw_failure("fault injected into {}", StageOf<S>::name);
  }
};

template <typename S>
void fail_if(StrategyRegistry& registry, std::string_view stage, const std::string& engine) {
  if (stage == StageOf<S>::name) registry.add<S>(engine, [] { return std::make_unique<FailingStrategy<S>>(); });
}

// `stage` (a stage name) fails with "fault injected into <stage>" under `engine`.
inline void inject_fault(StrategyRegistry& registry, std::string_view stage,
                         const std::string& engine = std::string(kDefaultEngine)) {
  fail_if<ModelPreparationStrategy>(registry, stage, engine);
  fail_if<QuantizationStrategy>(registry, stage, engine);
  fail_if<CompilationStrategy>(registry, stage, engine);
  fail_if<InferenceStrategy>(registry, stage, engine);
}

}  // namespace genai::orchestrator::testing
