// Float reference forward throughput on real shapes with synthetic weights: prefill (one batch of
// N tokens, weights read once per batch) against decode (one token per forward). Tokens/s is the
// items_per_second counter, on wall time since the work runs on the thread pool. `genai bench
// --checkpoint` measures the same on a file.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "model/reference_decoder.h"
#include "model/synth.h"
#include "model/weight_layout.h"

namespace genai {
namespace {

ReferenceDecoder& decoder_for(const std::string& shape) {
  static std::map<std::string, std::unique_ptr<ReferenceDecoder>> cache;
  auto& d = cache[shape];
  if (!d) {
    const ModelConfig config = synth_config(shape);
    Weights weights;
    for (const WeightSpec& spec : expected_weights(config)) weights.add(spec.name, synth_tensor(spec, 1));
    d = std::make_unique<ReferenceDecoder>(config, weights);
  }
  return *d;
}

std::vector<int32_t> tokens(int64_t n, int64_t vocab) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7919 + 13) % vocab);
  return t;
}

void BM_Prefill(benchmark::State& state, const std::string& shape) {
  ReferenceDecoder& d = decoder_for(shape);
  const auto prompt = tokens(state.range(0), d.config().vocab_size);
  for (auto _ : state) {
    d.reset();
    benchmark::DoNotOptimize(d.forward_last(prompt));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// One token per iteration, at positions 0..state.range(0)-1 over and over.
void BM_Decode(benchmark::State& state, const std::string& shape) {
  ReferenceDecoder& d = decoder_for(shape);
  d.reset();
  const std::vector<int32_t> one{42};
  for (auto _ : state) {
    if (d.position() >= state.range(0)) {
      state.PauseTiming();
      d.reset();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(d.forward_last(one));
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_Prefill, stories15m, std::string("stories15m"))->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Decode, stories15m, std::string("stories15m"))->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Prefill, smollm2_135m, std::string("smollm2-135m"))->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Decode, smollm2_135m, std::string("smollm2-135m"))->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace genai
