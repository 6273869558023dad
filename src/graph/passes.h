// The graph passes we have.
//   dead-code-elimination  removes ops whose results reach no graph output, and weights/constants
//                          no op reads (graph inputs stay: they are the signature).
//   canonicalize           reshape(reshape(x)) -> reshape(x); transpose(transpose(x)) -> one
//                          transpose with the composed permutation; drops reshapes to the same
//                          shape and identity transposes (uses read the operand instead).
#pragma once

#include "graph/pass_manager.h"

namespace genai::graph {

bool eliminate_dead_code(Graph& g);
bool canonicalize(Graph& g);

Pass dead_code_elimination_pass();
Pass canonicalize_pass();
// canonicalize then dead-code-elimination: what the decoder builder runs.
PassManager default_pipeline();

}  // namespace genai::graph
