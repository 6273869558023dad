// --num_sharding: a decoder cut into layer shards (compile/layer_sharding.h), one delegate each in
// every method, must give the unsharded program's logits bit for bit (the values passed between
// shards are the codes the unsharded program computes at the same place), in our runtime.
#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "backends/register_builtin.h"
#include "compile/compiler.h"
#include "compile/decoder_metadata.h"
#include "core/error.h"
#include "graph/random_model.h"
#include "llm/compiled_session.h"
#include "model/model.h"
#include "model/synth.h"
#include "pte/program_reader.h"
#include "pte/program_writer.h"
#include "quant/quantize.h"
#include "runtime/program_instance.h"
#include "support/cli_runner.h"
#include "support/input_errors.h"
#include "target/compile_spec.h"
#include "target/qnn_spec_builder.h"
#include "target/soc.h"

namespace genai {
namespace {

using genai::testing::input_error_of;

struct ShardCase {
  std::string arch;  // synth architecture ("": the tiny shape's llama)
  int64_t parts = 2;
};

class ShardedProgram : public ::testing::TestWithParam<ShardCase> {};

std::filesystem::path compile(const Model& model, const pipeline::GraphBundles& bundles, int64_t parts,
                              const std::string& dir) {
  backends::register_builtin_backends();
  compile::CompileRequest req;
  req.soc = &target::resolve_soc("SM8650");
  req.backend_type = target::BackendType::kHtpBackend;
  req.graphs = compile::with_decoder_metadata(model.config, bundles);
  req.compile_specs = target::QnnSpecBuilder("SM8650").use_multi_contexts(parts > 1).build();
  req.artifact_dir = dir;
  req.num_sharding = parts;
  return compile::compile_artifacts(req).artifacts.at(pipeline::ArtifactKey::kTextDecoder);
}

struct Quantized {
  std::shared_ptr<const Model> model;
  quant::QuantizedModel q;
};

Quantized quantized_synth(const testing::TempDir& dir, const std::string& arch) {
  SynthRequest sr;
  sr.arch = arch;
  sr.out = dir.file("tiny.gguf");
  Quantized out;
  out.model = std::make_shared<const Model>(load_model(write_synth_model(sr).checkpoint));
  quant::QuantizeOptions qo;
  qo.mode = graph::ModelMode::kHybrid;
  qo.max_context_len = 40;
  qo.prefill_ar_len = 8;
  qo.recipe = quant::recipe_from_spelling("16a8w");
  qo.calibration.context_len = 32;
  out.q = quant::quantize_model(out.model, qo);
  return out;
}

TEST_P(ShardedProgram, GivesTheUnshardedLogitsAndTokens) {
  const ShardCase c = GetParam();
  testing::TempDir dir;
  const auto [model, q] = quantized_synth(dir, c.arch);

  const auto whole = compile(*model, q.bundles, 1, dir.path() + "/whole");
  const auto sharded = compile(*model, q.bundles, c.parts, dir.path() + "/sharded");
  // One delegate per shard in each method, the compile spec saying several contexts.
  const pte::Program p = pte::read_program(sharded).program;
  for (const char* name : {"kv_forward", "prefill_forward"}) {
    ASSERT_NE(p.find_method(name), nullptr) << name;
    const pte::Method& m = *p.find_method(name);
    ASSERT_EQ(m.delegates.size(), static_cast<size_t>(c.parts)) << name;
    ASSERT_EQ(m.chains.at(0).instructions.size(), static_cast<size_t>(c.parts)) << name;
    const auto options = target::options_from_specs(m.delegates.front().compile_specs);
    ASSERT_TRUE(options && options->htp_options);
    EXPECT_TRUE(options->htp_options->use_multi_contexts);
  }

  auto a = make_program_session(runtime::ProgramInstance::load(whole));
  auto b = make_program_session(runtime::ProgramInstance::load(sharded));
  const auto prompt = graph_testing::random_tokens(19, model->config.vocab_size, 7);  // 3 prefill calls
  std::vector<float> la = a->forward_all(prompt), lb = b->forward_all(prompt);
  ASSERT_EQ(la, lb);
  // Greedy decoding to the end of the context, one kv_forward call at a time.
  const int64_t vocab = model->config.vocab_size;
  while (a->position() < a->max_context()) {
    const auto last = la.end() - vocab;
    const int32_t token = static_cast<int32_t>(std::max_element(last, la.end()) - last);
    const auto fa = a->forward({&token, 1});
    const auto fb = b->forward({&token, 1});
    la.assign(fa.begin(), fa.end());
    lb.assign(fb.begin(), fb.end());
    ASSERT_EQ(la, lb) << "at position " << a->position();
  }
}

// The runtime runs a value passed between delegate calls only from its planned place past every
// shard's arena: a program without one is refused by method, with the reason.
TEST(LayerSharding, APassedValueWithoutAPlannedPlaceIsRefused) {
  testing::TempDir dir;
  const auto [model, q] = quantized_synth(dir, "");
  const auto path = compile(*model, q.bundles, 2, dir.path() + "/sharded");
  pte::Program p = pte::read_program(path).program;
  pte::Method* m = nullptr;
  for (pte::Method& each : p.methods)
    if (each.name == "kv_forward") m = &each;
  ASSERT_NE(m, nullptr);
  size_t cleared = 0;
  for (pte::Value& v : m->values)
    if (auto* t = std::get_if<pte::TensorValue>(&v); t && t->allocation) {
      t->allocation.reset();
      ++cleared;
    }
  ASSERT_GT(cleared, 0u);
  const std::string edited = dir.file("edited.pte");
  pte::write_program(edited, p);
  backends::register_builtin_backends();
  const auto inst = runtime::ProgramInstance::load(edited);
  EXPECT_TRUE(inst->has_method("prefill_forward"));
  const std::string e = input_error_of([&] { inst->inputs("kv_forward"); });
  EXPECT_NE(e.find("kv_forward"), std::string::npos) << e;
  EXPECT_NE(e.find("no place in the planned buffer"), std::string::npos) << e;
}

TEST(LayerSharding, ACountBelowOneIsBadInput) {
  const auto r = testing::run_genai({"compile", "--checkpoint", "any.gguf", "--soc_model", "SM8650", "--num_sharding", "0",
                                     "-a", "unused"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--num_sharding 0"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(LayerSharding, ShardedProgram,
                         ::testing::Values(ShardCase{"", 2}, ShardCase{"gemma4", 3}),
                         [](const auto& info) { return (info.param.arch.empty() ? std::string("llama") : info.param.arch) +
                                                       "_" + std::to_string(info.param.parts); });

}  // namespace
}  // namespace genai
