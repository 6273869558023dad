// safetensors reader/writer: round trips, header validation, shards, and the Python reference.
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/half.h"
#include "formats/safetensors_file.h"
#include "support/cli_runner.h"
#include "support/file_helpers.h"

namespace genai {
namespace {

template <typename T>
SafetensorsTensorToWrite make(const std::string& name, DType dtype, Shape shape, std::vector<T> values) {
  return {name, dtype, std::move(shape), [values] {
            std::vector<uint8_t> b(values.size() * sizeof(T));
            std::memcpy(b.data(), values.data(), b.size());
            return b;
          }};
}

std::vector<SafetensorsTensorToWrite> sample() {
  std::vector<float> f(6);
  for (int i = 0; i < 6; ++i) f[i] = 0.5f * static_cast<float>(i) - 1.0f;
  std::vector<uint16_t> h, bf;
  for (float v : f) h.push_back(f32_to_f16(v)), bf.push_back(f32_to_bf16(v));
  return {make("zeta.f32", DType::kF32, {2, 3}, f), make("alpha.f16", DType::kF16, {3, 2}, h),
          make("mid.bf16", DType::kBF16, {6}, bf), make<int32_t>("ids", DType::kI32, {2}, {7, -7})};
}

std::vector<uint8_t> file_with_header(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> b(8 + header.size() + data_bytes, 0);
  const uint64_t n = header.size();
  std::memcpy(b.data(), &n, 8);
  std::memcpy(b.data() + 8, header.data(), header.size());
  return b;
}

TEST(Safetensors, RoundTripConvertsToFloat) {
  testing::TempDir dir;
  write_safetensors(dir.file("m.safetensors"), sample(), {{"format", "pt"}});
  SafetensorsFile f = SafetensorsFile::open(dir.file("m.safetensors"));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  ASSERT_EQ(f.tensors().size(), 4u);
  EXPECT_EQ(f.tensors()[0].name, "alpha.f16");  // sorted
  for (const char* name : {"zeta.f32", "alpha.f16", "mid.bf16"}) {
    SCOPED_TRACE(name);
    Tensor t = f.tensor_f32(*f.find(name));
    ASSERT_EQ(t.numel(), 6);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], 0.5f * static_cast<float>(i) - 1.0f);
  }
  EXPECT_TRUE(f.tensor_f32(*f.find("zeta.f32")).is_view());
  EXPECT_EQ(f.find("zeta.f32")->shape, (Shape{2, 3}));
  EXPECT_EQ(f.tensor(*f.find("ids")).data<int32_t>()[1], -7);
  EXPECT_THROW(f.tensor_f32(*f.find("ids")), InputError);
  // Deterministic bytes, header padded to 8.
  write_safetensors(dir.file("n.safetensors"), sample(), {{"format", "pt"}});
  EXPECT_EQ(testing::read_bytes(dir.file("m.safetensors")), testing::read_bytes(dir.file("n.safetensors")));
  uint64_t n = 0;
  std::memcpy(&n, testing::read_bytes(dir.file("m.safetensors")).data(), 8);
  EXPECT_EQ(n % 8, 0u);
}

TEST(Safetensors, PythonSafetensorsReadsOurFile) {
  testing::TempDir dir;
  write_safetensors(dir.file("m.safetensors"), sample());
  auto r = testing::run_process(
      {"python3", "-c",
       "import sys\nfrom safetensors import safe_open\n"
       "with safe_open(sys.argv[1], framework='numpy') as f:\n"
       "    out = []\n"
       "    for k in sorted(f.keys()):\n"
       "        if k == 'mid.bf16':\n"
       "            continue  # numpy has no bfloat16; the header entry was still validated by safe_open\n"
       "        v = f.get_tensor(k)\n"
       "        out.append(f'{k}:{v.dtype}:{list(v.shape)}:{float(v.astype(\"float64\").sum())}')\n"
       "    print(' '.join(out))",
       dir.file("m.safetensors")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("zeta.f32:float32:[2, 3]:1.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ids:int32:[2]:0.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alpha.f16:float16:[3, 2]:1.5"), std::string::npos) << r.out;
}

TEST(Safetensors, InvalidHeadersAreInputErrors) {
  const std::string ok_entry = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NO_THROW(SafetensorsFile::parse(file_with_header(ok_entry, 8), "ok.safetensors"));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"not json", "{\"t\":"},
      {"array", "[]"},
      {"dtype", R"({"t":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})"},
      {"shape", R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})"},
      {"size mismatch", R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})"},
      {"out of range", R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})"},
      {"reversed", R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})"},
      {"overlap", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})"},
      {"offsets type", R"({"t":{"dtype":"F32","shape":[2],"data_offsets":"0,8"}})"},
      {"metadata", R"({"__metadata__":{"a":1}})"},
      {"nesting", std::string(1000, '[') + std::string(1000, ']')},
  };
  for (const auto& [what, header] : bad) {
    SCOPED_TRACE(what);
    try {
      SafetensorsFile::parse(file_with_header(header, 8), "bad.safetensors");
      ADD_FAILURE() << "parsed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.safetensors"), std::string::npos) << e.what();
    }
  }
  // Header length beyond the file or the limit.
  auto b = file_with_header(ok_entry, 8);
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(b.data(), &huge, 8);
  EXPECT_THROW(SafetensorsFile::parse(b, "x"), InputError);
  EXPECT_THROW(SafetensorsFile::parse(std::vector<uint8_t>(5), "x"), InputError);
}

TEST(Safetensors, EveryTruncationIsAnInputError) {
  testing::TempDir dir;
  write_safetensors(dir.file("m.safetensors"), sample());
  auto bytes = testing::read_bytes(dir.file("m.safetensors"));
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(SafetensorsFile::parse(std::span<const uint8_t>(bytes.data(), n), "cut"), InputError) << n;
}

TEST(Safetensors, ShardedCheckpointRoundTrip) {
  testing::TempDir dir;
  write_safetensors_checkpoint(dir.path(), sample(), 16);  // forces several shards
  EXPECT_TRUE(std::filesystem::exists(dir.file("model.safetensors.index.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("model.safetensors")));
  SafetensorsCheckpoint c = SafetensorsCheckpoint::open(dir.path());
  EXPECT_GT(c.files().size(), 1u);
  EXPECT_EQ(c.names().size(), 4u);
  auto loc = c.find("mid.bf16");
  ASSERT_NE(loc.file, nullptr);
  EXPECT_EQ(loc.file->tensor_f32(*loc.entry).data<float>()[5], 1.5f);
  EXPECT_EQ(c.find("nope").file, nullptr);

  testing::TempDir single;
  write_safetensors_checkpoint(single.path(), sample(), uint64_t{1} << 30);
  EXPECT_TRUE(std::filesystem::exists(single.file("model.safetensors")));
  EXPECT_EQ(SafetensorsCheckpoint::open(single.path()).names().size(), 4u);
}

TEST(Safetensors, BrokenIndexIsAnInputError) {
  testing::TempDir dir;
  write_safetensors_checkpoint(dir.path(), sample(), 16);
  std::ofstream(dir.file("model.safetensors.index.json")) << R"({"weight_map":{"ghost":"model-00001-of-00004.safetensors"}})";
  try {
    SafetensorsCheckpoint::open(dir.path());
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ghost"), std::string::npos) << e.what();
  }
  std::ofstream(dir.file("model.safetensors.index.json")) << R"({"weight_map":{"a":"../etc/passwd"}})";
  EXPECT_THROW(SafetensorsCheckpoint::open(dir.path()), InputError);
  testing::TempDir empty;
  EXPECT_THROW(SafetensorsCheckpoint::open(empty.path()), InputError);
}

}  // namespace
}  // namespace genai
