// `genai bench`: prefill and decode tokens/s as llama-bench's pp/tg rows, for the compiled programs
// of an artifact dir (-a) or for a checkpoint's float reference (--checkpoint). Compiled programs
// also get the time to first token of a 128-token prompt and the peak memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/register_builtin.h"
#include "cli/command.h"
#include "core/error.h"
#include "core/log.h"
#include "core/random.h"
#include "core/sampler.h"
#include "core/thread_pool.h"
#include "eval/throughput_bench.h"
#include "llm/compiled_session.h"
#include "llm/decoder_scheduler.h"
#include "llm/generation_stats.h"
#include "llm/reference_session.h"
#include "model/model.h"
#include "runtime/artifact_dir.h"
#include "runtime/load_verification.h"

namespace genai::cli {
namespace {

struct BenchArgs {
  std::string checkpoint, artifact;
  std::string lora;  // a compiled LoRA adapter to run (empty: the base)
  int64_t pp = 128, tg = 128;
  int reps = 3;
  int threads = 0;
  bool json = false;
};

// Time to first token: a prompt of `n` random tokens from an empty cache through to the sampled
// first token (greedy), the median of `reps` runs after one warm-up.
double time_to_first_token_ms(DecoderSession& s, int64_t n, int reps) {
  Xoshiro256 rng(7);
  std::vector<int32_t> prompt(static_cast<size_t>(n));
  for (auto& t : prompt) t = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(s.vocab_size()));
  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {
    s.reset();
    const auto t0 = std::chrono::steady_clock::now();
    const int32_t first = argmax(s.forward(prompt));
    const double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) ms.push_back(dt);  // r == 0 warms up
    (void)first;
  }
  s.reset();
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int bench_compiled(const BenchArgs& a) {
  backends::register_builtin_backends();
  // Load time both ways: without the content checks (runtime/load_verification.h) first, which
  // also brings the files into the page cache, then with them (the default), kept for the run.
  auto timed_load = [&](bool verify, CompiledSessionInfo& info) {
    runtime::set_load_verification(verify);
    const auto t0 = std::chrono::steady_clock::now();
    runtime::ArtifactDir dir = runtime::open_artifact_dir(a.artifact);
    auto session = make_compiled_session(dir, &info);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return std::make_tuple(std::move(dir), std::move(session), ms);
  };
  CompiledSessionInfo info;
  const double load_ms_no_verify = std::get<2>(timed_load(false, info));
  auto [dir, session, load_ms] = timed_load(true, info);
  BenchModelInfo model;
  for (const auto& [key, path] : dir.artifacts) model.size_bytes += std::filesystem::file_size(path);
  if (auto p = dir.manifest.find("params"); p != dir.manifest.end() && p->is_number_unsigned()) model.params = p->get<uint64_t>();
  std::string recipe = "program";
  if (auto o = dir.manifest.find("options"); o != dir.manifest.end() && o->is_object()) {
    if (o->value("use_fp16", false))
      recipe = "fp16";
    else if (auto r = o->find("quant_recipe"); r != o->end() && r->is_string())
      recipe = r->get<std::string>();
  }
  model.model = fmt::format("{} {} KV {}", dir.dir.filename().string(), recipe, info.kv_io_dtype);
  // An adapter: the time of a switch to it (its methods bound, the cache cleared), the median of
  // five switches there and back, then the runs with it.
  double switch_ms = 0.0;
  if (!a.lora.empty()) {
    auto* scheduler = dynamic_cast<DecoderScheduler*>(session.get());
    if (!scheduler) throw_input_error("--lora {}: {} runs without our KV cache scheduler", a.lora, a.artifact);
    std::vector<double> ms;
    for (int r = 0; r < 5; ++r) {
      scheduler->set_adapter(std::nullopt);
      const auto t0 = std::chrono::steady_clock::now();
      scheduler->set_adapter(a.lora);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    switch_ms = ms[ms.size() / 2];
    model.model += fmt::format(" LoRA {}", a.lora);
  }
  // Where the methods run: QnnBackend programs on the QNN HTP simulator (through onnxruntime-qnn),
  // ours on the host runtime's emulation.
  const bool qnn = std::find(info.delegate_ids.begin(), info.delegate_ids.end(), "QnnBackend") != info.delegate_ids.end();
  model.backend = fmt::format("{} {} ({})", dir.backend.empty() ? "?" : dir.backend, dir.soc_model,
                              qnn ? "QnnBackend on the QNN HTP simulator" : "host runtime");
  model.threads = ThreadPool::global().threads();
  log::info("benchmarking {}: context {}, prefill AR {}; pp{} tg{} x {} reps on {} threads (loaded in {:.0f} ms)",
            dir.dir.string(), info.max_context_len, info.prefill_ar_len, a.pp, a.tg, a.reps, model.threads, load_ms);

  const auto results = run_throughput(*session, ThroughputConfig{a.pp, a.tg, a.reps, 1});
  const int64_t ttft_tokens = std::min<int64_t>(128, session->max_context());
  const double ttft = time_to_first_token_ms(*session, ttft_tokens, a.reps);
  const double rss = peak_rss_mb();
  if (a.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : results)
      rows.push_back({{"test", r.test}, {"tokens", r.tokens}, {"tok_s", r.tok_s}, {"mean", r.mean}, {"stddev", r.stddev}});
    const nlohmann::json j{{"model", model.model},
                           {"artifact", dir.dir.string()},
                           {"size_bytes", model.size_bytes},
                           {"params", model.params},
                           {"backend", model.backend},
                           {"threads", model.threads},
                           {"kv_io_dtype", info.kv_io_dtype},
                           {"max_context_len", info.max_context_len},
                           {"prefill_ar_len", info.prefill_ar_len},
                           {"load_ms", load_ms},
                           {"load_ms_no_verify", load_ms_no_verify},
                           {"ttft_prompt_tokens", ttft_tokens},
                           {"ttft_ms", ttft},
                           {"peak_rss_mb", rss},
                           {"results", rows}};
    nlohmann::json out = j;
    if (!a.lora.empty()) out.update({{"lora", a.lora}, {"lora_switch_ms", switch_ms}});
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%s", throughput_markdown(model, results).c_str());
    if (!a.lora.empty()) std::printf("\nswitch to LoRA adapter %s: %.3f ms\n", a.lora.c_str(), switch_ms);
    std::printf(
        "\ntime to first token (%lld-token prompt): %.2f ms; load %.1f ms (%.1f ms with --no_verify); peak RSS %.1f "
        "MiB\n",
        static_cast<long long>(ttft_tokens), ttft, load_ms, load_ms_no_verify, rss);
  }
  return 0;
}

int bench(const BenchArgs& a) {
  if (a.threads > 0) ThreadPool::set_global_threads(a.threads);
  if (a.artifact.empty() == a.checkpoint.empty())
    throw_input_error("genai bench needs exactly one of -a/--artifact DIR (compiled programs) and --checkpoint FILE");
  if (!a.artifact.empty()) return bench_compiled(a);
  if (!a.lora.empty()) throw_input_error("--lora {}: adapters run in compiled programs (-a DIR)", a.lora);
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

const CommandRegistration kBench{
    "bench",
    "Prefill / decode tokens per second (llama-bench style) of compiled programs (-a) or a checkpoint's float "
    "reference",
    [](CLI::App& sub) -> CommandAction {
      auto a = std::make_shared<BenchArgs>();
      sub.add_option("-a,--artifact", a->artifact, "Artifact dir written by `genai compile` (its compiled programs)");
      sub.add_option("--checkpoint", a->checkpoint, "Model checkpoint: GGUF file, Hugging Face folder or llama2.c .bin");
      sub.add_option("--lora", a->lora, "The compiled LoRA adapter to run (default: none, the base model)");
      sub.add_option("--pp", a->pp, "Prompt tokens processed as one batch (0 = skip)")->capture_default_str();
      sub.add_option("--tg", a->tg, "Single-token decode steps (0 = skip)")->capture_default_str();
      sub.add_option("--reps", a->reps, "Timed repetitions of each test")->capture_default_str();
      sub.add_option("--threads", a->threads, "Worker threads (default: all cores)");
      sub.add_flag("--json", a->json, "Print one JSON object instead of the markdown table");
      return [a] { return bench(*a); };
    }};

}  // namespace
}  // namespace genai::cli
