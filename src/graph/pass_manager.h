// Named graph passes run in order, with the verifier after every pass so a broken rewrite is
// reported by the pass that made it (and the op it left behind), not by a later consumer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace genai::graph {

struct Pass {
  std::string name;
  // Rewrites the graph; returns true when it changed anything.
  std::function<bool(Graph&)> run;
};

class PassManager {
 public:
  void add(Pass pass) { passes_.push_back(std::move(pass)); }
  // Verifies the input, then runs each pass and verifies. Throws Failure
  // "graph <g>: after pass '<name>': op #i '<result>' (<kind>): <problem>" on a broken graph.
  // Returns the names of the passes that changed the graph.
  std::vector<std::string> run(Graph& g) const;
  const std::vector<Pass>& passes() const { return passes_; }

 private:
  std::vector<Pass> passes_;
};

}  // namespace genai::graph
