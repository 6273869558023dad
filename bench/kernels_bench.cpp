// Kernel throughput on smollm2-135m shapes: integer linear (16-bit activations, 8-bit per-channel
// and 4-bit block-32 weights) as GEMV (rows 1, decode) and GEMM (rows 32 and 128, prefill),
// attention matmul_q (16-bit and 8-bit caches, copied or read in place), the float ops, and a
// sample of the machine's read bandwidth (what bounds decode). Counters: weight_GB/s (packed
// weight bytes read per second, the decode bound) and GOPS (2 * rows * in * out per second). Wall
// time: the kernels run on ThreadPool::global(). GENAI_BENCH_KERNELS=scalar measures the scalar
// build.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/float_ops.h"
#include "kernels/kernel_mode.h"
#include "kernels/packed_linear.h"
#include "kernels/quantized_matmul.h"
#include "kernels/split_matmul.h"

namespace genai::kernels {
namespace {

// GENAI_BENCH_THREADS=N sizes the global pool (e.g. 1 to read per-core speed off CPU time on a
// busy machine).
const bool kThreadsSet = [] {
  if (const char* v = std::getenv("GENAI_BENCH_THREADS")) ThreadPool::set_global_threads(std::atoi(v));
  return true;
}();
// GENAI_BENCH_KERNELS=scalar runs the scalar twins (what --scalar_kernels does for genai).
const bool kModeSet = [] {
  const char* v = std::getenv("GENAI_BENCH_KERNELS");
  if (v && std::string_view(v) == "scalar") set_kernel_mode(KernelMode::kScalar);
  return true;
}();

struct LinearData {
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  std::vector<int32_t> sums;
  std::vector<uint8_t> meta;
  PackedLinear w;
};

const LinearData& linear_data(int64_t in, int64_t out, int bits, int64_t block) {
  static std::map<std::tuple<int64_t, int64_t, int, int64_t>, LinearData> cache;
  auto [it, fresh] = cache.try_emplace({in, out, bits, block});
  LinearData& d = it->second;
  if (fresh) {
    std::mt19937 rng(1);
    const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
    std::vector<int16_t> q(static_cast<size_t>(in * out));
    for (auto& v : q) v = static_cast<int16_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
    d.packed.resize(packed_linear_bytes(out, in, bits));
    pack_linear_weights(q.data(), out, in, bits, d.packed.data());
    d.sums = linear_block_sums(q.data(), out, in, block);
    d.scales.assign(d.sums.size(), 1e-3f);
    d.w = PackedLinear{out, in, bits, block, d.packed.data(), d.scales.data(), d.sums.data()};
    if (block > 0) {  // block-wise weights ship with their block_meta (as compiled programs do)
      d.meta.resize(block_meta_bytes(out, in, block));
      pack_block_meta(d.scales.data(), d.sums.data(), out, in, block, d.meta.data());
      d.w.block_meta = d.meta.data();
    }
  }
  return d;
}

void BM_LinearQ(benchmark::State& state) {
  const int64_t rows = state.range(0), in = state.range(1), out = state.range(2);
  const int bits = static_cast<int>(state.range(3));
  const int64_t block = state.range(4);
  const LinearData& d = linear_data(in, out, bits, block);
  std::mt19937 rng(2);
  std::vector<uint16_t> x(static_cast<size_t>(rows * in)), y(static_cast<size_t>(rows * out));
  for (auto& v : x) v = static_cast<uint16_t>(std::uniform_int_distribution<int>(20000, 45000)(rng));
  const QParams ex{0.01f, 32768, 0, 65535}, ey{0.5f, 32768, 0, 65535};
  for (auto _ : state) {
    linear_q(x.data(), ActType::kU16, rows, ex, d.w, nullptr, ey, ActType::kU16, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["weight_GB/s"] =
      benchmark::Counter(iters * static_cast<double>(d.packed.size()) / 1e9, benchmark::Counter::kIsRate);
  state.counters["GOPS"] =
      benchmark::Counter(iters * 2.0 * static_cast<double>(rows * in * out) / 1e9, benchmark::Counter::kIsRate);
}

void LinearArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "in", "out", "bits", "block"});
  const std::vector<std::pair<int64_t, int64_t>> shapes{{576, 576}, {576, 192}, {576, 1536}, {1536, 576}, {576, 49152}};
  for (int64_t rows : {1, 32, 128})
    for (auto [in, out] : shapes)
      for (auto [bits, block] : {std::pair<int64_t, int64_t>{8, 0}, {4, 32}, {4, 0}, {8, 64}, {16, 0}}) {
        if (rows == 128 && out == 49152) continue;  // prefill computes logits for the last row only
        b->Args({rows, in, out, bits, block});
      }
  b->UseRealTime();
}
BENCHMARK(BM_LinearQ)->Apply(LinearArgs);

// Attention for 9 heads over 3 kv heads, head_dim 64, context N: q.k^T then p.v.
void BM_AttentionMatmulQ(benchmark::State& state) {
  const int64_t M = state.range(0), N = state.range(1), heads = 9, kv = 3, D = 64;
  std::mt19937 rng(3);
  auto codes = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& c : v) c = static_cast<uint16_t>(rng() & 0xffff);
    return v;
  };
  const auto q = codes(static_cast<size_t>(heads * M * D)), k = codes(static_cast<size_t>(kv * D * N)),
             p = codes(static_cast<size_t>(heads * M * N)), v = codes(static_cast<size_t>(kv * N * D));
  std::vector<uint16_t> s(static_cast<size_t>(heads * M * N)), o(static_cast<size_t>(heads * M * D));
  std::vector<MatmulBatch> qk, pv;
  for (int64_t h = 0; h < heads; ++h) {
    qk.push_back({h * M * D, (h / 3) * D * N, h * M * N});
    pv.push_back({h * M * N, (h / 3) * N * D, h * M * D});
  }
  const QParams e{0.01f, 32768, 0, 65535}, ey{1000.0f, 32768, 0, 65535};
  for (auto _ : state) {
    matmul_q(q.data(), ActType::kU16, e, k.data(), ActType::kU16, e, M, D, N, qk, ey, ActType::kU16, s.data());
    matmul_q(p.data(), ActType::kU16, e, v.data(), ActType::kU16, e, M, N, D, pv, ey, ActType::kU16, o.data());
    benchmark::DoNotOptimize(o.data());
  }
  state.counters["GOPS"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * 2.0 *
                                                  static_cast<double>(heads * M * N * D) / 1e9,
                                              benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AttentionMatmulQ)->ArgNames({"M", "N"})->Args({1, 512})->Args({1, 2048})->Args({128, 512})->UseRealTime();

// The same with an 8-bit cache: matmul_q on the materialised concat (arg in_place 0) or
// split_matmul_q reading the cache and the new entry in place (1), as a decode step runs it.
void BM_AttentionEightBitCache(benchmark::State& state) {
  const int64_t M = state.range(0), N = state.range(1), heads = 9, kv = 3, D = 64;
  const bool in_place = state.range(2) != 0;
  std::mt19937 rng(5);
  auto codes16 = [&](size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& c : v) c = static_cast<uint16_t>(rng() & 0xffff);
    return v;
  };
  auto codes8 = [&](size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& c : v) c = static_cast<uint8_t>(rng() & 0xff);
    return v;
  };
  const auto q = codes16(static_cast<size_t>(heads * M * D)), p = codes16(static_cast<size_t>(heads * M * N));
  const auto k = codes8(static_cast<size_t>(kv * D * N)), v = codes8(static_cast<size_t>(kv * N * D));
  // In place: the cache holds N - M entries, the new part M.
  const auto k_cache = codes8(static_cast<size_t>(kv * D * (N - M))), k_new = codes8(static_cast<size_t>(kv * D * M));
  const auto v_cache = codes8(static_cast<size_t>(kv * (N - M) * D)), v_new = codes8(static_cast<size_t>(kv * M * D));
  std::vector<uint16_t> s(static_cast<size_t>(heads * M * N)), o(static_cast<size_t>(heads * M * D));
  std::vector<MatmulBatch> qk, pv;
  for (int64_t h = 0; h < heads; ++h) {
    qk.push_back({h * M * D, (h / 3) * D * N, h * M * N});
    pv.push_back({h * M * N, (h / 3) * N * D, h * M * D});
  }
  const std::vector<MatmulSegment> k_parts{{k_cache.data(), D * (N - M), N - M, 0, D, 0, N - M},
                                           {k_new.data(), D * M, M, 0, D, N - M, M}};
  const std::vector<MatmulSegment> v_parts{{v_cache.data(), (N - M) * D, D, 0, N - M, 0, D},
                                           {v_new.data(), M * D, D, N - M, M, 0, D}};
  std::vector<double> work(static_cast<size_t>(heads * split_matmul_work(std::max(D, N), std::max(D, N))));
  const QParams e{0.01f, 32768, 0, 65535}, e8{0.02f, 128, 0, 255}, ey{1000.0f, 32768, 0, 65535};
  for (auto _ : state) {
    if (in_place) {
      split_matmul_q(q.data(), ActType::kU16, e, k_parts, ActType::kU8, e8, D, N, qk, ey, ActType::kU16, s.data(),
                     work.data());
      split_matmul_q(p.data(), ActType::kU16, e, v_parts, ActType::kU8, e8, N, D, pv, ey, ActType::kU16, o.data(),
                     work.data());
    } else {
      matmul_q(q.data(), ActType::kU16, e, k.data(), ActType::kU8, e8, M, D, N, qk, ey, ActType::kU16, s.data());
      matmul_q(p.data(), ActType::kU16, e, v.data(), ActType::kU8, e8, M, N, D, pv, ey, ActType::kU16, o.data());
    }
    benchmark::DoNotOptimize(o.data());
  }
  state.counters["GOPS"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * 2.0 *
                                                  static_cast<double>(heads * M * N * D) / 1e9,
                                              benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AttentionEightBitCache)
    ->ArgNames({"M", "N", "in_place"})
    ->Args({1, 512, 0})
    ->Args({1, 512, 1})
    ->Args({1, 2048, 0})
    ->Args({1, 2048, 1})
    ->Args({128, 512, 0})
    ->UseRealTime();

void BM_FloatOps(benchmark::State& state) {
  const int64_t rows = state.range(0), dim = 576;
  std::mt19937 rng(4);
  std::vector<float> x(static_cast<size_t>(rows * dim * 3)), w(static_cast<size_t>(dim), 1.0f);
  for (auto& v : x) v = std::uniform_real_distribution<float>(-3, 3)(rng);
  for (auto _ : state) {
    rms_norm(x.data(), rows, dim, w.data(), 1e-5f, x.data());
    silu(x.data(), rows * dim * 3);
    softmax(x.data(), rows * 9, dim / 9 * 3);
    benchmark::DoNotOptimize(x.data());
  }
}
BENCHMARK(BM_FloatOps)->Arg(1)->Arg(128)->UseRealTime();

// The float reference's linear (linear_f32: the check's float side and calibration) on a 1B
// model's projections: rows of one evaluation window (96) and of a calibration window (128).
void BM_LinearF32(benchmark::State& state) {
  const int64_t rows = state.range(0), in = state.range(1), out = state.range(2);
  std::mt19937 rng(5);
  std::vector<float> x(static_cast<size_t>(rows * in)), w(static_cast<size_t>(out * in)), y(static_cast<size_t>(rows * out));
  for (auto& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  for (auto& v : w) v = std::uniform_real_distribution<float>(-0.05f, 0.05f)(rng);
  for (auto _ : state) {
    linear_f32(x.data(), rows, w.data(), out, in, nullptr, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(rows * in * out),
                                                benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_LinearF32)
    ->ArgNames({"rows", "in", "out"})
    ->Args({96, 2048, 2048})
    ->Args({96, 2048, 8192})
    ->Args({128, 8192, 2048})
    ->UseRealTime();

}  // namespace
}  // namespace genai::kernels

namespace genai {
namespace {
// Fork-join cost of one parallel_for over the global pool with trivial work (decode makes
// hundreds of these per token).
void BM_ParallelForDispatch(benchmark::State& state) {
  std::atomic<int64_t> sink{0};
  for (auto _ : state) ThreadPool::global().parallel_for(64, [&](int64_t b, int64_t e) { sink.fetch_add(e - b, std::memory_order_relaxed); });
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_ParallelForDispatch)->UseRealTime();

// The machine's read bandwidth over the global pool: each worker sums its contiguous share of a
// buffer far larger than the caches, with four independent 64-bit chains so that loads, not the
// adds, set the pace. The decode figures of `genai bench` are judged against it (bytes a step must
// read / this rate = the fastest possible step); it is a sample, not a bound: decode's many row
// streams have read faster than a neighbouring sample.
void BM_MemoryRead(benchmark::State& state) {
  const size_t words = static_cast<size_t>(state.range(0)) << 20 >> 3;  // range(0) in MiB
  std::vector<uint64_t> buf(words);
  for (size_t i = 0; i < words; ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;  // touch every page first
  std::atomic<uint64_t> sink{0};
  const int64_t chunks = 64;
  for (auto _ : state) {
    ThreadPool::global().parallel_for(chunks, [&](int64_t c0, int64_t c1) {
      const uint64_t* p = buf.data() + static_cast<size_t>(c0) * words / chunks;
      const uint64_t* end = buf.data() + static_cast<size_t>(c1) * words / chunks;
      uint64_t a = 0, b = 0, c = 0, d = 0;
      for (; p + 4 <= end; p += 4) {
        a += p[0];
        b ^= p[1];
        c += p[2];
        d ^= p[3];
      }
      for (; p < end; ++p) a += *p;
      sink.fetch_add(a + b + c + d, std::memory_order_relaxed);
    });
  }
  benchmark::DoNotOptimize(sink.load());
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(words * 8), benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(BM_MemoryRead)->ArgName("MiB")->Arg(1024)->UseRealTime();
}  // namespace
}  // namespace genai
