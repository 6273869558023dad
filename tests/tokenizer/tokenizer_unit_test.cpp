// Behaviour of the tokenizer pieces on their own: byte alphabet, pre-tokenizer splits, added
// tokens, streaming, file formats (including malformed files), synthetic vocabularies, speed.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/error.h"
#include "support/cli_runner.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/factory.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/synthetic_vocab.h"
#include "tokenizer/tokenizer_bin.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer/tokenizer_test_util.h"
#include "tokenizer/utf8.h"

namespace genai {
namespace {

void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

TEST(ByteLevel, AlphabetIsABijectionWithGpt2Spelling) {
  std::set<std::string> seen;
  for (int b = 0; b < 256; ++b) seen.insert(byte_level::byte_to_chars(static_cast<uint8_t>(b)));
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(byte_level::byte_to_chars(' '), "Ġ");
  EXPECT_EQ(byte_level::byte_to_chars('\n'), "Ċ");
  EXPECT_EQ(byte_level::byte_to_chars('a'), "a");
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::string enc, dec;
  byte_level::encode(all, enc);
  ASSERT_TRUE(byte_level::decode(enc, dec));
  EXPECT_EQ(dec, all);
  std::string untouched = "x";
  EXPECT_FALSE(byte_level::decode("<｜begin▁of▁sentence｜>", untouched));
  EXPECT_EQ(untouched, "x");
}

TEST(Utf8, IncompleteTailCountsOnlyUnfinishedSequences) {
  EXPECT_EQ(utf8::incomplete_tail("abc"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("a\xF0\x9F"), 2u);        // 2 of 4 bytes of an emoji
  EXPECT_EQ(utf8::incomplete_tail("a\xF0\x9F\x98\x80"), 0u);  // complete emoji
  EXPECT_EQ(utf8::incomplete_tail("\xC3"), 1u);
  EXPECT_EQ(utf8::incomplete_tail("\xE4\xBD"), 2u);
  EXPECT_EQ(utf8::incomplete_tail(""), 0u);
}

std::vector<std::string> split_with(const std::string& name, const std::string& text) {
  PreTokenizer pre(PreTokenizer::named_steps(name), "test");
  std::vector<std::string> out;
  for (auto& p : pre.split(text)) {
    std::string raw;
    EXPECT_TRUE(byte_level::decode(p, raw));
    out.push_back(raw);
  }
  return out;
}

TEST(PreTokenizer, NamedConfigurationsSplitLikeTheirModels) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_with("gpt2", "Hello world 12345"), (V{"Hello", " world", " 12345"}));
  EXPECT_EQ(split_with("smollm", "Hello world 12345"), (V{"Hello", " world", " ", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(split_with("llama-bpe", "Hello world 12345"), (V{"Hello", " world", " ", "123", "45"}));
  EXPECT_EQ(split_with("qwen2", "Hi 123"), (V{"Hi", " ", "1", "2", "3"}));
  EXPECT_EQ(split_with("llama-bpe", "I'M here"), (V{"I", "'M", " here"}));
  EXPECT_EQ(split_with("gpt2", "I'M here"), (V{"I", "'", "M", " here"}));
  EXPECT_EQ(split_with("gpt2", "a   b"), (V{"a", "  ", " b"}));
  EXPECT_EQ(split_with("gpt2", "你好 世界"), (V{"你好", " 世界"}));
  EXPECT_TRUE(split_with("gpt2", "").empty());
  EXPECT_NE(message_of([] { PreTokenizer::named_steps("nonesuch"); }).find("known:"), std::string::npos);
}

TEST(PreTokenizer, InvalidUtf8StaysOnePieceInsteadOfFailing) {
  PreTokenizer pre(PreTokenizer::named_steps("gpt2"), "test");
  const auto pieces = pre.split("ab\xFF\xFE cd");
  ASSERT_EQ(pieces.size(), 1u);
}

class SyntheticBpe : public ::testing::Test {
 protected:
  void SetUp() override { tok_ = make_bpe_tokenizer(make_synthetic_bpe_vocab(1024, 1)); }
  std::unique_ptr<Tokenizer> tok_;
};

TEST_F(SyntheticBpe, SpecialTokensMatchOnlyWhenParsed) {
  const auto parsed = tok_->encode("<|im_start|>user", false, true);
  ASSERT_FALSE(parsed.empty());
  EXPECT_EQ(parsed[0], 1);
  const auto literal = tok_->encode("<|im_start|>user", false, false);
  EXPECT_GT(literal.size(), 2u);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 1), 0);
  EXPECT_EQ(tok_->decode(literal), "<|im_start|>user");
  EXPECT_EQ(tok_->decode(parsed), "<|im_start|>user");
  EXPECT_EQ(tok_->special_id("<|im_end|>"), 2);
  EXPECT_EQ(tok_->special_id("hello"), -1);
}

TEST_F(SyntheticBpe, StopIdsAreEosThenEndTokens) {
  EXPECT_EQ(tok_->eos_id(), 2);
  EXPECT_EQ(tok_->stop_ids(), (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(tok_->bos_id(), 1);
  const auto with_bos = tok_->encode("hi", true);
  ASSERT_FALSE(with_bos.empty());
  EXPECT_EQ(with_bos[0], 1);
}

TEST_F(SyntheticBpe, StreamDecoderReleasesOnlyWholeCharacters) {
  const std::string text = "Hi 😀 ok 你好👨‍👩‍👧 done";
  const auto ids = tok_->encode(text, false);
  StreamDecoder stream(*tok_);
  std::string all;
  bool held_back = false;
  for (int32_t id : ids) {
    const std::string part = stream.push(id);
    EXPECT_EQ(utf8::incomplete_tail(part), 0u);
    held_back |= part.empty();
    all += part;
  }
  all += stream.flush();
  EXPECT_EQ(all, text);
  EXPECT_TRUE(held_back);  // byte tokens of the emoji came out only once complete
}

TEST_F(SyntheticBpe, ArbitraryBytesRoundTrip) {
  const std::string bytes = std::string("\xFF\xFE abc \x80", 9) + std::string(1, '\0') + "z";
  EXPECT_EQ(tok_->decode(tok_->encode(bytes, false)), bytes);
}

TEST_F(SyntheticBpe, OutOfRangeIdsAreInputErrors) {
  const std::vector<int32_t> bad{5, 99999};
  EXPECT_NE(message_of([&] { tok_->decode(bad); }).find("99999"), std::string::npos);
  EXPECT_THROW(tok_->token_bytes(-1, -3), InputError);
}

TEST(SyntheticVocab, HasExactSizeAndIsDeterministic) {
  for (int32_t n : {259, 300, 1024, 32000}) {
    const BpeVocab b = make_synthetic_bpe_vocab(n, 3);
    EXPECT_EQ(b.tokens.size(), static_cast<size_t>(n));
    EXPECT_EQ(b.types.size(), static_cast<size_t>(n));
    const SpmVocab s = make_synthetic_spm_vocab(n, 3);
    EXPECT_EQ(s.pieces.size(), static_cast<size_t>(n));
    EXPECT_EQ(s.scores.size(), static_cast<size_t>(n));
    EXPECT_EQ(s.types.size(), static_cast<size_t>(n));
  }
  const BpeVocab a = make_synthetic_bpe_vocab(2048, 9), b = make_synthetic_bpe_vocab(2048, 9);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.merges, b.merges);
  EXPECT_GT(a.merges.size(), 300u);  // the embedded text yields real merges
  const SpmVocab s1 = make_synthetic_spm_vocab(2048, 9), s2 = make_synthetic_spm_vocab(2048, 9);
  EXPECT_EQ(s1.pieces, s2.pieces);
  EXPECT_EQ(s1.pieces[0], "<unk>");
  EXPECT_EQ(s1.pieces[1], "<s>");
  EXPECT_EQ(s1.pieces[2], "</s>");
  EXPECT_EQ(s1.pieces[3], "<0x00>");
  EXPECT_EQ(s1.pieces[258], "<0xFF>");
  EXPECT_THROW(make_synthetic_bpe_vocab(100, 1), InputError);
  EXPECT_THROW(make_synthetic_spm_vocab(258, 1), InputError);
}

TEST(SyntheticVocab, BothKindsAreUsableOnTheCorpus) {
  const auto corpus = testing::tokenizer_corpus();
  auto bpe = make_bpe_tokenizer(make_synthetic_bpe_vocab(4096, 5));
  auto spm = make_spm_tokenizer(make_synthetic_spm_vocab(4096, 5));
  for (const auto& s : corpus) {
    EXPECT_EQ(bpe->decode(bpe->encode(s, false)), s) << testing::escaped(s);
    EXPECT_EQ(spm->decode(spm->encode(s, false, false)), s) << testing::escaped(s);
  }
  const std::string english = "The children walk to the school in the morning and the baker opens his shop.";
  EXPECT_LT(bpe->encode(english, false).size(), english.size() / 2);
  EXPECT_LT(spm->encode(english, false).size(), english.size() / 2);
  // SPM decoding drops the word-start space after BOS, like sentencepiece.
  const auto ids = spm->encode("Hello there", true);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(spm->decode(ids), "Hello there");
  StreamDecoder after_bos(*spm, spm->bos_id());
  std::string streamed;
  for (size_t i = 1; i < ids.size(); ++i) streamed += after_bos.push(ids[i]);
  EXPECT_EQ(streamed + after_bos.flush(), "Hello there");
  StreamDecoder mid_text(*spm);  // generated text continues a prompt: keep its leading space
  EXPECT_EQ(mid_text.push(ids[1]).substr(0, 1), " ");
}

TEST(SyntheticVocab, SpmControlTokensParseOnlyWhenAsked) {
  auto spm = make_spm_tokenizer(make_synthetic_spm_vocab(1024, 5));
  const auto parsed = spm->encode("<s>Hi</s>", false, true);
  ASSERT_GE(parsed.size(), 3u);
  EXPECT_EQ(parsed.front(), 1);
  EXPECT_EQ(parsed.back(), 2);
  const auto literal = spm->encode("<s>Hi</s>", false, false);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 1) + std::count(literal.begin(), literal.end(), 2), 0);
  EXPECT_EQ(spm->decode(literal), "<s>Hi</s>");
  EXPECT_EQ(spm->stop_ids(), (std::vector<int32_t>{2}));
  EXPECT_TRUE(spm->add_bos_by_default());
  EXPECT_FALSE(make_bpe_tokenizer(make_synthetic_bpe_vocab(300, 1))->add_bos_by_default());  // as SmolLM2
}

TEST(TokenizerBin, RoundTripIsExactAndDeterministic) {
  testing::TempDir dir;
  const SpmVocab v = make_synthetic_spm_vocab(600, 2);
  write_tokenizer_bin(v, dir.file("a.bin"));
  write_tokenizer_bin(v, dir.file("b.bin"));
  std::ifstream a(dir.file("a.bin"), std::ios::binary), b(dir.file("b.bin"), std::ios::binary);
  const std::string ba((std::istreambuf_iterator<char>(a)), {}), bb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(ba, bb);
  const SpmVocab r = read_tokenizer_bin(dir.file("a.bin"));
  EXPECT_EQ(r.pieces, v.pieces);
  EXPECT_EQ(r.scores, v.scores);
  EXPECT_EQ(r.types, v.types);
  EXPECT_EQ(ba.find("\xE2\x96\x81"), std::string::npos);  // llama2.c spells word starts with ' '
  auto tok = load_tokenizer_file(dir.file("a.bin"));
  EXPECT_EQ(tok->kind(), "llama2c");
  EXPECT_EQ(tok->decode(tok->encode("the river", true)), "the river");
}

TEST(TokenizerBin, MalformedFilesAreInputErrorsNamingTheFile) {
  testing::TempDir dir;
  const SpmVocab v = make_synthetic_spm_vocab(300, 2);
  write_tokenizer_bin(v, dir.file("good.bin"));
  std::ifstream in(dir.file("good.bin"), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), {});
  for (size_t cut : {size_t{2}, size_t{4 + 6}, good.size() - 1}) {
    const std::string path = dir.file("cut" + std::to_string(cut) + ".bin");
    write_bytes(path, std::string_view(good).substr(0, cut));
    const std::string msg = message_of([&] { read_tokenizer_bin(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  std::string huge_len = good.substr(0, 8);
  const int32_t len = 0x7FFFFFFF;
  huge_len.append(reinterpret_cast<const char*>(&len), 4);
  write_bytes(dir.file("huge.bin"), huge_len);
  EXPECT_NE(message_of([&] { read_tokenizer_bin(dir.file("huge.bin")); }).find("beyond the end"), std::string::npos);
}

TEST(TokenizerJson, UnsupportedFeaturesNameFileAndFeature) {
  testing::TempDir dir;
  auto try_json = [&](const std::string& name, const std::string& body) {
    const std::string path = dir.file(name);
    write_bytes(path, body);
    return message_of([&] { load_tokenizer_json(path); });
  };
  const std::string model = R"("model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]})";
  const std::string bl = R"("pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"})";
  std::string m = try_json("wp.json", R"({"model":{"type":"WordPiece","vocab":{}},)" + bl + "}");
  EXPECT_NE(m.find("wp.json"), std::string::npos) << m;
  EXPECT_NE(m.find("WordPiece"), std::string::npos) << m;
  m = try_json("nfc.json", "{" + model + R"(,"normalizer":{"type":"NFC"},)" + bl + "}");
  EXPECT_NE(m.find("normalizer"), std::string::npos) << m;
  m = try_json("meta.json", "{" + model + R"(,"pre_tokenizer":{"type":"Metaspace"},"decoder":{"type":"ByteLevel"}})");
  EXPECT_NE(m.find("Metaspace"), std::string::npos) << m;
  m = try_json("badmerge.json", R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]},)" + bl + "}");
  EXPECT_NE(m.find("merge"), std::string::npos) << m;
  m = try_json("hugeid.json", R"({"model":{"type":"BPE","vocab":{"a":1000000000},"merges":[]},)" + bl + "}");
  EXPECT_NE(m.find("gaps"), std::string::npos) << m;
  m = try_json("garbage.json", "{not json");
  EXPECT_NE(m.find("garbage.json"), std::string::npos) << m;
  // The minimal valid file works, with both merge spellings.
  write_bytes(dir.file("ok.json"), "{" + model + "," + bl + "}");
  auto tok = load_tokenizer_json(dir.file("ok.json"));
  EXPECT_EQ(tok->encode("ab", false), (std::vector<int32_t>{2}));
  write_bytes(dir.file("ok2.json"),
              R"({"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]},)" + bl + "}");
  EXPECT_EQ(load_tokenizer_json(dir.file("ok2.json"))->encode("ab", false), (std::vector<int32_t>{2}));
}

TEST(TokenizerJson, WriterIsDeterministicAndConfigRoundTrips) {
  testing::TempDir dir;
  BpeVocab v = make_synthetic_bpe_vocab(700, 4);
  v.pre_tokenizer = "llama-bpe";
  v.chat_template = "{{ '<|im_start|>' }}";
  write_tokenizer_json(v, dir.file("tokenizer.json"));
  write_tokenizer_json(v, dir.file("again.json"));
  std::ifstream a(dir.file("tokenizer.json")), b(dir.file("again.json"));
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(a)), {}), std::string((std::istreambuf_iterator<char>(b)), {}));
  write_tokenizer_config_json(v, dir.file("tokenizer_config.json"));
  const BpeVocab r = read_tokenizer_json_vocab(dir.file("tokenizer.json"));
  EXPECT_EQ(r.pre_tokenizer, "llama-bpe");
  EXPECT_EQ(r.bos_id, 1);
  EXPECT_EQ(r.eos_id, 2);
  EXPECT_EQ(r.chat_template, v.chat_template);
  auto tok = load_tokenizer_file(dir.path());  // a directory with tokenizer.json
  EXPECT_EQ(tok->kind(), "bpe");
  EXPECT_EQ(tok->chat_template(), v.chat_template);
  v.pre_tokenizer = "bogus";
  EXPECT_THROW(write_tokenizer_json(v, dir.file("x.json")), InputError);
}

TEST(TokenizerFile, DispatchRejectsUnknownContent) {
  testing::TempDir dir;
  write_bytes(dir.file("model.gguf"), "GGUF\x03\x00\x00\x00");
  EXPECT_NE(message_of([&] { load_tokenizer_file(dir.file("model.gguf")); }).find("GGUF"), std::string::npos);
  write_bytes(dir.file("empty.bin"), "");
  EXPECT_THROW(load_tokenizer_file(dir.file("empty.bin")), InputError);
  write_bytes(dir.file("bad.model"), "\x0A\xFF\xFF\xFF garbage");
  EXPECT_THROW(load_tokenizer_file(dir.file("bad.model")), InputError);
  EXPECT_THROW(load_tokenizer_file(dir.file("missing.json")), InputError);
  EXPECT_THROW(load_tokenizer_file(dir.path()), InputError);  // directory without tokenizer files
}

TEST(TokenizerLongInput, OneMegabyteRoundTripsThroughBothAlgorithms) {
  // Throughput is measured by bench/tokenizer_bench.cpp; this checks long inputs stay correct.
  std::string text;
  const auto corpus = testing::tokenizer_corpus();
  while (text.size() < (1u << 20))
    for (const auto& s : corpus) text += s + " ";
  auto bpe = make_bpe_tokenizer(make_synthetic_bpe_vocab(8192, 1));
  const auto ids = bpe->encode(text, false);
  EXPECT_EQ(bpe->decode(ids), text);
  auto spm = make_spm_tokenizer(make_synthetic_spm_vocab(8192, 1));
  EXPECT_EQ(spm->decode(spm->encode(text, false, false)), text);
}

// A sentencepiece model with a user-defined piece starting with a NUL byte made libsentencepiece's
// trie builder throw through its loader and end the process (found by fuzz_sentencepiece); such a
// piece, any NUL byte in a piece and an empty piece are an InputError naming the file and piece.
TEST(SentencePieceModel, EmptyOrNulPieceIsInputError) {
  testing::TempDir dir;
  // ModelProto { pieces { piece: "<unk>" type: UNKNOWN } pieces { piece: <first> score: -0.5
  // type: <first_type> } pieces { piece: "a" score: -1 } } (unigram by default).
  auto model = [](std::string_view first, std::string_view first_type = "") {
    auto piece = [](std::string_view text, char score_byte, std::string_view type) {
      std::string m;
      m += '\x0a';
      m += static_cast<char>(text.size());
      m += text;
      m += std::string("\x15\x00\x00", 3) + score_byte + '\xbf';  // float score
      m += type;
      return std::string("\x0a") + static_cast<char>(m.size()) + m;
    };
    return piece("<unk>", '\x00', "\x18\x02") + piece(first, '\x00', first_type) + piece("a", '\x80', "");
  };
  const std::string empty = dir.file("empty.model"), nul = dir.file("nul.model");
  const std::string nul_user = dir.file("nul_user.model");
  write_bytes(empty, model(""));
  write_bytes(nul, model(std::string_view("b\0c", 3)));
  write_bytes(nul_user, model(std::string_view("\0", 1), "\x18\x04"));  // USER_DEFINED: the crash
  const std::string e = message_of([&] { (void)load_sentencepiece_model(empty); });
  EXPECT_NE(e.find("empty.model"), std::string::npos) << e;
  EXPECT_NE(e.find("piece 1 is empty"), std::string::npos) << e;
  const std::string n = message_of([&] { (void)load_sentencepiece_model(nul); });
  EXPECT_NE(n.find("piece 1 holds a NUL byte"), std::string::npos) << n;
  const std::string u = message_of([&] { (void)load_sentencepiece_model(nul_user); });
  EXPECT_NE(u.find("piece 1 holds a NUL byte"), std::string::npos) << u;
  // The same model with a real first piece still loads.
  const std::string ok = dir.file("ok.model");
  write_bytes(ok, model("b"));
  EXPECT_EQ(load_sentencepiece_model(ok)->vocab_size(), 3);
}

}  // namespace
}  // namespace genai
