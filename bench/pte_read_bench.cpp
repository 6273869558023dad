// Opening a ~1 GiB program: map + verify + build the model must cost well under a second and
// copy none of the segments. The file (two delegated methods sharing a 512 MiB payload stored
// once, 512 MiB of named weights, a kernels method with constants) is written once to /tmp.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <filesystem>

#include "pte/program_reader.h"
#include "pte/program_writer.h"

namespace {

using namespace genai::pte;

constexpr uint64_t kPayloadBytes = uint64_t{512} << 20;
constexpr uint64_t kWeightBytes = uint64_t{512} << 20;

const std::filesystem::path& big_program() {
  static const std::filesystem::path path = [] {
    std::filesystem::path p = std::filesystem::temp_directory_path() / "genai_pte_read_bench_1gib.pte";
    if (std::filesystem::exists(p) && std::filesystem::file_size(p) > kPayloadBytes + kWeightBytes) return p;
    std::vector<uint8_t> payload(kPayloadBytes), weights(kWeightBytes);
    for (size_t i = 0; i < payload.size(); i += 4096) payload[i] = static_cast<uint8_t>(i >> 12);
    for (size_t i = 0; i < weights.size(); i += 4096) weights[i] = static_cast<uint8_t>(i >> 13);
    const Blob payload_blob(std::move(payload));
    Program prog;
    for (const char* name : {"kv_forward", "prefill_forward"}) {
      Method m;
      m.name = name;
      m.values = {make_tensor(ScalarType::kInt, {1, 32}), make_tensor(ScalarType::kFloat, {1, 32, 49152})};
      m.inputs = {0};
      m.outputs = {1};
      m.chains = {Chain{{}, {}, {DelegateCall{0, {0, 1}}}}};
      m.delegates = {Delegate{"QnnBackend", {genai::CompileSpec{"other_key", {1}}}, payload_blob}};
      m.non_const_buffer_sizes = {0, 0};
      prog.methods.push_back(std::move(m));
    }
    Method k;
    k.name = "forward";
    for (int i = 0; i < 256; ++i) {
      TensorValue t = make_tensor(ScalarType::kFloat, {64, 64});
      t.data = Blob(std::vector<uint8_t>(64 * 64 * 4, static_cast<uint8_t>(i)));
      k.values.push_back(std::move(t));
    }
    k.chains = {Chain{}};
    prog.methods.push_back(std::move(k));
    prog.methods.push_back(make_constant_method("get_max_seq_len", Int{2048}));
    prog.named_data.push_back({"weights", Blob(std::move(weights))});
    write_program(p, prog);
    return p;
  }();
  return path;
}

// Resident set size now (pages of this process in memory, including touched file pages).
double rss_mib() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

void BM_OpenAndVerify1GiB(benchmark::State& state) {
  const auto& path = big_program();
  const double rss_before = rss_mib();
  double rss_growth = 0;
  uint64_t blob_bytes = 0;
  for (auto _ : state) {
    LoadedProgram p = read_program(path);
    blob_bytes = p.program.named_data.at(0).data.size() + p.program.methods.at(0).delegates.at(0).processed.size();
    rss_growth = std::max(rss_growth, rss_mib() - rss_before);
    benchmark::DoNotOptimize(p);
  }
  state.counters["file_GiB"] = static_cast<double>(std::filesystem::file_size(path)) / (1 << 30);
  state.counters["viewed_MiB"] = static_cast<double>(blob_bytes) / (1 << 20);
  // Resident growth while a program is open: a copy of the segments would show up as ~1 GiB.
  state.counters["rss_growth_MiB"] = rss_growth;
}
BENCHMARK(BM_OpenAndVerify1GiB)->Unit(benchmark::kMillisecond);

}  // namespace
