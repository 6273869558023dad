// `genai bench`: prefill and decode tokens/s of the float reference, as llama-bench rows.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "llm/reference_session.h"
#include "llm/throughput_bench.h"
#include "model/model.h"

namespace genai::cli {
namespace {

struct BenchArgs {
  std::string checkpoint;
  int64_t pp = 128, tg = 128;
  int reps = 3;
  int threads = 0;
  bool json = false;
};

int bench(const BenchArgs& a) {
  if (a.threads > 0) ThreadPool::set_global_threads(a.threads);
  LoadOptions load;
  load.load_tokenizer = false;  // throughput needs no text
  const Model model = load_model(a.checkpoint, load);
  ReferenceSession session(model);
  BenchModelInfo info;
  for (const auto& [name, t] : model.weights.all()) {
    info.params += static_cast<uint64_t>(t.numel());
    info.size_bytes += static_cast<uint64_t>(t.numel()) * sizeof(float);  // the reference runs on f32
  }
  info.model = fmt::format("{} {:.0f}M F32", architecture_name(model.config.arch), info.params / 1e6);
  info.backend = "CPU (fp32 reference)";
  info.threads = ThreadPool::global().threads();
  log::info("benchmarking {}: pp{} tg{} x {} reps on {} threads", a.checkpoint, a.pp, a.tg, a.reps, info.threads);

  const auto results = run_throughput(session, ThroughputConfig{a.pp, a.tg, a.reps, 1});
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : results)
      rows.push_back({{"test", r.test}, {"tokens", r.tokens}, {"tok_s", r.tok_s}, {"mean", r.mean}, {"stddev", r.stddev}});
    const nlohmann::json j{{"model", info.model},     {"checkpoint", a.checkpoint}, {"size_bytes", info.size_bytes},
                           {"params", info.params},   {"backend", info.backend},    {"threads", info.threads},
                           {"results", rows}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s", throughput_markdown(info, results).c_str());
  }
  return 0;
}

const CommandRegistration kRegistration{
    "bench", "Prefill / decode tokens per second of the float reference (llama-bench style)",
    [](CLI::App& sub) -> CommandAction {
      auto a = std::make_shared<BenchArgs>();
      sub.add_option("--checkpoint", a->checkpoint, "Model checkpoint: GGUF file, Hugging Face folder or llama2.c .bin")
          ->required();
      sub.add_option("--pp", a->pp, "Prompt tokens processed as one batch (0 = skip)")->capture_default_str();
      sub.add_option("--tg", a->tg, "Single-token decode steps (0 = skip)")->capture_default_str();
      sub.add_option("--reps", a->reps, "Timed repetitions of each test")->capture_default_str();
      sub.add_option("--threads", a->threads, "Worker threads (default: all cores)");
      sub.add_flag("--json", a->json, "Print one JSON object instead of the markdown table");
      return [a] { return bench(*a); };
    }};

}  // namespace
}  // namespace genai::cli
