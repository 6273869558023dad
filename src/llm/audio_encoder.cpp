#include "llm/audio_encoder.h"

#include <algorithm>

#include "core/error.h"
#include "graph/executor.h"
#include "graph/speech_encoder_graph.h"
#include "llm/graph_method_runner.h"

namespace genai {
namespace {

const std::string kAudioMethod(graph::kAudioEncoder);

}  // namespace

AudioEncoder::AudioEncoder(std::unique_ptr<MethodRunner> runner) : runner_(std::move(runner)) {
  const std::string origin = runner_->origin();
  if (!runner_->has_method(kAudioMethod)) throw_input_error("{}: no {} method", origin, kAudioMethod);
  const auto& ins = runner_->inputs(kAudioMethod);
  const auto& outs = runner_->outputs(kAudioMethod);
  const std::vector<std::string> want{std::string(graph::kInputFeatures), std::string(graph::kFrameMask), "atten_mask"};
  bool shaped = ins.size() == want.size() && outs.size() == 1 && outs[0].name == graph::kAudioFeatures;
  for (size_t i = 0; shaped && i < want.size(); ++i) shaped = ins[i].name == want[i];
  if (shaped) {
    const auto &f = ins[0].shape, &m = ins[2].shape, &o = outs[0].shape;
    shaped = f.size() == 3 && f[0] == 1 && f[1] > 0 && f[2] > 0 && m.size() == 4 && m[1] == 1 && m[2] == m[3] && m[2] > 0 &&
             m[0] * m[2] == f[1] && o.size() == 3 && o[0] == 1 && o[1] > 0 && o[2] > 0;
    if (shaped) rows_ = f[1], width_ = f[2], context_ = m[2], tokens_ = o[1], dim_ = o[2];
  }
  if (!shaped)
    throw_input_error("{}: method {} must map input_features [1, rows, width], frame_mask and atten_mask "
                      "[blocks, 1, context, context] to audio_features [1, tokens, dim]",
                      origin, kAudioMethod);
  const auto capacity = runner_->constant_int("get_audio_capacity");
  if (!capacity || *capacity < 1 || *capacity > rows_)
    throw_input_error("{}: get_audio_capacity must be a row count in [1, {}]", origin, rows_);
  capacity_ = *capacity;
  for (const auto& d : ins) in_.push_back(std::make_unique<EncoderIo>(*runner_, d, kAudioMethod));
  out_ = std::make_unique<EncoderIo>(*runner_, outs[0], kAudioMethod);
}

AudioEncoder::~AudioEncoder() = default;

std::vector<float> AudioEncoder::encode(const media::SpeechFeatures& clip) {
  if (clip.audio_tokens > tokens_)
    throw_failure("internal: {} audio tokens from a graph of {}", clip.audio_tokens, tokens_);
  const graph::TensorMap inputs = graph::speech_encoder_inputs(clip, width_, context_, capacity_, rows_);
  std::vector<runtime::BufferRef> in;
  for (auto& io : in_) {
    io->write(inputs.at(io->desc().name).data<float>());
    in.push_back(io->buffer());
  }
  const runtime::BufferRef out = out_->buffer();
  runner_->run(kAudioMethod, in, std::span(&out, 1));
  std::vector<float> all(static_cast<size_t>(tokens_ * dim_));
  out_->read(all.data());
  all.resize(static_cast<size_t>(clip.audio_tokens * dim_));
  return all;
}

std::unique_ptr<AudioEncoder> make_graph_audio_encoder(std::shared_ptr<const SpeechTower> tower, int64_t rows) {
  const int64_t capacity = graph::speech_encoder_capacity(tower->config, rows);
  auto g = graph::build_speech_encoder_graph(std::move(tower), rows);
  // The float graph has no constant methods: the capacity is the runner's only one.
  class Runner : public GraphMethodRunner {
   public:
    Runner(std::unique_ptr<graph::GraphExecutor> e, int64_t capacity)
        : GraphMethodRunner(std::move(e), "the audio encoder graph", "the audio length"), capacity_(capacity) {}
    std::optional<int64_t> constant_int(std::string_view name) const override {
      return name == "get_audio_capacity" ? std::optional<int64_t>(capacity_) : std::nullopt;
    }

   private:
    int64_t capacity_;
  };
  return std::make_unique<AudioEncoder>(
      std::make_unique<Runner>(std::make_unique<graph::InterpreterExecutor>(graph::GraphMap{{kAudioMethod, g}}), capacity));
}

}  // namespace genai
