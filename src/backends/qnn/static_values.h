// Op results that no graph input reaches (their operands are weights, constants or other such
// results), computed once at export time with the QDQ reference's arithmetic.
//
// Why: the QNN HTP compiler folds an input-independent subgraph itself when it finalizes the
// graph, and that fails for some of them. Granite Speech's Q-Former starts from its learned
// queries alone: Gather(query table [3, 32], constant ids) -> LayerNorm -> layer 0's
// self-attention (linears, Q.Kt, softmax, P.V, output linear, residual) -> LayerNorm, all
// before the first op that reads the audio (the cross-attention). Exported as ops, that chain
// made finalize fail with QNN_COMMON_ERROR_MEM_ALLOC (exit 1) even for the tiny synthetic model
// ([1, 3, 32] tensors); every prefix of it up to the residual Add compiled, adding the
// LayerNorm after it failed, and the same chain compiled when the query ids were a graph input.
// Sent as integer initializers on each result's encoding, the chain leaves nothing to fold.
#pragma once

#include <map>
#include <vector>

#include "core/tensor.h"
#include "graph/graph.h"
#include "pipeline/graph_bundle.h"

namespace genai::backends::qnn {

struct StaticValues {
  std::vector<bool> static_op;                // per op of the graph: its result is input-independent
  std::map<graph::ValueId, Tensor> frontier;  // those that an input-dependent op or an output reads:
                                              // the QDQ reference's (fake-quantized) values
};

// Float op results only: an integer-valued op result keeps its op (and so do the ops after it).
StaticValues fold_static_values(const pipeline::GraphBundle& bundle);

}  // namespace genai::backends::qnn
