// Strategies by (stage, engine). The engine of a stage comes from the EngineProxy
// (pipeline/engine_proxy.h; "executorch", our native ExecuTorch flow for the Qualcomm targets);
// another engine registers its four factories under its own name. The built-in strategies are
// added by register_builtin_strategies (builtin_strategies.h); tests fill their own registry.
#pragma once

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrator/strategy.h"

namespace genai::orchestrator {

template <typename S>
using StrategyFactory = std::function<std::unique_ptr<S>()>;

class StrategyRegistry {
 public:
  // Replaces an earlier factory of the same (stage, engine).
  template <typename S>
  void add(std::string engine, StrategyFactory<S> factory) {
    factories_[{std::string(StageOf<S>::name), std::move(engine)}] = std::move(factory);
  }

  bool contains(std::string_view stage, std::string_view engine) const;
  // Engines with a strategy for `stage`, sorted.
  std::vector<std::string> engines(std::string_view stage) const;

  // EngineNotAvailableError naming the engine, the stage and the engines that have one.
  template <typename S>
  std::unique_ptr<S> make(std::string_view engine) const {
    const auto it = factories_.find(std::pair<std::string, std::string>(StageOf<S>::name, engine));
    if (it == factories_.end()) throw_not_available(StageOf<S>::name, engine);
    auto strategy = std::any_cast<const StrategyFactory<S>&>(it->second)();
    if (!strategy) throw_not_available(StageOf<S>::name, engine);
    return strategy;
  }

 private:
  [[noreturn]] void throw_not_available(std::string_view stage, std::string_view engine) const;
  std::map<std::pair<std::string, std::string>, std::any> factories_;
};

}  // namespace genai::orchestrator
