// MethodRunner over a graph::GraphExecutor: the float interpreter (graph::InterpreterExecutor) or
// the QDQ reference (quant::QdqExecutor, whose float signature carries dequantized values). The
// scheduler's buffers are wrapped as tensors without copying; the graph's results are copied
// into its output buffers.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "graph/executor.h"
#include "llm/method_runner.h"

namespace genai {

class GraphMethodRunner : public MethodRunner {
 public:
  // `origin` and `context_source` are what errors name (see MethodRunner).
  explicit GraphMethodRunner(std::unique_ptr<graph::GraphExecutor> executor, std::string origin = "the decoder graphs",
                             std::string context_source = "--max_context_len");

  std::string origin() const override { return origin_; }
  std::string context_source() const override { return context_source_; }
  std::vector<std::string> method_names() const override;
  bool has_method(std::string_view method) const override { return executor_->has_graph(method); }
  const std::vector<runtime::IoDesc>& inputs(std::string_view method) const override;
  const std::vector<runtime::IoDesc>& outputs(std::string_view method) const override;
  void run(std::string_view method, std::span<const runtime::BufferRef> inputs,
           std::span<const runtime::BufferRef> outputs) override;

 private:
  struct Signature {
    std::vector<runtime::IoDesc> inputs, outputs;
  };
  const Signature& signature(std::string_view method) const;

  std::unique_ptr<graph::GraphExecutor> executor_;
  std::string origin_, context_source_;
  mutable std::map<std::string, Signature, std::less<>> signatures_;  // filled on first use
};

}  // namespace genai
