// Encode/decode throughput of the tokenizers on ~1 MB of mixed text (the committed corpus,
// repeated): byte-level BPE under each pre-tokenizer, the real SmolLM2 vocabulary when the default
// model is present, and the scored SPM path.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "formats/gguf_file.h"
#include "model/gguf_metadata.h"
#include "tokenizer/factory.h"
#include "tokenizer/synthetic_vocab.h"

namespace {

std::string source_dir() {
  // bench binaries live in <build>/bench; the source tree is found from the environment or cwd.
  if (const char* env = std::getenv("GENAI_SOURCE_DIR")) return env;
  for (std::filesystem::path p = std::filesystem::current_path(); !p.empty(); p = p.parent_path()) {
    if (std::filesystem::exists(p / "tests/data/tokenizer_corpus.json")) return p.string();
    if (p == p.parent_path()) break;
  }
  return ".";
}

const std::string& megabyte_text() {
  static const std::string text = [] {
    std::ifstream in(source_dir() + "/tests/data/tokenizer_corpus.json");
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<std::string> corpus;
    if (!ss.str().empty()) corpus = nlohmann::json::parse(ss.str()).get<std::vector<std::string>>();
    if (corpus.empty()) corpus = {"The quick brown fox jumps over the lazy dog. It's 2024; 12345 numbers!\n"};
    std::string t;
    while (t.size() < (1u << 20))
      for (const auto& s : corpus) t += s + " ";
    return t;
  }();
  return text;
}

void run_encode(benchmark::State& state, const genai::Tokenizer& tok) {
  const std::string& text = megabyte_text();
  size_t n = 0;
  for (auto _ : state) {
    auto ids = tok.encode(text, false);
    n = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(n);
}

void BM_EncodeSyntheticBpe(benchmark::State& state, const char* pre) {
  genai::BpeVocab v = genai::make_synthetic_bpe_vocab(8192, 1);
  v.pre_tokenizer = pre;
  auto tok = genai::make_bpe_tokenizer(std::move(v));
  run_encode(state, *tok);
}
BENCHMARK_CAPTURE(BM_EncodeSyntheticBpe, gpt2, "gpt2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeSyntheticBpe, smollm, "smollm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeSyntheticBpe, llama_bpe, "llama-bpe")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EncodeSyntheticBpe, qwen2, "qwen2")->Unit(benchmark::kMillisecond);

void BM_EncodeSmolLM2(benchmark::State& state) {
  const char* env = std::getenv("GENAI_DEFAULT_MODEL");
  const std::string path = env ? env : source_dir() + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("default model absent");
    return;
  }
  auto vocab = genai::gguf_read_vocab(genai::GgufFile::open(path));
  auto tok = genai::make_bpe_tokenizer(std::get<genai::BpeVocab>(std::move(vocab)));
  run_encode(state, *tok);
}
BENCHMARK(BM_EncodeSmolLM2)->Unit(benchmark::kMillisecond);

void BM_EncodeSpm(benchmark::State& state) {
  auto tok = genai::make_spm_tokenizer(genai::make_synthetic_spm_vocab(8192, 1));
  run_encode(state, *tok);
}
BENCHMARK(BM_EncodeSpm)->Unit(benchmark::kMillisecond);

void BM_DecodeSyntheticBpe(benchmark::State& state) {
  auto tok = genai::make_bpe_tokenizer(genai::make_synthetic_bpe_vocab(8192, 1));
  const auto ids = tok->encode(megabyte_text(), false);
  for (auto _ : state) {
    auto text = tok->decode(ids);
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * megabyte_text().size()));
}
BENCHMARK(BM_DecodeSyntheticBpe)->Unit(benchmark::kMillisecond);

}  // namespace
