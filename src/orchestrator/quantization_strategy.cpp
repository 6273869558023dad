// quantization: the prepared calibration windows through quant::quantize_model (recipe from
// --quant_recipe or the model's own), the decode graph's QDQ file into the artifact dir (as
// upstream saves decode_qdq.pt2), and what the recipe costs: logits SQNR and perplexity of the
// QDQ decode graph against the float one over a short text.
#include <algorithm>
#include <chrono>
#include <optional>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_number.h"
#include "core/log.h"
#include "eval/compiled_evaluation.h"
#include "eval/quant_evaluation.h"
#include "modality/encoder_quantization_step.h"
#include "modality/media_options.h"
#include "modality/modality_registry.h"
#include "orchestrator/builtin_strategies.h"
#include "orchestrator/default_recipe.h"
#include "orchestrator/option_readers.h"
#include "orchestrator/quantization_settings.h"
#include "pipeline/adapter_graphs.h"
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

std::string encoding_text(const quant::Encoding& e) {
  if (e.is_float()) return std::string(quant::qdtype_name(e.dtype));
  return fmt::format("{} scale {:.4g} zp {}", quant::qdtype_name(e.dtype), e.scale, e.zero_point);
}

// What the report shows of a quantization: the decode graph's calibrated ranges and encodings in
// graph order, and the recipe's overrides.
void describe_quantization(const quant::QuantizedModel& q, EvalReport& r) {
  const std::string kv(graph::kKvForward);
  const graph::Graph& g = *q.graphs.at(kv);
  const quant::EncodingSet& set = *q.encodings.at(kv);
  for (const auto& op : g.ops()) {
    const auto& v = g.value(op.result);
    auto range = q.ranges.find(v.name);
    auto enc = set.activations.find(v.name);
    if (range == q.ranges.end() || !range->second.seen || enc == set.activations.end() || quant::is_passthrough(op.kind))
      continue;
    r.ranges.push_back({v.name, range->second.lo, range->second.hi, encoding_text(enc->second)});
  }
  for (const auto& o : q.recipe.overrides) r.overrides.emplace_back(o.pattern, quant::scheme_name(o.scheme));
}

// The options that refine a recipe, on every path (`genai eval` passes them as options too): a
// recipe file, then --quant_override entries ahead of its overrides, the range search, GPTQ and
// the embedding table.
void apply_recipe_options(const pipeline::QuantizationSettings& o, quant::Recipe& recipe) {
  if (o.quant_recipe_file) recipe = quant::recipe_from_file(*o.quant_recipe_file, recipe);
  for (const auto& spec : o.quant_overrides) quant::add_override(recipe, spec);
  const int64_t candidates = o.seq_mse_candidates;
  if (candidates < 0) throw_input_error("--seq_mse_candidates must be >= 0, got {}", candidates);
  if (candidates > 0) recipe.seq_mse_candidates = candidates;
  if (o.gptq) recipe.gptq = true;
  if (o.embedding_quantize) quant::set_embedding_quantization(recipe, *o.embedding_quantize);
}

// The decode method whose encodings the check measures: kv_forward, or `genai eval --lora`'s
// adapter's copy of it.
std::string measured_kv_method(const EvalQuantizationSettings* s) {
  if (!s || s->lora.empty()) return std::string(graph::kKvForward);
  return std::string(graph_name_str(adapter_graph(GraphName::kKvForward, s->lora)));
}

// The float side of the check: the model, or `genai eval --lora`'s adapter on it.
std::shared_ptr<const Model> measured_model(const std::shared_ptr<const Model>& model, const EvalQuantizationSettings* s) {
  if (!s || s->lora.empty()) return model;
  for (const auto& a : model->lora_adapters)
    if (a->name == s->lora) return model_with_adapter(*model, *a);
  throw_input_error("--lora {}: no --lora_adapter is named {}", s->lora, s->lora);
}

class Quantization final : public QuantizationStrategy {
 public:
  explicit Quantization(std::shared_ptr<const EvalQuantizationSettings> settings) : settings_(std::move(settings)) {}

  QuantizationOutputConfig invoke(const PipelineContext& context, const QuantizationInputConfig& in,
                                  StageNotes& notes) override {
    const EvalQuantizationSettings* s = settings_.get();
    // Given encodings (`genai eval --qdq`) need the model only: nothing is calibrated.
    if (!(s && s->encodings && in.model)) in.check_ready();
    const pipeline::QuantizationSettings& o = in.settings;
    std::shared_ptr<const quant::EncodingSet> encodings;
    std::optional<quant::QuantizedModel> q;
    double quantize_seconds = 0.0;
    int64_t eval_context = kEvalContext;
    if (s && s->encodings) {
      encodings = s->encodings;  // `genai eval --qdq`: nothing to quantize
      notes["encodings"] = "given";
    } else {
      const quant::QuantizeOptions qo = quantize_options(in);
      const auto t0 = std::chrono::steady_clock::now();
      q = quant::quantize_model(in.model, qo);
      quantize_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log::info("quantized with {} ({} calibration windows) in {:.1f}s", q->recipe.name, qo.windows.size(),
                quantize_seconds);
      encodings = q->encodings.at(measured_kv_method(s));
      eval_context = std::min<int64_t>(qo.max_context_len, kEvalContext);
      // The QDQ file is for evaluation (`genai eval --qdq`); a run that only builds programs
      // (--compile_only, `genai compile`) leaves exactly what a device needs in the artifact dir.
      if (s ? s->write_qdq : !o.compile_only) {
        const std::filesystem::path dir = context.artifact_dir();
        std::filesystem::create_directories(dir);
        notes["decode_qdq"] = quant::write_decode_qdq(*q, dir).string();
        log::info("wrote {}", notes["decode_qdq"].get<std::string>());
      }
      notes["recipe"] = q->recipe.name;
      notes["graphs"] = nlohmann::json::array();
      for (const auto& [name, bundle] : q->bundles) notes["graphs"].push_back(std::string(graph_name_str(name)));
      notes["calibration_seconds"] = q->calibration_seconds;
    }

    Check check{measured_model(in.model, s), encodings, {}, std::move(q), quantize_seconds,
                in.calibration_data ? in.calibration_data->size() : 0, {}};
    if (s && s->per_layer && in.calibration_data && !in.calibration_data->empty())
      check.first_calibration_window = in.calibration_data->front();
    if (s && s->eval) {
      check.options = *s->eval;
    } else {
      check.options.max_context_len = eval_context;
      check.options.prompt_eval = false;
      if (o.eval_text) check.options.text = read_text_file(*o.eval_text);
    }
    // The quantized side of the check is a compiled program (our lowering, run on this CPU): it
    // equals the QDQ reference and runs 20-30 times faster, which at 1B is minutes. `genai eval`
    // chooses with --eval_on; the pipeline's check uses the QDQ reference only where the decoder's
    // embeddings are a program of their own (image or audio models), and then also gives the
    // per-tensor table, which needs the reference's intermediate values. The program is the one
    // the pipeline deploys when compilation writes one that runs here, else a private copy.
    const quant::QuantizedModel* qm = check.quantized ? &*check.quantized : nullptr;
    const bool program_check =
        qm && !qm->recipe.is_float() && (s ? s->compiled_eval : !modality::takes_media(*in.model));
    QuantizationOutputConfig out;
    if (qm) out.bundles = qm->bundles;
    notes["summary"] = fmt::format("recipe {}, {} calibration window(s)", qm ? qm->recipe.name : std::string("given"),
                                   check.calibration_windows);
    const bool quantized = qm != nullptr;
    if (program_check && !s && in.check_on_program) {
      pending_ = std::move(check);
    } else if (program_check) {
      eval::CompiledWindows program(*in.model, qm->bundles, s ? s->lora : "");
      run_check(check, &program, notes);
    } else {
      run_check(check, nullptr, notes);
    }
    // Each modality's encoder: its own graph, calibration and recipe, beside the decoder's; its
    // option's files, when given, are its calibration media.
    for (const modality::Modality* m : quantized ? modality::modalities_of(*in.model) : std::vector<const modality::Modality*>{}) {
      const modality::EncoderQuantization e = modality::quantize_encoder(*m, *in.model, modality::media_paths(*m, o.media));
      const GraphName name = m->program().graph;
      out.bundles.emplace(name, e.bundle);
      const std::string graph(graph_name_str(name));
      notes[graph] = {{"recipe", e.recipe}, {fmt::format("calibration_{}", m->sample_unit()), e.samples},
                      {"calibration_source", e.source}, {"sqnr_db", finite_json_number(e.sqnr_db)}, {"seconds", e.seconds}};
      notes["graphs"].push_back(graph);
      notes["summary"] = notes["summary"].get<std::string>() +
                         fmt::format("; {} encoder {} SQNR {:.1f} dB", m->name(), e.recipe, e.sqnr_db);
    }
    return out;
  }

  void check_program(const std::filesystem::path& text_decoder, StageNotes& notes) override {
    if (!pending_) return;
    Check check = std::move(*pending_);
    pending_.reset();
    eval::CompiledWindows program(text_decoder);
    run_check(check, &program, notes);
  }

 private:
  // What the check compares: the float model against the quantized one (the encodings through
  // the QDQ reference, or `program`), on the options' text.
  struct Check {
    std::shared_ptr<const Model> model;
    std::shared_ptr<const quant::EncodingSet> encodings;
    EvalOptions options;
    std::optional<quant::QuantizedModel> quantized;  // absent for given encodings
    double quantize_seconds = 0.0;
    size_t calibration_windows = 0;
    std::vector<int32_t> first_calibration_window;  // `genai eval --per_layer`'s sensitivity text
  };

  void run_check(const Check& c, eval::CompiledWindows* program, StageNotes& notes) const {
    const EvalQuantizationSettings* s = settings_.get();
    EvalOptions eo = c.options;
    if (program) {
      eo.quantized_window = program->window_logits();
      if (!s) {
        eo.tensor_tokens = 0;
        eo.max_context_len = std::min(eo.max_context_len, program->max_window());
      }
    }
    EvalReport r = evaluate_quantization(c.model, c.encodings, eo);
    const quant::QuantizedModel* q = c.quantized ? &*c.quantized : nullptr;
    if (q) describe_quantization(*q, r);
    if (s && s->per_layer && q && !q->recipe.is_float() && !c.first_calibration_window.empty()) {
      // On calibration text, not the evaluation text: the proposal must not be tuned on the test.
      r.sensitivity = layer_sensitivity(*c.model, q->recipe, c.first_calibration_window);
      r.proposed_overrides = propose_overrides(r.sensitivity, "16a8w");
    }
    if (s && s->on_report) s->on_report(r, c.quantize_seconds);
    nlohmann::json eval = {{"recipe", r.recipe},
                           {"eval_tokens", r.eval_tokens},
                           {"sqnr_db", finite_json_number(r.sqnr_db)},
                           {"perplexity_float", r.perplexity_float},
                           {"perplexity_quantized", r.perplexity_quantized},
                           {"top1_agreed", r.top1_agreed},
                           {"quantized_by", program ? "program" : "qdq"},
                           {"seconds", r.seconds}};
    if (s && !s->lora.empty()) eval["lora"] = s->lora;
    if (!r.per_layer.empty()) eval["worst_tensor"] = {{"name", r.per_layer.front().name}, {"sqnr_db", finite_json_number(r.per_layer.front().sqnr_db)}};
    notes["eval"] = std::move(eval);
    notes["summary"] = fmt::format("recipe {}, {} calibration window(s); SQNR {:.1f} dB", r.recipe, c.calibration_windows, r.sqnr_db);
  }

  // The settings of `genai eval`, else the option set's: graph shape, recipe, calibration.
  quant::QuantizeOptions quantize_options(const QuantizationInputConfig& in) const {
    const pipeline::QuantizationSettings& o = in.settings;
    quant::QuantizeOptions qo;
    if (settings_ && settings_->quantize) {
      qo = *settings_->quantize;  // fp16 included: eval measures it like any recipe
      if (qo.recipe.name.empty()) qo.recipe = default_recipe_for(*in.model, "");
    } else {
      const graph::DecoderGraphOptions go = decoder_graph_options(o.graphs);
      qo.mode = go.mode;
      qo.max_context_len = go.max_context_len;
      qo.prefill_ar_len = go.prefill_ar_len;
      qo.decode_ar_len = go.decode_ar_len;
      qo.recipe = in.quant_recipe ? quant::recipe_from_choice(*in.quant_recipe)
                                  : default_recipe_for(*in.model, o.decoder_model.value_or(""));
      if (qo.recipe.is_float())
        throw_input_error("--quant_recipe fp16 is a float program: it skips quantization (use --use_fp16)");
      qo.calibration = calibration_options(o.calibration);
    }
    apply_recipe_options(o, qo.recipe);
    // Image or audio features replace token embeddings.
    qo.separate_embedding = modality::takes_media(*in.model);
    qo.windows = *in.calibration_data;  // prepared with these calibration settings
    qo.adapters = in.model->lora_adapters;
    if (settings_ && !settings_->lora.empty())  // `genai eval --lora`: only the adapter it measures
      std::erase_if(qo.adapters, [&](const auto& a) { return a->name != settings_->lora; });
    return qo;
  }

  std::shared_ptr<const EvalQuantizationSettings> settings_;
  std::optional<Check> pending_;  // the check left for check_program
};

}  // namespace

std::unique_ptr<QuantizationStrategy> make_quantization_strategy(std::shared_ptr<const EvalQuantizationSettings> settings) {
  return std::make_unique<Quantization>(std::move(settings));
}

}  // namespace genai::orchestrator
