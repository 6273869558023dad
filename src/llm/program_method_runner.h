// MethodRunner over a loaded compiled program (runtime::ProgramInstance): the scheduler's
// buffers go to the program's methods as they are, so a decode step costs the program's own work.
// Further programs may join with their methods (the tok_embedding artifact beside the
// text_decoder: upstream's separate .pte per artifact key); constants are the first program's.
#pragma once

#include <map>
#include <memory>

#include "llm/method_runner.h"
#include "llm/upstream_decoder_io.h"
#include "runtime/program_instance.h"

namespace genai {

class ProgramMethodRunner : public MethodRunner {
 public:
  explicit ProgramMethodRunner(std::unique_ptr<runtime::ProgramInstance> program) : program_(std::move(program)) {
    name_unnamed_methods(*program_);
  }

  std::string origin() const override { return program_->path().string(); }
  std::string context_source() const override;
  std::vector<std::string> method_names() const override;
  bool has_method(std::string_view method) const override;
  const std::vector<runtime::IoDesc>& inputs(std::string_view method) const override {
    const auto it = named_.find(method);
    return it != named_.end() ? it->second.inputs : owner(method).inputs(method);
  }
  const std::vector<runtime::IoDesc>& outputs(std::string_view method) const override {
    const auto it = named_.find(method);
    return it != named_.end() ? it->second.outputs : owner(method).outputs(method);
  }
  void run(std::string_view method, std::span<const runtime::BufferRef> inputs,
           std::span<const runtime::BufferRef> outputs) override {
    owner(method).execute(method, inputs, outputs);
  }
  // InputError naming both files when a method of `program` is already there.
  void add_program(std::unique_ptr<runtime::ProgramInstance> program);
  std::optional<int64_t> constant_int(std::string_view name) const override { return program_->constant_int(name); }
  std::optional<double> constant_double(std::string_view name) const override { return program_->constant_double(name); }
  std::optional<std::vector<double>> constant_numbers(std::string_view name) const override;

  const runtime::ProgramInstance& program() const { return *program_; }

 private:
  // The program holding `method` (the first one when none does: its error names the methods).
  runtime::ProgramInstance& owner(std::string_view method) const;
  // Methods whose program names none of their tensors get upstream's positional names
  // (llm/upstream_decoder_io.h), as upstream's runner knows them.
  void name_unnamed_methods(const runtime::ProgramInstance& program);

  std::unique_ptr<runtime::ProgramInstance> program_;
  std::vector<std::unique_ptr<runtime::ProgramInstance>> more_;
  std::map<std::string, DecoderSignature, std::less<>> named_;
};

}  // namespace genai
