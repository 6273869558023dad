#include "modality/encoder.h"

#include "core/error.h"
#include "graph/executor.h"
#include "llm/graph_method_runner.h"
#include "llm/program_method_runner.h"

namespace genai::modality {
namespace {

// The float graph has no constant methods: the bundle's integer metadata stand in for them.
class FloatEncoderRunner : public GraphMethodRunner {
 public:
  FloatEncoderRunner(std::unique_ptr<graph::GraphExecutor> executor, std::string origin, std::string context_source,
                     std::map<std::string, int64_t, std::less<>> constants)
      : GraphMethodRunner(std::move(executor), std::move(origin), std::move(context_source)),
        constants_(std::move(constants)) {}
  std::optional<int64_t> constant_int(std::string_view name) const override {
    const auto it = constants_.find(name);
    return it == constants_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

 private:
  std::map<std::string, int64_t, std::less<>> constants_;
};

}  // namespace

Encoder::Encoder(std::unique_ptr<MethodRunner> runner, std::string method)
    : runner_(std::move(runner)), method_(std::move(method)) {
  const std::string origin = runner_->origin();
  if (!runner_->has_method(method_)) throw_input_error("{}: no {} method", origin, method_);
  const auto& outs = runner_->outputs(method_);
  if (outs.size() != 1) throw_input_error("{}: method {} must have one output, it has {}", origin, method_, outs.size());
  for (const auto& d : runner_->inputs(method_)) in_.push_back(std::make_unique<EncoderIo>(*runner_, d, method_));
  out_ = std::make_unique<EncoderIo>(*runner_, outs[0], method_);
}

Encoder::~Encoder() = default;

const std::vector<runtime::IoDesc>& Encoder::inputs() const { return runner_->inputs(method_); }

const runtime::IoDesc& Encoder::output() const { return out_->desc(); }

void Encoder::run(std::span<const float* const> inputs, float* output) {
  if (inputs.size() != in_.size())
    throw_failure("internal: {} inputs for method {} of {}", inputs.size(), method_, in_.size());
  std::vector<runtime::BufferRef> in;
  for (size_t i = 0; i < in_.size(); ++i) {
    in_[i]->write(inputs[i]);
    in.push_back(in_[i]->buffer());
  }
  const runtime::BufferRef out = out_->buffer();
  runner_->run(method_, in, std::span(&out, 1));
  out_->read(output);
}

std::unique_ptr<MethodRunner> float_encoder_runner(const pipeline::GraphBundle& bundle, std::string method,
                                                   std::string origin, std::string context_source) {
  std::map<std::string, int64_t, std::less<>> constants;
  for (const auto& [name, value] : bundle.metadata())
    if (const auto* i = std::get_if<int64_t>(&value)) constants.emplace(name, *i);
  graph::GraphMap graphs{{std::move(method), bundle.graph()}};
  return std::make_unique<FloatEncoderRunner>(std::make_unique<graph::InterpreterExecutor>(std::move(graphs)),
                                              std::move(origin), std::move(context_source), std::move(constants));
}

std::unique_ptr<ProgramMethodRunner> program_encoder_runner(const runtime::ArtifactDir& dir, pipeline::ArtifactKey key) {
  const auto it = dir.artifacts.find(key);
  if (it == dir.artifacts.end())
    throw_input_error("{}: no {} program among its artifacts", dir.dir.string(), pipeline::artifact_key_name(key));
  return std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(it->second, dir.checksum_of(it->second)));
}

std::filesystem::path processor_of(const runtime::ArtifactDir& dir, pipeline::ArtifactKey key) {
  const auto it = dir.processors.find(key);
  if (it == dir.processors.end())
    throw_input_error("{}: a {} artifact but no processor (preprocessor_config.json)", (dir.dir / "manifest.json").string(),
                      pipeline::artifact_key_name(key));
  return it->second;
}

}  // namespace genai::modality
