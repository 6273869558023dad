// MethodRunner over a loaded compiled program (runtime::ProgramInstance): the scheduler's
// buffers go to the program's methods as they are, so a decode step costs the program's own work.
#pragma once

#include <memory>

#include "llm/method_runner.h"
#include "runtime/program_instance.h"

namespace genai {

class ProgramMethodRunner : public MethodRunner {
 public:
  explicit ProgramMethodRunner(std::unique_ptr<runtime::ProgramInstance> program) : program_(std::move(program)) {}

  std::string origin() const override { return program_->path().string(); }
  std::string context_source() const override;
  std::vector<std::string> method_names() const override { return program_->method_names(); }
  bool has_method(std::string_view method) const override { return program_->has_method(method); }
  const std::vector<runtime::IoDesc>& inputs(std::string_view method) const override { return program_->inputs(method); }
  const std::vector<runtime::IoDesc>& outputs(std::string_view method) const override { return program_->outputs(method); }
  void run(std::string_view method, std::span<const runtime::BufferRef> inputs,
           std::span<const runtime::BufferRef> outputs) override {
    program_->execute(method, inputs, outputs);
  }
  std::optional<int64_t> constant_int(std::string_view name) const override { return program_->constant_int(name); }
  std::optional<double> constant_double(std::string_view name) const override { return program_->constant_double(name); }
  std::optional<std::vector<double>> constant_numbers(std::string_view name) const override;

  const runtime::ProgramInstance& program() const { return *program_; }

 private:
  std::unique_ptr<runtime::ProgramInstance> program_;
};

}  // namespace genai
