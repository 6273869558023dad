// llama2.c checkpoint layout: round trip, shared/separate classifier, bad files.
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "formats/llama2c_file.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

Llama2cHeader tiny_header(bool shared) {
  Llama2cHeader h;
  h.dim = 8;
  h.hidden_dim = 12;
  h.n_layers = 2;
  h.n_heads = 2;
  h.n_kv_heads = 1;
  h.vocab_size = 10;
  h.seq_len = 4;
  h.shared_classifier = shared;
  return h;
}

// Each array filled with (array index * 1000 + element index).
std::vector<float> fill(const Llama2cHeader& h, const Llama2cArray& a) {
  const auto layout = llama2c_layout(h);
  size_t idx = 0;
  while (layout[idx].name != a.name) ++idx;
  std::vector<float> v(static_cast<size_t>(shape_numel(a.shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(idx * 1000 + i);
  return v;
}

TEST(Llama2c, RoundTripBothClassifierKinds) {
  for (bool shared : {true, false}) {
    SCOPED_TRACE(shared);
    testing::TempDir dir;
    const auto h = tiny_header(shared);
    write_llama2c(dir.file("m.bin"), h, [&](const Llama2cArray& a) { return fill(h, a); });
    Llama2cFile f = Llama2cFile::open(dir.file("m.bin"));
    EXPECT_EQ(f.header().dim, 8);
    EXPECT_EQ(f.header().n_kv_heads, 1);
    EXPECT_EQ(f.header().vocab_size, 10);
    EXPECT_EQ(f.header().shared_classifier, shared);
    EXPECT_EQ(f.has("wcls"), !shared);
    Tensor wk = f.array("wk");
    EXPECT_EQ(wk.shape(), (Shape{2, 4, 8}));  // kv heads * head_size = 4
    EXPECT_TRUE(wk.is_view());
    EXPECT_EQ(wk.data<float>()[5], 3 * 1000 + 5);
    EXPECT_EQ(f.array("rms_final_weight").data<float>()[7], 10 * 1000 + 7);
    EXPECT_THROW(f.array("nope"), InputError);
  }
}

TEST(Llama2c, WrongSizesAndHeadersAreInputErrors) {
  testing::TempDir dir;
  const auto h = tiny_header(true);
  write_llama2c(dir.file("m.bin"), h, [&](const Llama2cArray& a) { return fill(h, a); });
  std::ifstream in(dir.file("m.bin"), std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (size_t n : {size_t{0}, size_t{27}, size_t{28}, bytes.size() - 1}) {
    try {
      Llama2cFile::parse(std::span<const uint8_t>(bytes.data(), n), "cut.bin");
      ADD_FAILURE() << n;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.bin"), std::string::npos);
    }
  }
  auto extra = bytes;
  extra.push_back(0);
  EXPECT_THROW(Llama2cFile::parse(extra, "long.bin"), InputError);
  auto bad = bytes;
  int32_t heads = 3;  // 8 is not divisible by 3
  std::memcpy(bad.data() + 12, &heads, 4);
  EXPECT_THROW(Llama2cFile::parse(bad, "bad.bin"), InputError);
  int32_t negative = -1;
  std::memcpy(bad.data(), &negative, 4);
  EXPECT_THROW(Llama2cFile::parse(bad, "bad.bin"), InputError);
}

}  // namespace
}  // namespace genai
