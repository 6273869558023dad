// compile::Backend over our payload: a capability table, a delegate id and a backend type are
// all that differ between htp and gpu on the compile side.
#pragma once

#include <string>
#include <string_view>

#include "backends/lower/capabilities.h"
#include "backends/lower/lower_graph.h"
#include "compile/backend.h"

namespace genai::backends {

class PayloadBackend : public compile::Backend {
 public:
  PayloadBackend(const BackendCapabilities& caps, std::string_view delegate_id, target::BackendType type)
      : caps_(caps), delegate_id_(delegate_id), type_(type) {}
  std::string_view name() const override { return caps_.backend; }
  std::string_view delegate_id() const override { return delegate_id_; }
  target::BackendType backend_type() const override { return type_; }
  std::optional<std::string> check_support(const pipeline::GraphBundle& bundle,
                                           const compile::LoweringTarget& target) const override;
  compile::LoweredMethod lower(std::string_view method_name, const pipeline::GraphBundle& bundle,
                               const compile::LoweringTarget& target) const override;
  // The program's methods share their weight tensors (SharedWeightData).
  std::vector<compile::LoweredMethod> lower_group(std::span<const compile::GraphToLower> graphs,
                                                  const compile::LoweringTarget& target) const override;

 private:
  compile::LoweredMethod lower_one(std::string_view method_name, const pipeline::GraphBundle& bundle,
                                   const compile::LoweringTarget& target, SharedWeightData* shared) const;
  const BackendCapabilities& caps_;
  std::string delegate_id_;
  target::BackendType type_;
};

}  // namespace genai::backends
