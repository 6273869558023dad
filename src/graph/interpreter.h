// Executes any graph in float32, op by op, as the numerical reference for graphs (and, with an
// observer, as the place calibration sees every intermediate tensor). Inputs are bound by name;
// int32 inputs carry token ids and positions.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include "core/tensor.h"
#include "graph/graph.h"

namespace genai::graph {

using TensorMap = std::map<std::string, Tensor>;
using InputMap = std::map<std::string, const Tensor*>;

struct InterpreterOptions {
  // Called for every op result right after it is computed (value, tensor).
  std::function<void(const Value&, const Tensor&)> observer;
  // Quantized executors (src/quant): computes an op in place of the float kernel when it returns
  // a tensor (integer matmuls, dequantized weight tables); nullopt keeps the float kernel.
  std::function<std::optional<Tensor>(const Op&, const Value&, const std::vector<const Tensor*>&)> override_op;
  // Rewrites each op result in place right after it is computed, before the observer sees it
  // (fake quantization of activations).
  std::function<void(const Value&, Tensor&)> transform;
};

// Runs `g` on `inputs` (every graph input must be bound, with its exact dtype and shape;
// otherwise InputError naming the input) and returns the graph outputs by output name.
// Out-of-range gather indices (token ids, positions) are InputErrors naming the value.
TensorMap interpret(const Graph& g, const InputMap& inputs, const InterpreterOptions& options = {});

}  // namespace genai::graph
