// A pipeline stage: one strategy behind the stage's name. invoke() logs the start and the
// duration, records both for the summary, and turns any failure into a pipeline::StageError
// whose message starts with the stage name and carries the cause (exit code kept: bad input
// stays 2). Tests make a stage fail by registering a failing strategy for it (the test seam is
// the registry: tests/orchestrator/fault_injection.h); production code reads no switch for it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "orchestrator/strategy.h"

namespace genai::orchestrator {

// What one stage did, for the summary: in pipeline order, skipped stages included.
struct StageRecord {
  std::string name;
  std::string engine;  // empty when skipped
  bool ran = false;
  bool failed = false;
  double seconds = 0.0;
  StageNotes notes = StageNotes::object();
};

namespace detail {
void log_stage_start(std::string_view stage, std::string_view engine);
void log_stage_done(std::string_view stage, double seconds);
// Call inside a catch block: rethrows a StageError as is, anything else as a StageError of
// `stage` caused by the current exception.
[[noreturn]] void rethrow_as_stage_error(std::string_view stage);
}  // namespace detail

template <typename S>
class Stage {
 public:
  using Input = typename S::Input;
  using Output = typename S::Output;

  Stage(std::string engine, std::unique_ptr<S> strategy) : engine_(std::move(engine)), strategy_(std::move(strategy)) {}

  std::string_view name() const { return StageOf<S>::name; }
  const std::string& engine() const { return engine_; }

  // `record` (optional) receives the timing and the strategy's notes, also on failure.
  Output invoke(const pipeline::PipelineContext& context, const Input& input, StageRecord* record = nullptr) const {
    StageRecord local;
    StageRecord& r = record ? *record : local;
    r.name = std::string(name());
    r.engine = engine_;
    r.ran = true;
    detail::log_stage_start(name(), engine_);
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    try {
      Output out = strategy_->invoke(context, input, r.notes);
      r.seconds = elapsed();
      detail::log_stage_done(name(), r.seconds);
      return out;
    } catch (...) {
      r.seconds = elapsed();
      r.failed = true;
      detail::rethrow_as_stage_error(name());
    }
  }

  // More work of this stage after later stages ran (quantization's check of the deployed
  // program): `work(strategy, notes)`, its time added to `record` and failures wrapped as invoke's.
  template <typename Work>
  void resume(StageRecord& record, Work&& work) const {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      work(*strategy_, record.notes);
      record.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (...) {
      record.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      record.failed = true;
      detail::rethrow_as_stage_error(name());
    }
  }

 private:
  std::string engine_;
  std::unique_ptr<S> strategy_;
};

using ModelPreparationStage = Stage<ModelPreparationStrategy>;
using QuantizationStage = Stage<QuantizationStrategy>;
using CompilationStage = Stage<CompilationStrategy>;
using InferenceStage = Stage<InferenceStrategy>;

}  // namespace genai::orchestrator
