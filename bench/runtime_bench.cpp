// What the runner adds to a compiled program's own work, at SmolLM2-135M shapes (30 layers, 3 KV
// heads of 64, context 512, AR-32 prefill, vocab 49152, uint8 KV, uint16 mask and logits): the
// delegate here only writes its outputs, so the time is the session's (mask, cache update,
// buffer checks, logits dequantization). The decode-step figure must stay in microseconds for
// 200+ tokens/s to be reachable.
#include <benchmark/benchmark.h>

#include <cstring>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "llm/compiled_session.h"
#include "pte/program_writer.h"
#include "runtime/backend_executor.h"

namespace {

using namespace genai;

struct Layout {
  int64_t layers = 30, kv_heads = 3, head_dim = 64, context = 512, vocab = 49152;
};

// A decoder-shaped delegate that writes a logits row peaked at (token + 1) % vocab and constant
// new K/V entries: all the I/O of a real program, none of its arithmetic.
class NullDecoderMethod : public runtime::DelegateMethod {
 public:
  NullDecoderMethod(const Layout& l, int64_t ar) : l_(l), ar_(ar) {
    const int64_t cache = l.context - ar;
    in_ = {{"tokens", DType::kI32, {1, ar}}, {"atten_mask", DType::kU16, {1, 1, ar, l.context}},
           {"input_pos", DType::kI32, {1, ar}}};
    for (int64_t i = 0; i < l.layers; ++i) in_.push_back({fmt::format("k_cache_{}", i), DType::kU8, {1, l.kv_heads, l.head_dim, cache}});
    for (int64_t i = 0; i < l.layers; ++i) in_.push_back({fmt::format("v_cache_{}", i), DType::kU8, {1, l.kv_heads, cache, l.head_dim}});
    out_ = {{"logits", DType::kU16, {1, ar, l.vocab}}};
    for (int64_t i = 0; i < l.layers; ++i) out_.push_back({fmt::format("k_out_{}", i), DType::kU8, {1, l.kv_heads, l.head_dim, ar}});
    for (int64_t i = 0; i < l.layers; ++i) out_.push_back({fmt::format("v_out_{}", i), DType::kU8, {1, l.kv_heads, ar, l.head_dim}});
  }
  const std::vector<runtime::IoDesc>& inputs() const override { return in_; }
  const std::vector<runtime::IoDesc>& outputs() const override { return out_; }
  uint64_t scratch_bytes() const override { return 0; }
  void execute(std::span<const runtime::BufferRef> in, std::span<const runtime::BufferRef> out,
               std::span<uint8_t>) override {
    const auto* tokens = static_cast<const int32_t*>(in[0].data);
    auto* logits = static_cast<uint16_t*>(out[0].data);
    for (int64_t r = 0; r < ar_; ++r) logits[r * l_.vocab + (tokens[r] + 1) % l_.vocab] = 1000;  // sparse write
    for (size_t i = 1; i < out.size(); ++i) static_cast<uint8_t*>(out[i].data)[0] = 7;
  }

 private:
  Layout l_;
  int64_t ar_;
  std::vector<runtime::IoDesc> in_, out_;
};

class NullDecoderExecutor : public runtime::BackendExecutor {
 public:
  std::string_view delegate_id() const override { return "BenchNullDecoder"; }
  std::unique_ptr<runtime::DelegateMethod> init(const pte::Blob& payload, const std::vector<CompileSpec>&,
                                                const runtime::NamedDataLookup&,
                                                const runtime::MethodDesc&) const override {
    return std::make_unique<NullDecoderMethod>(Layout{}, payload.size() ? payload.data()[0] : 1);
  }
};

std::unique_ptr<DecoderScheduler> make_session() {
  static std::once_flag once;
  static std::filesystem::path path = std::filesystem::temp_directory_path() / "genai_runtime_bench.pte";
  std::call_once(once, [] {
    runtime::register_backend_executor(std::make_unique<NullDecoderExecutor>());
    pte::Program p;
    for (const auto& [name, ar] : {std::pair<std::string, int64_t>{"kv_forward", 1}, {"prefill_forward", 32}}) {
      NullDecoderMethod probe(Layout{}, ar);
      pte::Method m;
      m.name = name;
      pte::DelegateCall call;
      for (const auto* list : {&probe.inputs(), &probe.outputs()})
        for (const auto& d : *list) {
          const auto index = static_cast<int32_t>(m.values.size());
          m.values.push_back(pte::make_tensor(pte::scalar_type_from_dtype(d.dtype),
                                              std::vector<int32_t>(d.shape.begin(), d.shape.end())));
          (list == &probe.inputs() ? m.inputs : m.outputs).push_back(index);
          call.args.push_back(index);
        }
      m.chains.push_back(pte::Chain{m.inputs, m.outputs, {call}});
      m.delegates.push_back({"BenchNullDecoder", {}, pte::Blob(std::vector<uint8_t>{static_cast<uint8_t>(ar)})});
      m.non_const_buffer_sizes = {0, 0};
      p.methods.push_back(std::move(m));
    }
    p.methods.push_back(pte::make_constant_method("get_logits_scale", pte::Double{0.01}));
    p.methods.push_back(pte::make_constant_method("get_logits_zero_point", pte::Int{30000}));
    pte::write_program(path, p);
  });
  return make_program_session(runtime::ProgramInstance::load(path));
}

void BM_DecodeStep(benchmark::State& state) {
  auto s = make_session();
  int32_t token = 5;
  for (auto _ : state) {
    if (s->position() == s->max_context()) {
      state.PauseTiming();
      s->reset();
      state.ResumeTiming();
    }
    const auto logits = s->forward(std::span(&token, 1));
    benchmark::DoNotOptimize(logits.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeStep)->Unit(benchmark::kMicrosecond);

void BM_Prefill128(benchmark::State& state) {
  auto s = make_session();
  std::vector<int32_t> prompt(128);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(i * 31 % 49152);
  for (auto _ : state) {
    state.PauseTiming();
    s->reset();  // zeroes the whole cache: not part of a prefill
    state.ResumeTiming();
    benchmark::DoNotOptimize(s->forward(prompt).data());
  }
  state.SetItemsProcessed(state.iterations() * 128);
}
BENCHMARK(BM_Prefill128)->Unit(benchmark::kMicrosecond);

}  // namespace
