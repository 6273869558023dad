// Token ids identical to the reference tokenizers (Python `tokenizers` / `sentencepiece`) on the
// committed corpus, for every tokenizer path: GGUF vocab, tokenizer.json (HF-written and ours),
// synthetic vocabularies under each pre-tokenizer, sentencepiece .model, scored SPM, tokenizer.bin.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>

#include "formats/gguf_file.h"
#include "model/model.h"
#include "model/model_writer.h"
#include "support/random_model.h"
#include "model/gguf_metadata.h"
#include "support/cli_runner.h"
#include "tokenizer/factory.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/tokenizer_bin.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer/tokenizer_test_util.h"
#include "support/test_requirements.h"

namespace genai {
namespace {

using testing::expect_tokenizer_parity;
using testing::run_tokenizer_ref;
using testing::tokenizer_corpus;
using testing::tokenizer_corpus_path;

BpeVocab smollm2_vocab(const std::string& gguf) {
  auto vocab = gguf_read_vocab(GgufFile::open(gguf));
  auto* bpe = std::get_if<BpeVocab>(&vocab);
  if (bpe == nullptr) throw std::runtime_error("the default model has no byte-level BPE vocabulary");
  return std::move(*bpe);
}

TEST(TokenizerParity, SmolLM2FromGgufMatchesHfTokenizers) {
  const std::string gguf = testing::default_model_path();
  GENAI_REQUIRE_AVAILABLE(!gguf.empty(), "the default model (models/SmolLM2-135M-Instruct.Q4_1.gguf)");
  const auto corpus = tokenizer_corpus();
  ASSERT_GE(corpus.size(), 200u);
  testing::TempDir dir;
  const std::string hf_json = dir.file("tokenizer.json");
  const auto ref = run_tokenizer_ref({"gguf-bpe", gguf, tokenizer_corpus_path(), "--save-json", hf_json});
  ASSERT_FALSE(ref.is_null());

  BpeVocab vocab = smollm2_vocab(gguf);
  EXPECT_EQ(vocab.pre_tokenizer, "smollm");
  auto tok = make_bpe_tokenizer(vocab);
  EXPECT_EQ(tok->vocab_size(), 49152);
  EXPECT_EQ(tok->special_id("<|im_start|>"), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  expect_tokenizer_parity(*tok, ref, corpus, true, "SmolLM2 GGUF");
  // The reference's reference output, decoded by the Python side, is the original text too.
  for (size_t i = 0; i < corpus.size(); ++i) EXPECT_EQ(ref["decoded"][i].get<std::string>(), corpus[i]);

  // The tokenizer.json the Python library wrote loads here and tokenizes the same.
  auto from_hf_json = load_tokenizer_json(hf_json);
  expect_tokenizer_parity(*from_hf_json, ref, corpus, true, "SmolLM2 HF-written tokenizer.json");

  // Our tokenizer.json of the same vocabulary loads in Python and tokenizes the same there.
  const std::string ours = dir.file("ours.json");
  write_tokenizer_json(vocab, ours);
  const auto ref_ours = run_tokenizer_ref({"load-json", ours, tokenizer_corpus_path()});
  ASSERT_FALSE(ref_ours.is_null());
  EXPECT_EQ(ref_ours["ids"], ref["ids"]);
  // And reads back to the same vocabulary.
  const BpeVocab back = read_tokenizer_json_vocab(ours);
  EXPECT_EQ(back.tokens, vocab.tokens);
  EXPECT_EQ(back.merges, vocab.merges);
  EXPECT_EQ(back.types, vocab.types);
  EXPECT_EQ(back.pre_tokenizer, "smollm");
}

class SyntheticBpeParity : public ::testing::TestWithParam<std::string> {};

TEST_P(SyntheticBpeParity, MatchesHfTokenizersWithTheSamePreTokenizer) {
  const std::string preset = GetParam();
  const auto corpus = tokenizer_corpus();
  BpeVocab vocab = make_synthetic_bpe_vocab(1024, 7);
  vocab.pre_tokenizer = preset;
  testing::TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  write_tokenizer_json(vocab, path);

  // Python builds its tokenizer from our vocab/merges with its own pre-tokenizer configuration.
  const auto ref = run_tokenizer_ref({"bpe-config", path, preset, tokenizer_corpus_path()});
  ASSERT_FALSE(ref.is_null());
  auto direct = make_bpe_tokenizer(vocab);
  expect_tokenizer_parity(*direct, ref, corpus, true, preset + " synthetic (factory)");
  auto loaded = load_tokenizer_json(path);
  expect_tokenizer_parity(*loaded, ref, corpus, true, preset + " synthetic (tokenizer.json)");
  // The written file itself loads in Python with the same result.
  const auto ref_file = run_tokenizer_ref({"load-json", path, tokenizer_corpus_path()});
  ASSERT_FALSE(ref_file.is_null());
  EXPECT_EQ(ref_file["ids"], ref["ids"]) << preset;
}

// Each family's tokenizer: gpt2 (CodeGen's byte-level BPE); smollm (SmolLM2, Granite 3.x: digits, then GPT-2 pieces);
// llama-bpe (Llama 3, SmolLM3); qwen2 (Qwen2.5, Qwen3); gpt-4o (Phi-4-mini).
INSTANTIATE_TEST_SUITE_P(Presets, SyntheticBpeParity, ::testing::Values("gpt2", "smollm", "llama-bpe", "qwen2", "gpt-4o"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(TokenizerParity, HfFileWithBosTemplateAndAddedTokenBeyondVocab) {
  const auto corpus = tokenizer_corpus();
  BpeVocab vocab = make_synthetic_bpe_vocab(1024, 11);
  vocab.pre_tokenizer = "llama-bpe";
  testing::TempDir dir;
  write_tokenizer_json(vocab, dir.file("ours.json"));
  const std::string hf = dir.file("tokenizer.json");
  const auto ref = run_tokenizer_ref({"bpe-config", dir.file("ours.json"), "llama3", tokenizer_corpus_path(), "--save-json", hf});
  ASSERT_FALSE(ref.is_null());
  auto tok = load_tokenizer_json(hf);
  EXPECT_EQ(tok->vocab_size(), 1025);
  EXPECT_EQ(tok->special_id("<|eot_id|>"), 1024);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->encode("x", true).front(), 1);
  const auto stops = tok->stop_ids();
  EXPECT_NE(std::find(stops.begin(), stops.end(), 1024), stops.end());
  expect_tokenizer_parity(*tok, ref, corpus, true, "HF llama3-like tokenizer.json");
  // Its pre-tokenizer is the named llama-bpe configuration, so the vocabulary reader accepts it.
  const BpeVocab back = read_tokenizer_json_vocab(hf);
  EXPECT_EQ(back.pre_tokenizer, "llama-bpe");
  EXPECT_TRUE(back.add_bos);
}

TEST(TokenizerParity, SentencePieceModelAndScoredBpeMatchSentencePiece) {
  const auto corpus = tokenizer_corpus();
  testing::TempDir dir;
  const std::string prefix = dir.file("spm");
  ASSERT_FALSE(run_tokenizer_ref({"spm-train", tokenizer_corpus_path(), prefix, "800"}).is_null());
  const std::string model = prefix + ".model";
  const auto ref = run_tokenizer_ref({"spm", model, tokenizer_corpus_path()});
  ASSERT_FALSE(ref.is_null());

  // 1. libsentencepiece on the .model file (special strings stay text, as in Python).
  auto sp = load_sentencepiece_model(model);
  EXPECT_EQ(sp->kind(), "sentencepiece");
  expect_tokenizer_parity(*sp, ref, corpus, false, "sentencepiece .model");
  auto dispatched = load_tokenizer_file(model);
  EXPECT_EQ(dispatched->kind(), "sentencepiece");

  // 2. Our scored BPE on the model's pieces/scores/types.
  SpmVocab v;
  v.pieces = ref["pieces"].get<std::vector<std::string>>();
  v.scores = ref["scores"].get<std::vector<float>>();
  for (int t : ref["types"].get<std::vector<int>>()) v.types.push_back(static_cast<TokenType>(t));
  v.bos_id = ref["bos_id"].get<int32_t>();
  v.eos_id = ref["eos_id"].get<int32_t>();
  v.unk_id = ref["unk_id"].get<int32_t>();
  auto spm = make_spm_tokenizer(v);
  EXPECT_EQ(spm->kind(), "spm");
  expect_tokenizer_parity(*spm, ref, corpus, false, "scored SPM BPE");

  // 3. llama2.c tokenizer.bin: round trip, and the same ids through the file.
  const std::string bin = dir.file("tokenizer.bin");
  write_tokenizer_bin(v, bin);
  const SpmVocab back = read_tokenizer_bin(bin);
  EXPECT_EQ(back.pieces, v.pieces);
  EXPECT_EQ(back.scores, v.scores);
  EXPECT_EQ(back.types, v.types);
  auto llama2c = load_tokenizer_file(bin);
  EXPECT_EQ(llama2c->kind(), "llama2c");
  expect_tokenizer_parity(*llama2c, ref, corpus, false, "llama2.c tokenizer.bin");
}

// A Gemma HF folder ships SentencePiece's tokenizer.model beside a tokenizer.json that re-expresses
// it; the loader takes the .model (libsentencepiece), which tokenizes as Python's sentencepiece.
TEST(TokenizerParity, GemmaFolderUsesItsSentencePieceModel) {
  const auto corpus = tokenizer_corpus();
  testing::TempDir dir;
  const std::string prefix = dir.file("spm");
  ASSERT_FALSE(run_tokenizer_ref({"spm-train", tokenizer_corpus_path(), prefix, "800"}).is_null());
  const auto ref = run_tokenizer_ref({"spm", prefix + ".model", tokenizer_corpus_path()});
  ASSERT_FALSE(ref.is_null());
  const std::string folder = dir.file("gemma");
  ModelConfig c = testing::small_config(Architecture::kGemma, /*tied=*/true);
  c.vocab_size = ref["pieces"].size();
  const Weights w = testing::random_weights(c, 5);
  write_hf_model(folder, c, WeightSource::of(w), DType::kF32, nullptr);
  std::filesystem::copy_file(prefix + ".model", folder + "/tokenizer.model");
  const Model m = load_model(folder);
  ASSERT_TRUE(m.tokenizer);
  EXPECT_EQ(m.tokenizer->kind(), "sentencepiece");
  EXPECT_EQ(m.tokenizer_path.filename(), "tokenizer.model");
  expect_tokenizer_parity(*m.tokenizer, ref, corpus, false, "gemma folder tokenizer.model");
}

// Gemma 4 folders ship only tokenizer.json: BPE over characters with byte fallback, spaces
// normalized to "▁" and back (transformers' GemmaTokenizer). Built here from a trained
// SentencePiece model; ours tokenizes the multilingual corpus as the tokenizers library does.
TEST(TokenizerParity, GemmaStyleTokenizerJsonMatchesHfTokenizers) {
  const auto corpus = tokenizer_corpus();
  testing::TempDir dir;
  const std::string prefix = dir.file("spm");
  ASSERT_FALSE(run_tokenizer_ref({"spm-train", tokenizer_corpus_path(), prefix, "800"}).is_null());
  const auto made = run_tokenizer_ref({"gemma-json", prefix + ".model", dir.file("gemma")});
  ASSERT_FALSE(made.is_null());
  const std::string path = made["path"].get<std::string>();
  const auto ref = run_tokenizer_ref({"load-json", path, tokenizer_corpus_path()});
  ASSERT_FALSE(ref.is_null());
  auto tok = load_tokenizer_json(path);
  EXPECT_EQ(tok->kind(), "bpe");
  expect_tokenizer_parity(*tok, ref, corpus, true, "gemma-style tokenizer.json");
  // Spaces become "▁" pieces, and characters the vocabulary lacks its <0xXX> bytes.
  EXPECT_EQ(tok->decode(tok->encode("a  b \xe2\x98\x83", false)), "a  b \xe2\x98\x83");

  // The same vocabulary as llama.cpp keeps a Gemma 4 GGUF's (tokenizer.ggml.model gemma4).
  const std::string gguf = dir.file("gemma4.gguf");
  ASSERT_FALSE(run_tokenizer_ref({"gemma-gguf", path, gguf}).is_null());
  GgufVocab vocab = gguf_read_vocab(GgufFile::open(gguf));
  ASSERT_TRUE(std::holds_alternative<BpeVocab>(vocab));
  EXPECT_TRUE(std::get<BpeVocab>(vocab).sentencepiece_style);
  EXPECT_TRUE(std::get<BpeVocab>(vocab).add_bos);
  const BpeVocab bpe = std::get<BpeVocab>(vocab);
  auto from_gguf = make_bpe_tokenizer(bpe);
  expect_tokenizer_parity(*from_gguf, ref, corpus, true, "gemma4 GGUF vocabulary");
  // A compiled program carries it as tokenizer.json again, which loads to the same tokenizer.
  const std::string rewritten = dir.file("rewritten.json");
  write_tokenizer_json(bpe, rewritten);
  expect_tokenizer_parity(*load_tokenizer_json(rewritten), ref, corpus, true, "gemma4 GGUF vocabulary as tokenizer.json");
  EXPECT_EQ(run_tokenizer_ref({"load-json", rewritten, tokenizer_corpus_path()})["ids"], ref["ids"]);
}

}  // namespace
}  // namespace genai
