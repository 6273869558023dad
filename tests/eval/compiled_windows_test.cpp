// The pipeline's post-quantization check runs the deployed program's shape: a window longer than
// the prefill AR goes through consecutive prefill calls over the quantized KV cache, as the device
// runs a long prompt. It must give the QDQ reference's figures (full-autoregressive windows).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "eval/compiled_evaluation.h"
#include "eval/quant_evaluation.h"
#include "model/model.h"
#include "model/synth.h"
#include "quant/quantize.h"
#include "support/cli_runner.h"
#include "support/process_checks.h"

namespace genai {
namespace {

// The tiny synthetic model and its 16a8w hybrid graphs of prefill AR 8.
struct TinyQuantized {
  testing::TempDir dir;
  std::shared_ptr<const Model> model;
  quant::QuantizedModel q;
  explicit TinyQuantized(int64_t context) {
    SynthRequest req;
    req.out = dir.file("tiny.gguf");
    model = std::make_shared<const Model>(load_model(write_synth_model(req).checkpoint));
    quant::QuantizeOptions qo;
    qo.mode = graph::ModelMode::kHybrid;
    qo.max_context_len = context;
    qo.prefill_ar_len = 8;
    qo.recipe = quant::recipe_from_spelling("16a8w");
    qo.calibration.context_len = context / 2;
    q = quant::quantize_model(model, qo);
  }
};

TEST(CompiledWindows, ChunkedPrefillGivesTheReferenceFigures) {
  const TinyQuantized tiny(64);  // a window of 24 tokens is 3 prefill calls
  const auto& model = tiny.model;
  const quant::QuantizedModel& q = tiny.q;

  EvalOptions eo;
  eo.max_context_len = 24;
  eo.max_tokens = 96;
  eo.prompt_eval = false;
  eo.tensor_tokens = 0;
  const EvalReport reference = evaluate_quantization(model, q.encodings.at("kv_forward"), eo);
  eval::CompiledWindows program(*model, q.bundles);
  eo.quantized_window = program.window_logits();
  const EvalReport compiled = evaluate_quantization(model, q.encodings.at("kv_forward"), eo);

  EXPECT_EQ(compiled.eval_tokens, 4 * 23);
  EXPECT_EQ(compiled.eval_tokens, reference.eval_tokens);
  EXPECT_DOUBLE_EQ(compiled.perplexity_float, reference.perplexity_float);
  EXPECT_DOUBLE_EQ(compiled.perplexity_quantized, reference.perplexity_quantized);
  EXPECT_DOUBLE_EQ(compiled.sqnr_db, reference.sqnr_db);
  EXPECT_EQ(compiled.top1_agreed, reference.top1_agreed);
  EXPECT_GT(compiled.sqnr_db, 10.0);
}

// A directory left by a killed evaluation (its process is gone) is removed by the next one; a live
// process's, and anything else in the temporary directory, stay.
TEST(CompiledWindows, DirectoriesOfGoneProcessesAreRemoved) {
  testing::TempDir tmp;
  const TinyQuantized tiny(32);

  const pid_t child = genai::testing::pid_of_a_gone_process();
  const std::filesystem::path t(tmp.path());
  const auto gone = t / fmt::format("genai-eval-{}-0123456789abcdef", child);
  const auto live = t / fmt::format("genai-eval-{}-fedcba9876543210", getpid());
  const auto other = t / "genai-eval-notapid";
  for (const auto& d : {gone, live, other}) {
    std::filesystem::create_directories(d);
    std::ofstream(d / "text_decoder.pte") << "x";
  }
  std::filesystem::path made;
  {
    const genai::testing::ScopedTmpdir scoped(tmp.path());
    eval::CompiledWindows program(*tiny.model, tiny.q.bundles);
    for (const auto& e : std::filesystem::directory_iterator(t))
      if (e.path() != live && e.path() != other && e.path() != gone) made = e.path();
  }
  EXPECT_FALSE(std::filesystem::exists(gone));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_FALSE(made.empty());                       // its own, named after this process
  EXPECT_NE(made.filename().string().find(fmt::format("genai-eval-{}-", getpid())), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(made));      // removed when the evaluation ends
}

}  // namespace
}  // namespace genai
