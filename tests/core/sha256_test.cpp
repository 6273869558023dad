#include "core/sha256.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(std::string_view()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(std::string_view("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 7 + 3);
  for (size_t split : {size_t{0}, size_t{1}, size_t{55}, size_t{56}, size_t{63}, size_t{64}, size_t{65}, size_t{999}}) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    const auto d = h.finish();
    EXPECT_EQ(to_hex(d), sha256_hex(text)) << "split at " << split;
  }
}

TEST(Sha256, FileHashMatchesBytesAndNamesMissingFiles) {
  testing::TempDir dir;
  const std::string path = dir.file("data.bin");
  std::ofstream(path, std::ios::binary) << "hello world";
  EXPECT_EQ(sha256_file_hex(path), "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
  std::ofstream(dir.file("empty.bin"), std::ios::binary).flush();
  EXPECT_EQ(sha256_file_hex(dir.file("empty.bin")), sha256_hex(std::string_view()));
  try {
    sha256_file_hex(dir.file("missing.bin"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.bin"), std::string::npos);
  }
}

}  // namespace
}  // namespace genai
