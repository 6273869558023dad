// "Run graph `name` with these named input buffers -> named output buffers": the one thing a
// runner needs from whatever executes graphs. The interpreter implements it here; compiled
// programs implement it in the runtime, so the runner code (src/llm) is shared.
#pragma once

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

 private:
  const Graph& graph(std::string_view name) const;
  GraphMap graphs_;
};

}  // namespace genai::graph
