// The decoder scheduler over programs whose delegate runs the QDQ reference on the integer
// codes a compiled program exchanges: its logits must equal the scheduler over the same QDQ
// executor (float I/O) bit for bit, at every position, in kv and hybrid mode, with uint16 and
// uint8 KV caches and with fp16 (float I/O) programs; bad programs are InputErrors.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "core/sampler.h"
#include "graph/random_model.h"
#include "llm/compiled_session.h"
#include "llm/graph_decoder.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "support/cli_runner.h"
#include "test_backends.h"

namespace genai {
namespace {

using namespace runtime_testing;
using graph::ModelMode;

struct Case {
  std::string recipe;
  ModelMode mode;
  bool kv16 = false;  // the KV cache 16-bit instead of the recipe's
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.recipe << (c.kv16 ? " kv16 " : " ") << graph::model_mode_name(c.mode);
}

std::shared_ptr<QdqTestModel> quantized(std::shared_ptr<const Model> model, const Case& c, int64_t context, int64_t ar) {
  quant::QuantizeOptions o;
  o.mode = c.mode;
  o.max_context_len = context;
  o.prefill_ar_len = ar;
  o.recipe = quant::recipe_from_spelling(c.recipe);
  if (c.kv16) o.recipe.kv = quant::QDType::kU16;
  o.calibration.context_len = context;
  o.calibration.max_windows = 2;
  auto m = std::make_shared<QdqTestModel>();
  m->q = quant::quantize_model(model, o);
  m->exec = std::make_unique<quant::QdqExecutor>(m->q.graphs, m->q.encodings);
  return m;
}

class CompiledSessionParity : public ::testing::TestWithParam<Case> {};

TEST_P(CompiledSessionParity, LogitsEqualTheQdqReferenceAtEveryPosition) {
  register_test_backends();
  const Case c = GetParam();
  const int64_t context = 40, ar = 8;
  const auto model = graph_testing::random_model();
  const auto qm = quantized(model, c, context, ar);
  testing::TempDir dir;
  const std::string path = dir.file("text_decoder.pte");
  const std::string key = c.recipe + (c.kv16 ? "kv16" : "") + std::string(graph::model_mode_name(c.mode));
  write_qdq_program(path, key, qm, context);

  DecoderScheduler compiled(std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(path)));
  DecoderScheduler reference(
      std::make_unique<GraphMethodRunner>(std::make_unique<quant::QdqExecutor>(qm->q.graphs, qm->q.encodings)));
  EXPECT_EQ(compiled.max_context(), context);
  EXPECT_EQ(compiled.vocab_size(), model->config.vocab_size);
  EXPECT_EQ(compiled.prefill_ar_len(), c.mode == ModelMode::kHybrid ? ar : 0);
  EXPECT_EQ(compiled.kv_dtype(), c.recipe == "fp16" ? DType::kF32 : c.kv16 || c.recipe == "16a16w" ? DType::kU16 : DType::kU8);

  // Prompts shorter than, equal to and longer than AR-N, then greedy decoding to the full context.
  for (int64_t n : {3, 8, 19}) {
    compiled.reset();
    reference.reset();
    const auto prompt = graph_testing::random_tokens(n, model->config.vocab_size, static_cast<uint32_t>(n));
    const auto got = compiled.forward_all(prompt);
    const auto want = reference.forward_all(prompt);
    ASSERT_EQ(got, want) << "prompt of " << n;
    std::vector<float> last(want.end() - model->config.vocab_size, want.end());
    while (compiled.position() < context) {
      const int32_t next = argmax(last);
      const auto a = compiled.forward(std::span(&next, 1));
      const auto b = reference.forward(std::span(&next, 1));
      ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "position " << compiled.position();
      last.assign(b.begin(), b.end());
    }
    EXPECT_THROW(compiled.forward(std::span(&prompt[0], 1)), InputError);  // the context is full
  }
  if (c.mode == ModelMode::kHybrid) {
    EXPECT_GT(compiled.prefill_calls(), 0);
  }
  EXPECT_GT(compiled.kv_calls(), 0);
}

// Upstream's programs call their delegate with the tensors in the QNN graph's order, which is not
// the method's signature order. A program whose methods list their inputs and outputs in another
// order than their delegate call gives the same logits: each buffer reaches the delegate argument
// it belongs to.
TEST(CompiledSession, AMethodOrderOtherThanTheDelegateCallsGivesTheSameLogits) {
  register_test_backends();
  const int64_t context = 40;
  const auto model = graph_testing::random_model();
  const auto qm = quantized(model, Case{"16a8w", ModelMode::kHybrid}, context, 8);
  testing::TempDir dir;
  write_qdq_program(dir.file("same.pte"), "order", qm, context);
  pte::Program p = pte::read_program(dir.file("same.pte")).program;
  size_t reordered = 0;
  for (auto& m : p.methods) {
    if (pte::method_kind(m) != pte::MethodKind::kDelegated) continue;
    std::reverse(m.inputs.begin(), m.inputs.end());
    std::reverse(m.outputs.begin(), m.outputs.end());
    m.chains[0].inputs = m.inputs;
    m.chains[0].outputs = m.outputs;
    ++reordered;
  }
  ASSERT_EQ(reordered, 2u);  // kv_forward and prefill_forward
  pte::write_program(dir.file("reordered.pte"), p);
  auto reordered_program = runtime::ProgramInstance::load(dir.file("reordered.pte"));
  // The method's own order: its first input is what the delegate takes last.
  const auto call_order = runtime::ProgramInstance::load(dir.file("same.pte"));
  EXPECT_EQ(reordered_program->inputs("kv_forward").front().name, call_order->inputs("kv_forward").back().name);
  DecoderScheduler a(std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(dir.file("same.pte"))));
  DecoderScheduler b(std::make_unique<ProgramMethodRunner>(std::move(reordered_program)));
  const auto prompt = graph_testing::random_tokens(19, model->config.vocab_size, 5);
  ASSERT_EQ(a.forward_all(prompt), b.forward_all(prompt));
  const int32_t next = 7;
  const auto x = a.forward(std::span(&next, 1));
  const auto y = b.forward(std::span(&next, 1));
  EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end()));
}

INSTANTIATE_TEST_SUITE_P(Recipes, CompiledSessionParity,
                         ::testing::Values(Case{"16a16w", ModelMode::kHybrid}, Case{"16a8w", ModelMode::kKv, /*kv16=*/true},
                                           Case{"16a4w", ModelMode::kHybrid},
                                           Case{"fp16", ModelMode::kHybrid}),
                         [](const auto& info) {
                           return info.param.recipe + (info.param.kv16 ? "_kv16_" : "_") +
                                  std::string(graph::model_mode_name(info.param.mode));
                         });

// A program written with one constant changed or removed.
std::string program_with(const testing::TempDir& dir, const std::shared_ptr<QdqTestModel>& qm, const std::string& name,
                         std::optional<pte::Value> value) {
  const std::string base = dir.file("base.pte");
  write_qdq_program(base, "consts", qm, 24);
  pte::Program p = pte::read_program(base).program;
  std::erase_if(p.methods, [&](const pte::Method& m) { return m.name == name; });
  if (value) p.methods.push_back(pte::make_constant_method(name, *value));
  const std::string path = dir.file(name + ".pte");
  pte::write_program(path, p);
  return path;
}

TEST(CompiledSession, ConstantsMustAgreeWithTheSignatures) {
  register_test_backends();
  const auto model = graph_testing::random_model();
  const auto qm = quantized(model, {"16a8w", ModelMode::kHybrid}, 24, 8);
  testing::TempDir dir;
  auto expect_error = [&](const std::string& path, const std::string& words) {
    try {
      DecoderScheduler s(std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(path)));
      ADD_FAILURE() << "accepted " << path;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error(program_with(dir, qm, "get_vocab_size", pte::Int{84}), "constant get_vocab_size is 84");
  expect_error(program_with(dir, qm, "get_max_context_len", pte::Int{32}), "get_max_context_len is 32");
  expect_error(program_with(dir, qm, "get_kv_io_bit_width", pte::Int{16}), "get_kv_io_bit_width is 16");
  expect_error(program_with(dir, qm, "get_logits_scale", std::nullopt), "get_logits_scale");
  expect_error(program_with(dir, qm, "get_logits_scale", pte::Double{-1.0}), "must be positive");
  // Without the optional constants the signatures alone define the layout.
  std::string path = program_with(dir, qm, "get_n_layers", std::nullopt);
  DecoderScheduler s(std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(path)));
  EXPECT_EQ(s.max_context(), 24);
}

TEST(CompiledSession, MakeCompiledSessionNeedsATextDecoder) {
  runtime::ArtifactDir dir;
  dir.dir = "/nonexistent";
  EXPECT_THROW(make_compiled_session(dir), InputError);
}

TEST(CompiledSession, OutOfVocabularyTokensAreInputErrors) {
  register_test_backends();
  const auto model = graph_testing::random_model();
  const auto qm = quantized(model, {"16a8w", ModelMode::kKv}, 24, 8);
  testing::TempDir dir;
  write_qdq_program(dir.file("p.pte"), "oov", qm, 24);
  DecoderScheduler s(std::make_unique<ProgramMethodRunner>(runtime::ProgramInstance::load(dir.file("p.pte"))));
  const int32_t bad = static_cast<int32_t>(model->config.vocab_size);
  EXPECT_THROW(s.forward(std::span(&bad, 1)), InputError);
  EXPECT_THROW(s.forward({}), InputError);
  EXPECT_EQ(s.position(), 0);
}

}  // namespace
}  // namespace genai
