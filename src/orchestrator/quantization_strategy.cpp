// quantization: the prepared calibration windows through quant::quantize_model (recipe from
// --quant_recipe or the model's own), the decode graph's QDQ file into the artifact dir (as
// upstream saves decode_qdq.pt2), and what the recipe costs: logits SQNR and perplexity of the
// QDQ decode graph against the float one over a short text.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/quantization_evaluation.h"
#include "quant/quantize.h"

namespace genai::orchestrator {
namespace {

using namespace genai::pipeline;

// Tokens of the SQNR evaluation: enough for a stable figure, few enough to keep the stage short.
constexpr int64_t kEvalContext = 96;

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error("--eval_text: cannot open {}", path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(v > 0 ? 999.0 : -999.0); }

class Quantization final : public QuantizationStrategy {
 public:
  QuantizationOutputConfig invoke(const PipelineContext& context, const QuantizationInputConfig& in,
                                  StageNotes& notes) override {
    in.check_ready();
    const options::OptionValues& o = in.extra_options;
    const Model& model = *in.model;
    quant::QuantizeOptions qo;
    const graph::DecoderGraphOptions go = decoder_graph_options(o);
    qo.mode = go.mode;
    qo.max_context_len = go.max_context_len;
    qo.prefill_ar_len = go.prefill_ar_len;
    if (in.quant_recipe) {
      qo.recipe = quant::recipe_from_choice(*in.quant_recipe);
    } else {
      qo.recipe = default_recipe_for(model, o.get_optional_string("decoder_model").value_or(""));
    }
    if (qo.recipe.is_float())
      throw_input_error("--quant_recipe fp16 is a float program: it skips quantization (use --use_fp16)");
    qo.calibration = calibration_options(o);
    qo.windows = *in.calibration_data;
    const quant::QuantizedModel q = quant::quantize_model(in.model, qo);
    log::info("quantized with {} ({} calibration windows) in {:.1f}s", q.recipe.name, qo.windows.size(),
              q.calibration_seconds);

    // The QDQ file is for evaluation (`genai eval --qdq`); a run that only builds programs
    // (--compile_only, `genai compile`) leaves exactly what a device needs in the artifact dir.
    if (!o.get_flag("compile_only")) {
      const std::filesystem::path dir = context.artifact_dir();
      std::filesystem::create_directories(dir);
      notes["decode_qdq"] = quant::write_decode_qdq(q, dir).string();
    }

    notes["recipe"] = q.recipe.name;
    notes["graphs"] = nlohmann::json::array();
    for (const auto& [name, bundle] : q.bundles) notes["graphs"].push_back(std::string(graph_name_str(name)));
    notes["calibration_seconds"] = q.calibration_seconds;

    quant::EvalOptions eo;
    eo.max_context_len = std::min<int64_t>(qo.max_context_len, kEvalContext);
    eo.prompt_eval = false;
    if (o.has_value("eval_text")) eo.text = read_text_file(o.get_string("eval_text"));
    const quant::EvalReport r = evaluate_encodings(in.model, q.encodings.at(std::string(graph::kKvForward)), eo);
    nlohmann::json eval = {{"recipe", r.recipe},
                           {"eval_tokens", r.eval_tokens},
                           {"sqnr_db", finite(r.sqnr_db)},
                           {"perplexity_float", r.perplexity_float},
                           {"perplexity_quantized", r.perplexity_quantized},
                           {"top1_agreed", r.top1_agreed},
                           {"seconds", r.seconds}};
    if (!r.per_layer.empty()) eval["worst_tensor"] = {{"name", r.per_layer.front().name}, {"sqnr_db", finite(r.per_layer.front().sqnr_db)}};
    notes["eval"] = std::move(eval);
    notes["summary"] = fmt::format("recipe {}, {} calibration window(s); SQNR {:.1f} dB", q.recipe.name,
                                   qo.windows.size(), r.sqnr_db);

    QuantizationOutputConfig out;
    out.bundles = q.bundles;
    return out;
  }
};

}  // namespace

std::unique_ptr<QuantizationStrategy> make_quantization_strategy() { return std::make_unique<Quantization>(); }

}  // namespace genai::orchestrator
