// Verifying what we load (issue 21): manifest.json records the size and digest of every file it
// names; `genai run -a` refuses a truncated, swapped or corrupted program or tokenizer with exit 2
// naming it, and --no_verify skips the checks. The sweep flips single bits in a compiled
// text_decoder.pte of a tiny synthetic model: every copy is exit 2, and with --no_verify no copy
// crashes. The long sweep ("Long" in the name: ctest label long) runs 400 copies.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include <xxhash.h>

#include "backends/register_builtin.h"
#include "core/chunked_digest.h"
#include "core/sha256.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/random.h"
#include "pte/program_reader.h"
#include "runtime/load_verification.h"
#include "runtime/program_instance.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"
#include "support/sanitizers.h"

namespace genai {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_genai;

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> compile_args(const std::string& checkpoint, const std::string& dir) {
  return {"compile", "--checkpoint", checkpoint, "-a", dir, "--soc_model", "SM8650", "--lowering", "genai", "--quant_recipe", "16a8w",
          "--max_seq_len", "64", "--prefill_ar_len", "16", "--threads", "2"};
}

std::vector<std::string> run_args(const std::string& dir) {
  return {"run", "-a", dir, "--prompt", "Hi", "--temperature", "0", "--max_new_tokens", "3", "--threads", "1"};
}

class LoadVerification : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    for (const char* seed : {"3", "4"}) {
      const std::string ckpt = dir_->file(std::string("tiny") + seed + ".gguf");
      auto r = run_genai({"synth", "--shape", "tiny", "--format", "gguf", "--seed", seed, "--out", ckpt});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      r = run_genai(compile_args(ckpt, dir_->file(std::string("art") + seed)));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void TearDown() override { runtime::set_load_verification(true); }
  static std::string art() { return dir_->file("art3"); }
  static std::string other_art() { return dir_->file("art4"); }  // another model, same shape
  static testing::TempDir* dir_;
};
testing::TempDir* LoadVerification::dir_ = nullptr;

TEST_F(LoadVerification, ManifestRecordsSizeAndDigestOfEveryFileItNames) {
  const auto m = nlohmann::json::parse(read_bytes(art() + "/manifest.json"));
  ASSERT_TRUE(m.contains("checksums"));
  for (const std::string name : {"text_decoder.pte", "tokenizer.json", "tokenizer_config.json"}) {
    const auto& c = m["checksums"][name];
    EXPECT_EQ(c["size"].get<uint64_t>(), fs::file_size(art() + "/" + name)) << name;
    EXPECT_EQ(c["chunked_xxh3_128"].get<std::string>(),
              chunked_digest_file_hex(art() + "/" + name, DigestKind::kXxh3_128))
        << name;
  }
  EXPECT_EQ(m["checksums"].size(), 3u);
}

// The chunked digest is the hash of the chunk hashes in order: computed here from the libraries
// directly (xxHash's canonical 16 bytes per chunk; SHA-256's 32), against chunked_digest_hex.
TEST_F(LoadVerification, ChunkedDigestIsTheHashOfTheChunkHashes) {
  std::vector<uint8_t> bytes(kChunkedDigestChunkBytes * 2 + 5);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> xxh_chunks, sha_chunks;
  for (size_t off = 0; off < bytes.size(); off += kChunkedDigestChunkBytes) {
    const size_t n = std::min(kChunkedDigestChunkBytes, bytes.size() - off);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(bytes.data() + off, n));
    xxh_chunks.insert(xxh_chunks.end(), std::begin(c.digest), std::end(c.digest));
    Sha256 h;
    h.update(std::span<const uint8_t>(bytes.data() + off, n));
    const auto d = h.finish();
    sha_chunks.insert(sha_chunks.end(), d.begin(), d.end());
  }
  XXH128_canonical_t top;
  XXH128_canonicalFromHash(&top, XXH3_128bits(xxh_chunks.data(), xxh_chunks.size()));
  Sha256 sha_top;
  sha_top.update(std::span<const uint8_t>(sha_chunks));
  const auto sha_digest = sha_top.finish();
  EXPECT_EQ(chunked_digest_hex(bytes, DigestKind::kXxh3_128), to_hex(std::span<const uint8_t>(top.digest, 16)));
  EXPECT_EQ(chunked_digest_hex(bytes, DigestKind::kSha256), to_hex(sha_digest));
  for (DigestKind kind : {DigestKind::kXxh3_128, DigestKind::kSha256}) {
    const std::string d = chunked_digest_hex(bytes, kind);
    EXPECT_EQ(d.size(), digest_hex_digits(kind));
    bytes.back() ^= 1;
    EXPECT_NE(chunked_digest_hex(bytes, kind), d);
    bytes.back() ^= 1;
  }
}

// A manifest written before XXH3 records "chunked_sha256": still checked, still refused when the
// file does not match.
TEST_F(LoadVerification, OlderManifestsWithSha256DigestsAreStillChecked) {
  testing::TempDir tmp;
  const std::string old = tmp.file("old");
  testing::copy_dir(art(), old);
  auto m = nlohmann::json::parse(read_bytes(old + "/manifest.json"));
  for (auto& [name, c] : m["checksums"].items()) {
    c.erase("chunked_xxh3_128");
    c["chunked_sha256"] = chunked_digest_file_hex(old + "/" + name, DigestKind::kSha256);
  }
  std::ofstream(old + "/manifest.json", std::ios::trunc) << m.dump(1);
  const auto r = run_genai(run_args(old));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ofstream(old + "/tokenizer.json", std::ios::app) << " ";
  testing::expect_exit2(run_args(old), {"tokenizer.json", "manifest.json"});
}

// A corrupted delegate payload is named by the method that runs it (manifest.json records each
// method's payload digest beside the file's).
TEST_F(LoadVerification, CorruptedDelegatePayloadIsExitCode2NamingTheMethod) {
  const std::string program = art() + "/text_decoder.pte";
  const auto m = nlohmann::json::parse(read_bytes(art() + "/manifest.json"));
  ASSERT_TRUE(m["checksums"]["text_decoder.pte"].contains("payloads"));
  EXPECT_TRUE(m["checksums"]["text_decoder.pte"]["payloads"].contains("kv_forward"));
  uint64_t offset = 0;
  {
    const auto mapped = MappedFile::open(program);
    const auto loaded = pte::read_program_bytes(mapped->bytes(), program, mapped);
    for (const auto& method : loaded.program.methods)
      if (method.name == "kv_forward") {
        ASSERT_FALSE(method.delegates.empty());
        const auto payload = method.delegates.front().processed.bytes();
        offset = static_cast<uint64_t>(payload.data() - mapped->bytes().data()) + payload.size() / 2;
      }
  }
  ASSERT_GT(offset, 0u);
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  {
    std::fstream f(bad + "/text_decoder.pte", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    const char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x10));
  }
  testing::expect_exit2(run_args(bad), {"text_decoder.pte", "delegate payload of method", "kv_forward"});
}

TEST_F(LoadVerification, TruncatedProgramIsExitCode2NamingIt) {
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  fs::resize_file(bad + "/text_decoder.pte", fs::file_size(bad + "/text_decoder.pte") - 1);
  testing::expect_exit2(run_args(bad), {"text_decoder.pte", "manifest.json", "truncated"});
}

TEST_F(LoadVerification, SwappedProgramOrTokenizerIsExitCode2NamingIt) {
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  fs::copy_file(other_art() + "/text_decoder.pte", bad + "/text_decoder.pte", fs::copy_options::overwrite_existing);
  testing::expect_exit2(run_args(bad), {"text_decoder.pte", "manifest.json"});
  // --no_verify skips the check: the other model's program runs.
  auto args = run_args(bad);
  args.push_back("--no_verify");
  const auto r = run_genai(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;

  testing::copy_dir(art(), bad);
  std::ofstream(bad + "/tokenizer.json", std::ios::app) << " ";
  testing::expect_exit2(run_args(bad), {"tokenizer.json", "manifest.json"});

  // The tokenizer's companion (special tokens, chat template): changed, or gone.
  testing::copy_dir(art(), bad);
  std::ofstream(bad + "/tokenizer_config.json", std::ios::app) << " ";
  testing::expect_exit2(run_args(bad), {"tokenizer_config.json", "manifest.json"});
  testing::copy_dir(art(), bad);
  fs::remove(bad + "/tokenizer_config.json");
  testing::expect_exit2(run_args(bad), {"tokenizer_config.json", "manifest.json"});
}

TEST_F(LoadVerification, NoVerifyRunsTheSameTokens) {
  auto args = run_args(art());
  args.push_back("--json");
  const auto a = run_genai(args);
  args.push_back("--no_verify");
  const auto b = run_genai(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["tokens"], nlohmann::json::parse(b.out)["tokens"]);
}

TEST_F(LoadVerification, BenchReportsLoadTimeBothWays) {
  const auto r = run_genai({"bench", "-a", art(), "--pp", "8", "--tg", "4", "--reps", "1", "--threads", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["load_ms"].get<double>(), 0.0);
  EXPECT_GT(j["load_ms_no_verify"].get<double>(), 0.0);
}

// A bare .pte (no manifest): each named-data blob is checked against the hash its key carries.
TEST_F(LoadVerification, ACorruptedBlobOfABareProgramNamesTheBlob) {
  backends::register_builtin_backends();
  testing::TempDir tmp;
  const std::string pte = tmp.file("p.pte");
  auto bytes = read_bytes(art() + "/text_decoder.pte");
  const auto loaded = pte::read_program_bytes(bytes, "p.pte");
  ASSERT_FALSE(loaded.program.named_data.empty());
  const pte::NamedData& blob = loaded.program.named_data.back();
  const std::string key = blob.key;
  const size_t offset = static_cast<size_t>(blob.data.data() - bytes.data()) + blob.data.size() / 2;
  bytes[offset] ^= 0x10;
  write_bytes(pte, bytes);
  try {
    runtime::ProgramInstance::load(pte);
    ADD_FAILURE() << "loaded a corrupted program";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p.pte"), std::string::npos) << e.what();
  }
  runtime::set_load_verification(false);
  EXPECT_NO_THROW(runtime::ProgramInstance::load(pte));
  // The same copy in an artifact dir: the manifest's digest catches it and names the blob too.
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art(), bad);
  write_bytes(bad + "/text_decoder.pte", bytes);
  testing::expect_exit2(run_args(bad), {"text_decoder.pte", key});
}

// Single bit flips at seeded random offsets of text_decoder.pte: exit 2 naming the file every
// time; with --no_verify (every `no_verify_every`-th copy) no crash: exit 0, 1 or 2.
void bit_flip_sweep(const std::string& art, int copies, int no_verify_every) {
  const auto original = read_bytes(art + "/text_decoder.pte");
  testing::TempDir tmp;
  const std::string bad = tmp.file("bad");
  testing::copy_dir(art, bad);
  Xoshiro256 rng(21);
  int ran_with_no_verify = 0;
  for (int i = 0; i < copies; ++i) {
    auto bytes = original;
    const size_t offset = static_cast<size_t>(rng.next() % bytes.size());
    bytes[offset] ^= static_cast<uint8_t>(1u << (rng.next() % 8));
    write_bytes(bad + "/text_decoder.pte", bytes);
    const auto r = run_genai(run_args(bad));
    EXPECT_EQ(r.exit_code, 2) << "bit flip at byte " << offset << ": " << r.err;
    EXPECT_NE(r.err.find("text_decoder.pte"), std::string::npos) << r.err;
    if (no_verify_every > 0 && i % no_verify_every == 0) {
      auto args = run_args(bad);
      args.push_back("--no_verify");
      const auto n = run_genai(args);
      EXPECT_TRUE(n.exit_code == 0 || n.exit_code == 1 || n.exit_code == 2)
          << "bit flip at byte " << offset << " with --no_verify: exit " << n.exit_code << ": " << n.err;
      ++ran_with_no_verify;
    }
  }
  std::printf("[ info ] %d corrupted copies, %d also run with --no_verify\n", copies, ran_with_no_verify);
}

// 40 copies (16 under the sanitizers, where each spawn of genai costs about ten times as much
// and fuzz_pte_reader drives the reader itself: testing::rounds).
TEST_F(LoadVerification, EveryBitFlippedProgramIsExitCode2) { bit_flip_sweep(art(), testing::rounds(40, 16), 4); }

TEST_F(LoadVerification, LongEveryBitFlippedProgramIsExitCode2) { bit_flip_sweep(art(), 400, 2); }

}  // namespace
}  // namespace genai
