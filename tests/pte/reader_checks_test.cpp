// Each check the reader makes, triggered by a file that passes the flatbuffers Verifier but is
// wrong in one specific way (edited through the generated object API), or by a damaged header.
// Every failure is an InputError naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "core/error.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "pte/sample_programs.h"
#include "schema/program_generated.h"

namespace genai::pte {
namespace {

namespace fb = executorch_flatbuffer;

struct Sample {
  std::vector<uint8_t> bytes;
  ProgramLayout layout;
};

const Sample& sample() {
  static const Sample s = [] {
    Sample out;
    out.bytes = serialize_program(testing::sample_program(), {}, &out.layout);
    return out;
  }();
  return s;
}

void put_le(std::vector<uint8_t>& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

// Re-encodes an edited program and re-attaches the sample's segment data behind a fresh header.
std::vector<uint8_t> edited(const std::function<void(fb::ProgramT&)>& edit) {
  const Sample& s = sample();
  std::unique_ptr<fb::ProgramT> p(fb::GetProgram(s.bytes.data())->UnPack());
  edit(*p);
  flatbuffers::FlatBufferBuilder b;
  fb::FinishProgramBuffer(b, fb::Program::Pack(b, p.get()));
  std::vector<uint8_t> body(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  const uint64_t base = s.layout.header->segment_base_offset;
  const uint64_t data_size = s.layout.header->segment_data_size;
  std::vector<uint8_t> out(8 + 32);
  std::memcpy(out.data(), body.data(), 8);
  uint32_t root = 0;
  std::memcpy(&root, body.data(), 4);
  put_le(out, 0, root + 32, 4);
  std::memcpy(out.data() + 8, "eh00", 4);
  put_le(out, 12, 32, 4);
  out.insert(out.end(), body.begin() + 8, body.end());
  const uint64_t program_size = out.size();
  const uint64_t new_base = (program_size + 127) / 128 * 128;
  put_le(out, 16, program_size, 8);
  put_le(out, 24, new_base, 8);
  put_le(out, 32, data_size, 8);
  std::vector<uint8_t> file(new_base + data_size, 0);
  std::memcpy(file.data(), out.data(), out.size());
  std::memcpy(file.data() + new_base, s.bytes.data() + base, data_size);
  return file;
}

std::string read_error(const std::vector<uint8_t>& bytes) {
  try {
    read_program_bytes(bytes, "case.pte");
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

#define EXPECT_READ_ERROR(bytes, fragment)                                   \
  do {                                                                       \
    const std::string msg = read_error(bytes);                               \
    EXPECT_EQ(msg.rfind("case.pte: ", 0), 0u) << msg;                        \
    EXPECT_NE(msg.find(fragment), std::string::npos) << "message: " << msg; \
  } while (0)

fb::ExecutionPlanT& forward(fb::ProgramT& p) { return *p.execution_plan[0]; }
fb::TensorT& tensor(fb::ProgramT& p, size_t method, size_t value) {
  return *p.execution_plan[method]->values[value]->val.AsTensor();
}
fb::KernelCallT& kernel(fb::ProgramT& p, size_t i) {
  return *forward(p).chains[0]->instructions[i]->instr_args.AsKernelCall();
}

TEST(PteReaderChecks, EditingHarnessKeepsValidFilesValid) {
  const auto same = edited([](fb::ProgramT&) {});
  EXPECT_TRUE(read_program_bytes(same, "same").program == testing::sample_program());
}

TEST(PteReaderChecks, InstructionIndices) {
  EXPECT_READ_ERROR(edited([](auto& p) { kernel(p, 0).op_index = 5; }), "operator 5");
  EXPECT_READ_ERROR(edited([](auto& p) { kernel(p, 0).op_index = -1; }), "operator -1");
  EXPECT_READ_ERROR(edited([](auto& p) { kernel(p, 1).args[2] = 99; }), "value 99");
  EXPECT_READ_ERROR(edited([](auto& p) {
                      p.execution_plan[1]->chains[0]->instructions[0]->instr_args.AsDelegateCall()->delegate_index = 3;
                    }),
                    "delegate 3");
  EXPECT_READ_ERROR(edited([](auto& p) {
                      forward(p).chains[0]->instructions[2]->instr_args.AsJumpFalseCall()->destination_instruction = 6;
                    }),
                    "jump destination 6");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).chains[0]->instructions[3]->instr_args.AsMoveCall()->move_to = 18; }),
                    "move 3 -> 18");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).chains[0]->instructions[4]->instr_args.AsFreeCall()->value_index = -2; }),
                    "free of value -2");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).chains[0]->instructions[0]->instr_args.Reset(); }),
                    "has no arguments");
}

TEST(PteReaderChecks, ValueIndices) {
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).inputs = {18}; }), "inputs refer to value 18");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).outputs = {-1}; }), "outputs refer to value -1");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).values[11]->val.AsTensorList()->items = {1, 40}; }),
                    "tensor list items refer to value 40");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).values[12]->val.AsOptionalTensorList()->items = {-2}; }),
                    "optional tensor list refers to value -2");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).values[5]->val.Reset(); }), "value 5");
}

TEST(PteReaderChecks, TensorChecks) {
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 0).scalar_type = static_cast<fb::ScalarType>(9); }),
                    "unknown scalar type 9");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 0).storage_offset = 4; }), "storage_offset 4");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 0).sizes = {2, -2}; }), "negative");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 0).dim_order = {0}; }), "dim_order has 1 entries");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 0).dim_order = {1, 1}; }), "not a permutation");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 0).shape_dynamism = static_cast<fb::TensorShapeDynamism>(7); }),
                    "shape_dynamism 7");
  // Constant data: index and size against the constant segment.
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 1).data_buffer_idx = 9; }), "data_buffer_idx 9 out of range");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 1).sizes = {64, 64}; }), "needs 16384 bytes");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 1).sizes = {1 << 30, 1 << 30}; }), "needs");
  EXPECT_READ_ERROR(edited([](auto& p) { p.constant_segment->offsets[2] = 1 << 20; }),
                    "constant_segment offset 2 is 1048576");
  EXPECT_READ_ERROR(edited([](auto& p) { p.constant_segment->segment_index = 17; }), "names segment 17");
  // Memory planning.
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 3).allocation_info->memory_id = 0; }), "memory_id 0 out of range");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 3).allocation_info->memory_id = 2; }), "memory_id 2 out of range");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 3).allocation_info->memory_offset_low = 60; }),
                    "overruns buffer 1 of 64 bytes");
  EXPECT_READ_ERROR(edited([](auto& p) { tensor(p, 0, 3).allocation_info->memory_offset_high = 1; }), "overruns");
  EXPECT_READ_ERROR(edited([](auto& p) { forward(p).non_const_buffer_sizes = {0, -64}; }), "negative");
  // Mutable state.
  EXPECT_READ_ERROR(edited([](auto& p) { p.mutable_data_segments.clear(); }), "mutable data segment 0 out of range");
  EXPECT_READ_ERROR(edited([](auto& p) { p.mutable_data_segments[0]->offsets[1] = 12; }), "needs 16 bytes at offset 12");
}

TEST(PteReaderChecks, DelegatesAndSegments) {
  EXPECT_READ_ERROR(edited([](auto& p) { p.execution_plan[1]->delegates[0]->processed->index = 40; }), "names segment 40");
  EXPECT_READ_ERROR(edited([](auto& p) {
                      p.execution_plan[1]->delegates[0]->processed->location = fb::DataLocation::INLINE;
                    }),
                    "inline payload 2");
  EXPECT_READ_ERROR(edited([](auto& p) {
                      p.execution_plan[1]->delegates[0]->processed->location = static_cast<fb::DataLocation>(5);
                    }),
                    "unknown payload location 5");
  EXPECT_READ_ERROR(edited([](auto& p) { p.execution_plan[1]->delegates[0]->processed.reset(); }),
                    "no processed payload");
  EXPECT_READ_ERROR(edited([](auto& p) { p.segments[2]->size = 1 << 30; }), "segment 2");
  EXPECT_READ_ERROR(edited([](auto& p) { p.segments[5]->offset = ~uint64_t{0}; }), "segment 5");
  EXPECT_READ_ERROR(edited([](auto& p) { p.named_data[1]->segment_index = 6; }), "names segment 6");
  EXPECT_READ_ERROR(edited([](auto& p) { p.named_data[1]->key = p.named_data[0]->key; }), "two named data entries");
  EXPECT_READ_ERROR(edited([](auto& p) { p.execution_plan[2]->name = "kv_forward"; }), "two methods are named");
}

TEST(PteReaderChecks, LegacyConstantBuffer) {
  const auto legacy = [](auto& p) {
    p.constant_segment->offsets.clear();
    p.constant_buffer.clear();
    p.constant_buffer.push_back(std::make_unique<fb::BufferT>());
    auto b = std::make_unique<fb::BufferT>();
    b->storage.assign(16, 7);
    p.constant_buffer.push_back(std::move(b));
  };
  // Values 2 and 15 use entries 2 and 3, which do not exist in the edited buffer list.
  EXPECT_READ_ERROR(edited(legacy), "data_buffer_idx 2 out of range (2 constant buffers)");
  EXPECT_READ_ERROR(edited([&](auto& p) {
                      legacy(p);
                      tensor(p, 0, 2).data_buffer_idx = 1;
                      tensor(p, 0, 15).data_buffer_idx = 1;
                      tensor(p, 0, 15).sizes = {5, 2};
                    }),
                    "needs 20 bytes, its constant buffer has 16");
  const auto ok = edited([&](auto& p) {
    legacy(p);
    tensor(p, 0, 2).data_buffer_idx = 1;
    tensor(p, 0, 15).data_buffer_idx = 1;
  });
  const auto prog = read_program_bytes(ok, "legacy").program;
  const auto& bias = std::get<TensorValue>(prog.methods[0].values[2]);
  EXPECT_EQ(bias.data->size(), 3u);
  EXPECT_EQ(bias.data->bytes()[0], 7);
}

TEST(PteReaderChecks, HeaderAndIdentifier) {
  const Sample& s = sample();
  EXPECT_READ_ERROR(std::vector<uint8_t>(s.bytes.begin(), s.bytes.begin() + 5), "5 bytes is too small");
  auto b = s.bytes;
  std::memcpy(b.data() + 4, "ET11", 4);
  EXPECT_READ_ERROR(b, "file identifier is \"ET11\", expected \"ET12\"");
  b = s.bytes;
  put_le(b, 12, 16, 4);
  EXPECT_READ_ERROR(b, "extended header length 16");
  EXPECT_READ_ERROR(std::vector<uint8_t>(s.bytes.begin(), s.bytes.begin() + 30), "ends inside the extended header");
  b = s.bytes;
  put_le(b, 16, s.bytes.size() + 1, 8);
  EXPECT_READ_ERROR(b, "program_size");
  b = s.bytes;
  put_le(b, 16, 20, 8);
  EXPECT_READ_ERROR(b, "program_size 20");
  b = s.bytes;
  put_le(b, 24, 64, 8);
  EXPECT_READ_ERROR(b, "segment_base_offset 64");
  b = s.bytes;
  put_le(b, 32, s.bytes.size(), 8);
  EXPECT_READ_ERROR(b, "truncated");
  // Truncated by one byte: the header's segment data no longer fits.
  EXPECT_READ_ERROR(std::vector<uint8_t>(s.bytes.begin(), s.bytes.end() - 1), "truncated");
  // Header removed (magic wiped): the flatbuffer then spans the whole file, the root offset is
  // off by the header size, and the segments have nowhere to live.
  b = s.bytes;
  std::memcpy(b.data() + 8, "xx00", 4);
  const std::string msg = read_error(b);
  EXPECT_EQ(msg.rfind("case.pte: ", 0), 0u) << msg;
  // A damaged flatbuffer body.
  b = s.bytes;
  put_le(b, 0, 0xfffffff0u, 4);
  EXPECT_READ_ERROR(b, "failed verification");
}

TEST(PteReaderChecks, SegmentDataWithoutHeader) {
  Program p;
  p.methods.push_back(make_constant_method("get_bos_id", Int{1}));
  auto bytes = serialize_program(p);  // plain flatbuffer: segment 0 is empty
  const std::unique_ptr<fb::ProgramT> t(fb::GetProgram(bytes.data())->UnPack());
  t->segments[0]->size = 8;
  flatbuffers::FlatBufferBuilder b;
  fb::FinishProgramBuffer(b, fb::Program::Pack(b, t.get()));
  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  EXPECT_READ_ERROR(out, "no extended header");
}

TEST(PteReaderChecks, MissingFileIsInputError) {
  EXPECT_THROW(read_program("/nonexistent/x.pte"), InputError);
}

TEST(PteReaderChecks, MisalignedBufferIsReadFromAnAlignedCopy) {
  const Sample& s = sample();
  std::vector<uint8_t> shifted(s.bytes.size() + 1);
  std::memcpy(shifted.data() + 1, s.bytes.data(), s.bytes.size());
  const auto p = read_program_bytes(std::span(shifted).subspan(1), "shifted");
  EXPECT_TRUE(p.program == testing::sample_program());
}

}  // namespace
}  // namespace genai::pte
