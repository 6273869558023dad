// GGUF reader/writer: round trips, metadata of every type, alignment, hostile files, and files
// read by llama.cpp's Python `gguf` package.
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/mapped_file.h"
#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai {
namespace {

GgufWriter sample_writer(uint64_t alignment = 32) {
  GgufWriter w(alignment);
  w.set("general.architecture", GgufValue::string("llama"));
  w.set("u8", GgufValue::u8(200));
  w.set("i8", {GgufValueType::kInt8, {}, int64_t{-5}});
  w.set("u16", {GgufValueType::kUint16, {}, uint64_t{65535}});
  w.set("i16", {GgufValueType::kInt16, {}, int64_t{-300}});
  w.set("u32", GgufValue::u32(123456));
  w.set("i32", GgufValue::i32(-7));
  w.set("f32", GgufValue::f32(0.25f));
  w.set("bool", GgufValue::boolean(true));
  w.set("str", GgufValue::string("héllo"));
  w.set("u64", GgufValue::u64(uint64_t{1} << 40));
  w.set("i64", GgufValue::i64(-(int64_t{1} << 40)));
  w.set("f64", GgufValue::f64(1e-300));
  w.set("strings", GgufValue::string_array({"a", "", "ccc"}));
  w.set("floats", GgufValue::f32_array({1.5f, -2.0f}));
  w.set("nested", GgufValue::array(GgufValueType::kArray, {GgufValue::i32_array({1, 2}), GgufValue::i32_array({})}));
  w.set("empty", GgufValue::array(GgufValueType::kString, {}));
  std::vector<float> a(3 * 64), b(32);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.01f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i);
  w.add_tensor_f32("a.f32", GgmlType::kF32, {3, 64}, a);
  w.add_tensor_f32("a.f16", GgmlType::kF16, {3, 64}, a);
  w.add_tensor_f32("a.q8", GgmlType::kQ8_0, {3, 64}, a);
  w.add_tensor_f32("b", GgmlType::kF32, {32}, b);
  return w;
}

TEST(Gguf, RoundTripKeepsMetadataAndTensors) {
  testing::TempDir dir;
  const auto path = dir.file("x.gguf");
  sample_writer().write(path);
  GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  EXPECT_EQ(f.get_int("u8"), 200);
  EXPECT_EQ(f.get_int("i8"), -5);
  EXPECT_EQ(f.get_int("u16"), 65535);
  EXPECT_EQ(f.get_int("i16"), -300);
  EXPECT_EQ(f.get_int("u32"), 123456);
  EXPECT_EQ(f.get_int("i32"), -7);
  EXPECT_EQ(f.get_number("f32"), 0.25);
  EXPECT_EQ(f.get_bool("bool"), true);
  EXPECT_EQ(f.get_string("str"), "héllo");
  EXPECT_EQ(f.get_int("u64"), int64_t{1} << 40);
  EXPECT_EQ(f.get_int("i64"), -(int64_t{1} << 40));
  EXPECT_EQ(f.get_number("f64"), 1e-300);
  EXPECT_EQ(f.get_string_array("strings"), (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f.get_float_array("floats"), (std::vector<float>{1.5f, -2.0f}));
  const GgufValue* nested = f.find("nested");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->as_array()->size(), 2u);
  EXPECT_EQ((*nested->as_array())[0], GgufValue::i32_array({1, 2}));
  EXPECT_TRUE(f.get_string_array("empty").empty());
  EXPECT_EQ(f.metadata().front().first, "general.architecture");  // insertion order kept
  EXPECT_THROW(f.get_string("u32"), InputError);

  ASSERT_EQ(f.tensors().size(), 4u);
  const GgufTensorInfo* t = f.find_tensor("a.f32");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->shape(), (Shape{3, 64}));
  EXPECT_EQ(t->ne, (std::vector<uint64_t>{64, 3}));
  Tensor x = f.tensor_f32(*t);
  EXPECT_TRUE(x.is_view());  // F32 is a view into the map, no copy
  EXPECT_FLOAT_EQ(x.data<float>()[65], 65 * 0.01f - 0.5f);
  Tensor h = f.tensor_f32(*f.find_tensor("a.f16"));
  Tensor q = f.tensor_f32(*f.find_tensor("a.q8"));
  for (int i = 0; i < 192; ++i) {
    EXPECT_NEAR(h.data<float>()[i], x.data<float>()[i], 1e-3);
    EXPECT_NEAR(q.data<float>()[i], x.data<float>()[i], 1.42f / 127 * 0.5f + 1.42f / 1024);
  }
  for (const auto& ti : f.tensors()) EXPECT_EQ(ti.offset % 32, 0u);
}

TEST(Gguf, WriterIsDeterministicAndHonoursAlignment) {
  testing::TempDir dir;
  sample_writer().write(dir.file("a.gguf"));
  sample_writer().write(dir.file("b.gguf"));
  EXPECT_EQ(testing::read_bytes(dir.file("a.gguf")), testing::read_bytes(dir.file("b.gguf")));
  sample_writer(64).write(dir.file("c.gguf"));
  GgufFile f = GgufFile::open(dir.file("c.gguf"));
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  for (const auto& t : f.tensors()) EXPECT_EQ(t.offset % 64, 0u);
}

TEST(Gguf, PythonGgufPackageReadsOurFile) {
  testing::TempDir dir;
  const auto path = dir.file("x.gguf");
  sample_writer().write(path);
  auto r = testing::run_process({"python3", testing::python_script("gguf_read_ref.py"), path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metadata"]["u32"], 123456);
  EXPECT_EQ(j["metadata"]["str"], "héllo");
  EXPECT_EQ(j["metadata"]["strings"], nlohmann::json({"a", "", "ccc"}));
  EXPECT_EQ(j["tensors"]["a.q8"]["type"], "Q8_0");
  EXPECT_EQ(j["tensors"]["a.q8"]["shape"], nlohmann::json({3, 64}));
  GgufFile f = GgufFile::open(path);
  Tensor q = f.tensor_f32(*f.find_tensor("a.q8"));
  EXPECT_NEAR(j["tensors"]["a.q8"]["sum"].get<double>(), [&] {
    double s = 0;
    for (int i = 0; i < q.numel(); ++i) s += q.data<float>()[i];
    return s;
  }(), 1e-4);
}

// Every truncation of a valid file is an InputError naming the file, never a crash.
TEST(Gguf, EveryTruncationIsAnInputError) {
  testing::TempDir dir;
  const auto path = dir.file("x.gguf");
  sample_writer().write(path);
  auto bytes = testing::read_bytes(path);
  for (size_t n = 0; n < bytes.size(); n += (n < 2000 ? 1 : 97)) {
    try {
      GgufFile::parse(std::span<const uint8_t>(bytes.data(), n), "cut.gguf");
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.gguf"), std::string::npos);
    }
  }
}

struct Corruption {
  const char* what;
  size_t offset;
  std::vector<uint8_t> bytes;
  const char* message;
};

TEST(Gguf, CorruptedHeadersAreInputErrors) {
  GgufWriter w;
  w.set("k", GgufValue::u32(1));
  w.add_tensor_f32("t", GgmlType::kF32, {2, 4}, std::vector<float>(8, 1.0f));
  testing::TempDir dir;
  w.write(dir.file("x.gguf"));
  const auto good = testing::read_bytes(dir.file("x.gguf"));
  // Layout: magic 0, version 4, n_tensors 8, n_kv 16, key len 24, "k" 32, type 33, value 37,
  // tensor name len 41, "t" 49, n_dims 50, ne0 54, ne1 62, type 70, offset 74.
  auto u64 = [](uint64_t v) {
    std::vector<uint8_t> b(8);
    std::memcpy(b.data(), &v, 8);
    return b;
  };
  auto u32 = [](uint32_t v) {
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &v, 4);
    return b;
  };
  const std::vector<Corruption> cases = {
      {"magic", 0, {'G', 'G', 'U', 'X'}, "magic"},
      {"version", 4, u32(7), "version 7"},
      {"tensor count", 8, u64(uint64_t{1} << 60), "tensor count"},
      {"kv count", 16, u64(uint64_t{1} << 60), "metadata count"},
      {"key length", 24, u64(uint64_t{1} << 50), "truncated"},
      {"value type", 33, u32(99), "invalid value type"},
      {"n_dims", 50, u32(9), "dimensions"},
      {"ne", 54, u64(0), "invalid dimension"},
      {"tensor type", 70, u32(6), "Q5_0"},
      {"offset misaligned", 74, u64(3), "not aligned"},
      {"offset past end", 74, u64(1 << 20), "beyond the file end"},
  };
  // Version 2 has the same layout (64-bit counts) and is accepted.
  auto v2 = good;
  v2[4] = 2;
  EXPECT_EQ(GgufFile::parse(v2, "v2.gguf").version(), 2u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto bad = good;
    std::copy(c.bytes.begin(), c.bytes.end(), bad.begin() + c.offset);
    try {
      GgufFile::parse(bad, "bad.gguf");
      ADD_FAILURE() << "parsed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.gguf"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

TEST(Gguf, DeeplyNestedArraysAreRejected) {
  std::vector<uint8_t> b;
  auto put = [&](const void* p, size_t n) { b.insert(b.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
  uint32_t magic = kGgufMagic, version = 3, arr = 9;
  uint64_t nt = 0, nkv = 1, klen = 1, one = 1;
  put(&magic, 4), put(&version, 4), put(&nt, 8), put(&nkv, 8), put(&klen, 8), put("k", 1), put(&arr, 4);
  for (int i = 0; i < 100; ++i) put(&arr, 4), put(&one, 8);
  b.resize(b.size() + 64, 0);
  EXPECT_THROW(GgufFile::parse(b, "deep.gguf"), InputError);
}

}  // namespace
}  // namespace genai
