// Programs built through the writer read back equal, field for field, with the layout the writer
// reported; identical payloads are stored once; output is deterministic.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "pte/sample_programs.h"
#include "support/cli_runner.h"

namespace genai::pte {
namespace {

using testing::pattern_bytes;
using testing::sample_program;

uint64_t le64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + static_cast<size_t>(i)];
  return v;
}

TEST(PteRoundTrip, FileReadsBackEqualFieldForField) {
  genai::testing::TempDir dir;
  const Program p = sample_program();
  const ProgramLayout written = write_program(dir.file("p.pte"), p);
  const LoadedProgram back = read_program(dir.file("p.pte"));
  EXPECT_EQ(back.layout, written);
  ASSERT_EQ(back.program.methods.size(), p.methods.size());
  for (size_t i = 0; i < p.methods.size(); ++i) {
    const Method& a = p.methods[i];
    const Method& b = back.program.methods[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.container_meta, b.container_meta) << a.name;
    ASSERT_EQ(a.values.size(), b.values.size()) << a.name;
    for (size_t v = 0; v < a.values.size(); ++v) EXPECT_TRUE(a.values[v] == b.values[v]) << a.name << " value " << v;
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_EQ(a.chains, b.chains) << a.name;
    EXPECT_EQ(a.operators, b.operators);
    EXPECT_EQ(a.delegates, b.delegates) << a.name;
    EXPECT_EQ(a.non_const_buffer_sizes, b.non_const_buffer_sizes);
    EXPECT_EQ(a.buffer_devices, b.buffer_devices);
  }
  EXPECT_EQ(back.program.named_data, p.named_data);
  EXPECT_TRUE(back.program == p);
}

TEST(PteRoundTrip, LayoutFollowsTheFormat) {
  ProgramLayout layout;
  const auto bytes = serialize_program(sample_program(), {}, &layout);
  ASSERT_TRUE(layout.header.has_value());
  const ExtendedHeader& h = *layout.header;
  EXPECT_EQ(layout.file_size, bytes.size());
  EXPECT_EQ(std::memcmp(bytes.data() + 4, "ET12", 4), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + 8, "eh00", 4), 0);
  EXPECT_EQ(le64(bytes, 12) & 0xffffffffu, 32u);
  EXPECT_EQ(le64(bytes, 16), h.program_size);
  EXPECT_EQ(le64(bytes, 24), h.segment_base_offset);
  EXPECT_EQ(le64(bytes, 32), h.segment_data_size);
  EXPECT_EQ(h.segment_base_offset % 128, 0u);
  EXPECT_GE(h.segment_base_offset, h.program_size);
  EXPECT_EQ(h.segment_base_offset + h.segment_data_size, bytes.size());
  // Segments: constant (0), mutable state (1), one payload for both delegated methods (2),
  // named data: shared weights once (3), "other" (4), "empty" (5).
  ASSERT_EQ(layout.segments.size(), 6u);
  EXPECT_EQ(layout.segments[0].offset, 0u);
  EXPECT_EQ(layout.segments[2].size, 3000u);
  EXPECT_EQ(layout.segments[3].size, 1000u);
  EXPECT_EQ(layout.segments[5].size, 0u);
  for (const auto& s : layout.segments) EXPECT_EQ(s.offset % 128, 0u);
  EXPECT_EQ(h.segment_data_size, layout.segments.back().offset + layout.segments.back().size);
  // Constant segment: weight (16 bytes) at 0, bias at 16, bf16 at 32 (16-byte aligned starts).
  EXPECT_EQ(layout.segments[0].size, 32u + 12u);
  // Zero padding between segments.
  const uint64_t base = h.segment_base_offset;
  for (uint64_t i = base + layout.segments[0].size; i < base + layout.segments[1].offset; ++i)
    ASSERT_EQ(bytes[i], 0) << i;
}

TEST(PteRoundTrip, IdenticalPayloadsAndNamedDataAreStoredOnce) {
  const auto bytes = serialize_program(sample_program(50000));
  const LoadedProgram back = read_program_bytes(bytes, "dedup");
  const Delegate& kv = back.program.find_method("kv_forward")->delegates.at(0);
  const Delegate& prefill = back.program.find_method("prefill_forward")->delegates.at(0);
  EXPECT_EQ(kv.processed.data(), prefill.processed.data());  // one copy in the file
  EXPECT_EQ(back.program.find_named_data("shared/weights")->data.data(),
            back.program.find_named_data("shared/weights_alias")->data.data());
  EXPECT_LT(bytes.size(), 2 * 50000u);
  // Different payloads get different segments.
  Program p = sample_program(50000);
  p.methods[2].delegates[0].processed = Blob(pattern_bytes(50000, 8));
  EXPECT_GT(serialize_program(p).size(), 2 * 50000u);
}

TEST(PteRoundTrip, DeterministicBytes) {
  genai::testing::TempDir dir;
  write_program(dir.file("a.pte"), sample_program());
  write_program(dir.file("b.pte"), sample_program());
  auto slurp = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  };
  const auto a = slurp(dir.file("a.pte")), b = slurp(dir.file("b.pte"));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, serialize_program(sample_program()));
  // Re-serialising what was read gives the same bytes again.
  EXPECT_EQ(serialize_program(read_program_bytes(a, "a").program), a);
}

TEST(PteRoundTrip, PlainFlatbufferWithoutSegmentData) {
  Program p;
  p.methods.push_back(make_constant_method("get_vocab_size", Int{49152}));
  ProgramLayout layout;
  const auto bytes = serialize_program(p, {}, &layout);
  EXPECT_FALSE(layout.header.has_value());
  EXPECT_NE(std::memcmp(bytes.data() + 8, "eh00", 4), 0);
  ASSERT_EQ(layout.segments.size(), 1u);  // the (empty) constant segment is always listed
  const LoadedProgram back = read_program_bytes(bytes, "plain");
  EXPECT_TRUE(back.program == p);
  EXPECT_EQ(back.layout, layout);
}

TEST(PteRoundTrip, ConstantMethodsEncodeAsPrimGetters) {
  const Method m = make_constant_list_method("get_eos_ids", {Int{2}, Int{3}});
  EXPECT_EQ(method_kind(m), MethodKind::kConstant);
  EXPECT_TRUE(m.inputs.empty());
  EXPECT_EQ(m.outputs, (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(m.chains.size(), 1u);
  EXPECT_TRUE(m.chains[0].instructions.empty());
  EXPECT_EQ(m.non_const_buffer_sizes, std::vector<int64_t>{0});
  ASSERT_TRUE(m.container_meta.has_value());
  EXPECT_EQ(m.container_meta->encoded_inp_str, "");
  EXPECT_NE(m.container_meta->encoded_out_str.find("builtins.list"), std::string::npos);
  const auto back = read_program_bytes(serialize_program(Program{0, {m}, {}}), "getter");
  EXPECT_TRUE(back.program.methods.at(0) == m);
}

TEST(PteRoundTrip, InlinePayloadsWhenNotExtracted) {
  WriteOptions o;
  o.extract_delegate_segments = false;
  o.segment_alignment = 256;
  ProgramLayout layout;
  const Program p = sample_program();
  const auto bytes = serialize_program(p, o, &layout);
  const LoadedProgram back = read_program_bytes(bytes, "inline");
  EXPECT_TRUE(back.program == p);
  EXPECT_EQ(layout.segments.size(), 5u);  // constant, mutable, 3 named data
  // Inline payload bytes sit inside the flatbuffer, 16-byte aligned (force_align).
  const auto& kv = back.program.find_method("kv_forward")->delegates.at(0).processed;
  EXPECT_LT(static_cast<uint64_t>(kv.data() - bytes.data()), layout.header->program_size);
  EXPECT_EQ(static_cast<uint64_t>(kv.data() - bytes.data()) % 16, 0u);
  for (const auto& s : layout.segments) EXPECT_EQ(s.offset % 256, 0u);
}

TEST(PteRoundTrip, ReaderViewsTheMappedFileWithoutCopies) {
  genai::testing::TempDir dir;
  write_program(dir.file("p.pte"), sample_program());
  Blob payload;
  {
    const LoadedProgram back = read_program(dir.file("p.pte"));
    payload = back.program.find_method("kv_forward")->delegates.at(0).processed;
    const uint8_t* first = back.program.named_data.at(0).data.data();
    EXPECT_EQ(payload.data() + 0, payload.data());
    // Views into one mapping: the named data lies after the payload at the planned distance.
    EXPECT_EQ(static_cast<uint64_t>(first - payload.data()),
              back.layout.segments[3].offset - back.layout.segments[2].offset);
  }
  // The blob keeps the mapping alive after the LoadedProgram is gone.
  EXPECT_EQ(payload, Blob(pattern_bytes(3000, 7)));
}

TEST(PteRoundTrip, WriterRefusesInconsistentPrograms) {
  genai::testing::TempDir dir;
  Program p = sample_program();
  std::get<KernelCall>(p.methods[0].chains[0].instructions[0]).op_index = 7;
  try {
    write_program(dir.file("bad.pte"), p);
    FAIL() << "expected Failure";
  } catch (const Failure& e) {
    EXPECT_NE(std::string(e.what()).find("operator 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.pte"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.pte")));
  WriteOptions o;
  o.segment_alignment = 100;
  EXPECT_THROW(serialize_program(sample_program(), o), Failure);
}

}  // namespace
}  // namespace genai::pte
