#include "llm/graph_method_runner.h"

#include <cstring>

#include "core/error.h"
#include "graph/decoder_graphs.h"

namespace genai {

GraphMethodRunner::GraphMethodRunner(std::unique_ptr<graph::GraphExecutor> executor, std::string origin,
                                     std::string context_source)
    : executor_(std::move(executor)), origin_(std::move(origin)), context_source_(std::move(context_source)) {}

std::vector<std::string> GraphMethodRunner::method_names() const {
  // An executor does not list its graphs; the names a decoder uses are all the scheduler asks for.
  std::vector<std::string> names;
  for (std::string_view base : {graph::kKvForward, graph::kPrefillForward, graph::kKvForwardAr1}) {
    for (const std::string& n : {std::string(base), std::string(graph::kTokEmbeddingPrefix) + std::string(base)})
      if (executor_->has_graph(n)) names.push_back(n);
  }
  return names;
}

const GraphMethodRunner::Signature& GraphMethodRunner::signature(std::string_view method) const {
  auto it = signatures_.find(method);
  if (it != signatures_.end()) return it->second;
  Signature s;
  for (const auto& spec : executor_->inputs(method)) s.inputs.push_back({spec.name, spec.type.dtype, spec.type.shape});
  for (const auto& spec : executor_->outputs(method)) s.outputs.push_back({spec.name, spec.type.dtype, spec.type.shape});
  return signatures_.emplace(std::string(method), std::move(s)).first->second;
}

const std::vector<runtime::IoDesc>& GraphMethodRunner::inputs(std::string_view method) const {
  return signature(method).inputs;
}

const std::vector<runtime::IoDesc>& GraphMethodRunner::outputs(std::string_view method) const {
  return signature(method).outputs;
}

void GraphMethodRunner::run(std::string_view method, std::span<const runtime::BufferRef> inputs,
                            std::span<const runtime::BufferRef> outputs) {
  const Signature& s = signature(method);
  if (inputs.size() != s.inputs.size() || outputs.size() != s.outputs.size())
    throw_failure("graph {}: {} inputs and {} outputs given, the signature has {} and {}", method, inputs.size(),
                  outputs.size(), s.inputs.size(), s.outputs.size());
  std::vector<Tensor> views;
  views.reserve(inputs.size());
  graph::InputMap in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& d = s.inputs[i];
    views.push_back(Tensor::view(d.dtype, d.shape, inputs[i].data, nullptr));
    in[d.name] = &views.back();
  }
  const graph::TensorMap out = executor_->run(method, in);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& d = s.outputs[i];
    auto it = out.find(d.name);
    if (it == out.end()) throw_failure("graph {}: output {} missing", method, d.name);
    const Tensor& t = it->second;
    if (t.dtype() != d.dtype || t.shape() != d.shape)
      throw_failure("graph {}: output {} is {}{}, its signature says {}{}", method, d.name, dtype_name(t.dtype()),
                    shape_to_string(t.shape()), dtype_name(d.dtype), shape_to_string(d.shape));
    std::memcpy(outputs[i].data, t.raw(), outputs[i].bytes);
  }
}

}  // namespace genai
