#include "graph/pass_manager.h"

#include "graph/verifier.h"

namespace genai::graph {

std::vector<std::string> PassManager::run(Graph& g) const {
  verify_graph_or_throw(g, "before the first pass");
  std::vector<std::string> changed;
  for (const Pass& p : passes_) {
    if (p.run(g)) changed.push_back(p.name);
    verify_graph_or_throw(g, "after pass '" + p.name + "'");
  }
  return changed;
}

}  // namespace genai::graph
