// "Run graph `name` with these named input tensors -> named output tensors", over graphs held in
// memory: the float interpreter implements it here, the QDQ reference in quant (QdqExecutor).
// The decoder session does not schedule over this interface directly: llm/graph_method_runner.h
// adapts any GraphExecutor to the llm::MethodRunner that compiled programs implement too, so the
// one scheduler (llm/decoder_scheduler.h) drives graphs and programs alike.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/decoder_graphs.h"
#include "graph/interpreter.h"

namespace genai::graph {

struct IoSpec {
  std::string name;
  TensorType type;
};

class GraphExecutor {
 public:
  virtual ~GraphExecutor() = default;
  virtual bool has_graph(std::string_view name) const = 0;
  // Signature of graph `name` in order; InputError naming the graph and the valid names if absent.
  virtual std::vector<IoSpec> inputs(std::string_view name) const = 0;
  virtual std::vector<IoSpec> outputs(std::string_view name) const = 0;
  virtual TensorMap run(std::string_view name, const InputMap& inputs) = 0;
};

// Executes graphs with the float32 reference interpreter.
class InterpreterExecutor : public GraphExecutor {
 public:
  explicit InterpreterExecutor(GraphMap graphs);
  bool has_graph(std::string_view name) const override;
  std::vector<IoSpec> inputs(std::string_view name) const override;
  std::vector<IoSpec> outputs(std::string_view name) const override;
  TensorMap run(std::string_view name, const InputMap& inputs) override;
  // Sees every op result (per-tensor SQNR against the QDQ reference); empty: none.
  void set_observer(std::function<void(const Value&, const Tensor&)> observer) { observer_ = std::move(observer); }

 private:
  const Graph& graph(std::string_view name) const;
  GraphMap graphs_;
  std::function<void(const Value&, const Tensor&)> observer_;
};

}  // namespace genai::graph
