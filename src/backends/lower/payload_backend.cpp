#include "backends/lower/payload_backend.h"

#include "backends/lower/lower_graph.h"
#include "core/error.h"

namespace genai::backends {

std::optional<std::string> PayloadBackend::check_support(const pipeline::GraphBundle& bundle,
                                                         const compile::LoweringTarget& target) const {
  return check_capabilities(caps_, bundle, target);
}

compile::LoweredMethod PayloadBackend::lower(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                             const compile::LoweringTarget& target) const {
  return lower_one(method_name, bundle, target, nullptr);
}

std::vector<compile::LoweredMethod> PayloadBackend::lower_group(std::span<const compile::GraphToLower> graphs,
                                                                const compile::LoweringTarget& target) const {
  SharedWeightData shared;
  std::vector<compile::LoweredMethod> out;
  for (const compile::GraphToLower& g : graphs) out.push_back(lower_one(g.method_name, *g.bundle, target, &shared));
  return out;
}

compile::LoweredMethod PayloadBackend::lower_one(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                                 const compile::LoweringTarget& target, SharedWeightData* shared) const {
  if (auto why = check_capabilities(caps_, bundle, target)) throw_failure("backend {}: {}", caps_.backend, *why);
  const ProgramPrecision precision =
      lowers_to_float16(caps_, bundle, target) ? ProgramPrecision::kFloat16 : ProgramPrecision::kQuantized;
  return lower_graph(method_name, bundle, target, delegate_id_, precision, shared);
}

}  // namespace genai::backends
