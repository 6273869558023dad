// Dequantizers and quantizers against llama.cpp's Python `gguf` package (gguf_quants_ref.py).
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "formats/ggml_types.h"
#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "support/cli_runner.h"

namespace genai {
namespace {

class GgufQuantsReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    path_ = dir_->file("quants.gguf");
    auto r = testing::run_process({"python3", testing::python_script("gguf_quants_ref.py"), path_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static testing::TempDir* dir_;
  static std::string path_;
};
testing::TempDir* GgufQuantsReference::dir_ = nullptr;
std::string GgufQuantsReference::path_;

TEST_F(GgufQuantsReference, DequantizeMatchesPythonForEveryType) {
  GgufFile f = GgufFile::open(path_);
  for (const char* type : {"Q8_0", "Q4_0", "Q4_1", "Q4_K", "Q5_K", "Q6_K", "F16", "BF16"}) {
    SCOPED_TRACE(type);
    const GgufTensorInfo* q = f.find_tensor(std::string("q.") + type);
    const GgufTensorInfo* e = f.find_tensor(std::string("expected.") + type);
    ASSERT_NE(q, nullptr);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(ggml_type_name(q->type), type);
    EXPECT_EQ(q->shape(), (Shape{4, 512}));
    Tensor got = f.tensor_f32(*q);
    Tensor want = f.tensor_f32(*e);
    ASSERT_EQ(got.shape(), want.shape());
    int mismatches = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      const float a = got.data<float>()[i], b = want.data<float>()[i];
      if (std::fabs(a - b) > 1e-6f * std::max(1.0f, std::fabs(b))) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST_F(GgufQuantsReference, QuantizersAreBitExactWithPython) {
  GgufFile f = GgufFile::open(path_);
  for (const char* type : {"Q8_0", "Q4_0", "Q4_1", "F16", "BF16"}) {
    SCOPED_TRACE(type);
    const GgufTensorInfo* src = f.find_tensor(std::string("source.") + type);
    const GgufTensorInfo* q = f.find_tensor(std::string("q.") + type);
    ASSERT_NE(src, nullptr);
    Tensor x = f.tensor_f32(*src);
    std::vector<uint8_t> mine = ggml_encode(q->type, x.data<float>(), x.numel());
    auto theirs = f.tensor_bytes(*q);
    ASSERT_EQ(mine.size(), theirs.size());
    EXPECT_EQ(0, std::memcmp(mine.data(), theirs.data(), mine.size()));
  }
}

TEST(GgmlTypes, BlockSizesFollowGgml) {
  EXPECT_EQ(ggml_type_info(GgmlType::kQ4_0).type_size, 18);
  EXPECT_EQ(ggml_type_info(GgmlType::kQ4_1).type_size, 20);
  EXPECT_EQ(ggml_type_info(GgmlType::kQ8_0).type_size, 34);
  EXPECT_EQ(ggml_type_info(GgmlType::kQ4_K).type_size, 144);
  EXPECT_EQ(ggml_type_info(GgmlType::kQ5_K).type_size, 176);
  EXPECT_EQ(ggml_type_info(GgmlType::kQ6_K).type_size, 210);
  EXPECT_EQ(ggml_nbytes(GgmlType::kQ6_K, 512), 420u);
  EXPECT_EQ(ggml_type_id_name(6), "Q5_0");
  EXPECT_EQ(ggml_type_from_name("q8_0"), GgmlType::kQ8_0);
  EXPECT_FALSE(ggml_type_from_name("q5_0").has_value());
}

TEST(GgmlTypes, Q8RoundTripErrorIsWithinHalfAStep) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * (i < 32 ? 1.0f : 0.01f);
  auto q = ggml_encode(GgmlType::kQ8_0, x.data(), 64);
  std::vector<float> y(64);
  ggml_dequantize(GgmlType::kQ8_0, q.data(), y.data(), 64);
  for (int b = 0; b < 2; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    for (int i = 0; i < 32; ++i) EXPECT_LE(std::fabs(x[b * 32 + i] - y[b * 32 + i]), amax / 127.0f * 0.51f);
  }
}

TEST(GgmlTypes, Q4_0OfZerosIsZero) {
  std::vector<float> x(32, 0.0f), y(32, 1.0f);
  auto q = ggml_encode(GgmlType::kQ4_0, x.data(), 32);
  ggml_dequantize(GgmlType::kQ4_0, q.data(), y.data(), 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace genai
