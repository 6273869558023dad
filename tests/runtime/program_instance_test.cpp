// ProgramInstance: registry lookup by delegate id, named data, the shared scratch arena,
// signature and buffer checks, constant methods, and malformed files.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "core/error.h"
#include "pte/program_writer.h"
#include "runtime/program_instance.h"
#include "support/cli_runner.h"
#include "test_backends.h"

namespace genai {
namespace {

using runtime::BufferRef;
using runtime::IoDesc;
using runtime::ProgramInstance;
using namespace runtime_testing;

std::vector<uint8_t> floats_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Two methods sharing one named-data blob; "big" asks for a larger planned buffer than its
// delegate's own scratch, "small" for less.
pte::Program add_program(int64_t planned_big = 4096) {
  register_test_backends();
  pte::Program p;
  p.methods.push_back(delegated_method("small", {{"x", DType::kF32, {4}}}, {{"y", DType::kF32, {4}}}, kAddId,
                                       add_payload(4, "c4"), 0));
  p.methods.push_back(delegated_method("big", {{"x", DType::kF32, {8}}}, {{"y", DType::kF32, {8}}}, kAddId,
                                       add_payload(8, "c8"), planned_big));
  p.methods.push_back(pte::make_constant_method("get_max_context_len", pte::Int{64}));
  p.methods.push_back(pte::make_constant_method("get_logits_scale", pte::Double{0.25}));
  p.methods.push_back(pte::make_constant_method("get_use_kv_cache", pte::Bool{true}));
  p.methods.push_back(pte::make_constant_list_method("get_kv_output_0_quant_attr",
                                                     {pte::Double{0.5}, pte::Int{3}, pte::String{"torch.uint8"}}));
  p.named_data.push_back({"c4", pte::Blob(floats_bytes({1, 2, 3, 4}))});
  p.named_data.push_back({"c8", pte::Blob(floats_bytes({10, 20, 30, 40, 50, 60, 70, 80}))});
  return p;
}

TEST(RuntimeRegistry, FindsRegisteredIdsAndKeepsTheFirstOfAnId) {
  register_test_backends();
  const auto* add = runtime::find_backend_executor(kAddId);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->delegate_id(), kAddId);
  // An id no backend registers: other tests of this binary register the real ones (QnnBackend).
  EXPECT_EQ(runtime::find_backend_executor(kUnregisteredId), nullptr);
  runtime::register_backend_executor(std::make_unique<AddExecutor>());  // idempotent by id
  EXPECT_EQ(runtime::find_backend_executor(kAddId), add);
  const auto ids = runtime::backend_executor_ids();
  EXPECT_NE(std::find(ids.begin(), ids.end(), std::string(kAddId)), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), std::string(kQdqId)), ids.end());
}

TEST(RuntimeProgram, ExecutesMethodsWithNamedDataInOneAlignedArena) {
  testing::TempDir dir;
  const std::string path = dir.file("add.pte");
  pte::write_program(path, add_program());
  auto prog = ProgramInstance::load(path);
  EXPECT_GE(prog->load_ms(), 0.0);
  EXPECT_EQ(prog->method_names(), (std::vector<std::string>{"big", "small"}));
  EXPECT_TRUE(prog->has_method("small"));
  EXPECT_FALSE(prog->has_method("get_max_context_len"));  // constant methods are not executable
  // One arena: the largest of every method's planned buffer and delegate scratch.
  EXPECT_EQ(prog->scratch_bytes(), 4096u);
  EXPECT_GT(prog->file_bytes(), 0u);

  std::vector<float> x{1.5f, -2, 0.25f, 8}, y(4);
  const BufferRef in{x.data(), 16}, out{y.data(), 16};
  prog->execute("small", std::span(&in, 1), std::span(&out, 1));
  EXPECT_EQ(y, (std::vector<float>{2.5f, 0, 3.25f, 12}));
  std::vector<float> x8(8, 1.0f), y8(8);
  const BufferRef in8{x8.data(), 32}, out8{y8.data(), 32};
  prog->execute("big", std::span(&in8, 1), std::span(&out8, 1));
  EXPECT_EQ(y8, (std::vector<float>{11, 21, 31, 41, 51, 61, 71, 81}));

  // Wrong buffer sizes or counts never reach the delegate.
  const BufferRef short_in{x.data(), 12};
  try {
    prog->execute("small", std::span(&short_in, 1), std::span(&out, 1));
    FAIL() << "short buffer accepted";
  } catch (const Failure& e) {
    EXPECT_NE(std::string(e.what()).find("(x float32[4]) needs a buffer of 16 bytes, got 12"), std::string::npos) << e.what();
  }
  EXPECT_THROW(prog->execute("small", {}, std::span(&out, 1)), Failure);
  try {
    prog->execute("forward", std::span(&in, 1), std::span(&out, 1));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("(methods: big, small)"), std::string::npos) << e.what();
  }
}

// An executor is told which method it initialises: its name, its I/O as the .pte declares them
// (a tensor's name when the file records one) and the label for messages.
TEST(RuntimeProgram, ExecutorsAreGivenTheMethodTheyInitialise) {
  testing::TempDir dir;
  auto p = add_program();
  auto& x = std::get<pte::TensorValue>(p.methods[1].values.at(static_cast<size_t>(p.methods[1].inputs[0])));
  x.extra = pte::ExtraTensorInfo{};
  x.extra->fully_qualified_name = "big_x";
  const std::string path = dir.file("described.pte");
  pte::write_program(path, p);
  add_executor_inits().clear();
  auto inst = ProgramInstance::load(path);
  ASSERT_EQ(add_executor_inits().size(), 2u);
  const runtime::MethodDesc& small = add_executor_inits()[0];
  const runtime::MethodDesc& big = add_executor_inits()[1];
  EXPECT_EQ(small.name, "small");
  EXPECT_EQ(small.label, path + ": method small");
  ASSERT_EQ(small.inputs.size(), 1u);
  ASSERT_EQ(small.outputs.size(), 1u);
  EXPECT_EQ(small.inputs[0].name, "");
  EXPECT_EQ(small.inputs[0].dtype, DType::kF32);
  EXPECT_EQ(small.inputs[0].shape, (Shape{4}));
  EXPECT_EQ(big.name, "big");
  ASSERT_EQ(big.inputs.size(), 1u);
  EXPECT_EQ(big.inputs[0].name, "big_x");
  EXPECT_EQ(big.outputs.at(0).shape, (Shape{8}));
}

TEST(RuntimeProgram, ScratchIsAtLeastTheDelegatesOwnNeedAndAligned) {
  testing::TempDir dir;
  const std::string path = dir.file("add.pte");
  pte::write_program(path, add_program(/*planned_big=*/0));
  auto prog = ProgramInstance::load(path);
  EXPECT_EQ(prog->scratch_bytes(), 32u);  // the 8-float delegate's own scratch
}

TEST(RuntimeProgram, ReadsConstantMethods) {
  testing::TempDir dir;
  const std::string path = dir.file("add.pte");
  pte::write_program(path, add_program());
  auto prog = ProgramInstance::load(path);
  EXPECT_EQ(prog->constant_int("get_max_context_len"), 64);
  EXPECT_EQ(prog->constant_double("get_max_context_len"), 64.0);
  EXPECT_EQ(prog->constant_double("get_logits_scale"), 0.25);
  EXPECT_EQ(prog->constant_int("get_use_kv_cache"), 1);
  EXPECT_EQ(prog->constant_int("get_n_layers"), std::nullopt);
  EXPECT_THROW(prog->constant_int("get_logits_scale"), InputError);
  const auto list = prog->constant_list("get_kv_output_0_quant_attr");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(std::get<pte::Int>(list[1]).value, 3);
  EXPECT_EQ(prog->constant("get_kv_output_0_quant_attr"), std::nullopt);  // a list, not one value
  EXPECT_TRUE(prog->constant_list("small").empty());
}

TEST(RuntimeProgram, UnknownDelegateIsAnInputErrorNamingItAndTheRegisteredIds) {
  testing::TempDir dir;
  auto p = add_program();
  p.methods[0].delegates[0].id = std::string(kUnregisteredId);
  const std::string path = dir.file("qnn.pte");
  pte::write_program(path, p);
  try {
    ProgramInstance::load(path);
    FAIL() << "loaded a program nobody executes";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(fmt::format("delegate '{}'", kUnregisteredId)), std::string::npos) << msg;
    EXPECT_NE(msg.find("no registered backend handles it (registered: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string(kAddId)), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
}

TEST(RuntimeProgram, PayloadAndSignatureProblemsAreInputErrors) {
  testing::TempDir dir;
  {
    auto p = add_program();
    p.methods[0].delegates[0].processed = pte::Blob(std::vector<uint8_t>{'A', 'D', 'D', '1', 4, 0, 0, 0, 99, 0, 0, 0});
    pte::write_program(dir.file("bad_payload.pte"), p);
    EXPECT_THROW(ProgramInstance::load(dir.file("bad_payload.pte")), InputError);
  }
  {
    auto p = add_program();
    p.named_data.erase(p.named_data.begin());  // the key "c4" is gone
    pte::write_program(dir.file("no_data.pte"), p);
    try {
      ProgramInstance::load(dir.file("no_data.pte"));
      FAIL();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("named data 'c4'"), std::string::npos) << e.what();
    }
  }
  {
    // The method says float32[5] where its delegate reads float32[4].
    auto p = add_program();
    p.methods[0] = delegated_method("small", {{"x", DType::kF32, {5}}}, {{"y", DType::kF32, {4}}}, kAddId,
                                    add_payload(4, "c4"), 0);
    pte::write_program(dir.file("sig.pte"), p);
    try {
      ProgramInstance::load(dir.file("sig.pte"));
      FAIL();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("input 0 is float32[5] in the method but x float32[4] in its delegate"),
                std::string::npos)
          << e.what();
    }
  }
  {
    auto p = add_program(int64_t{1} << 40);  // 1 TiB arena
    pte::write_program(dir.file("huge.pte"), p);
    EXPECT_THROW(ProgramInstance::load(dir.file("huge.pte")), InputError);
  }
}

TEST(RuntimeProgram, TruncatedAndCorruptedFilesAreInputErrors) {
  testing::TempDir dir;
  const std::string path = dir.file("add.pte");
  pte::write_program(path, add_program());
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto write = [&](const std::string& name, const std::vector<char>& b) {
    std::ofstream(dir.file(name), std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
    return dir.file(name);
  };
  for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
    const auto p = write("cut.pte", std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(cut)));
    EXPECT_THROW(ProgramInstance::load(p), InputError) << "cut at " << cut;
  }
  // Damage spread over the file: every outcome is an InputError or a program that still loads.
  for (size_t at = 0; at < bytes.size(); at += 13) {
    auto b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x5a);
    const auto p = write("flip.pte", b);
    try {
      ProgramInstance::load(p);
    } catch (const InputError&) {
    }
  }
  EXPECT_THROW(ProgramInstance::load(dir.file("missing.pte")), InputError);
}

}  // namespace
}  // namespace genai
