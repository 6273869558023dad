#include "eval/inference_evaluation.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_number.h"
#include "core/log.h"
#include "eval/report_figures.h"
#include "eval/window_comparison.h"
#include "graph/decoder_graphs.h"
#include "graph/executor.h"
#include "llm/compiled_session.h"
#include "llm/graph_decoder.h"
#include "model/model.h"
#include "quant/encoding_set.h"
#include "quant/qdq_executor.h"
#include "runtime/artifact_dir.h"
#include "runtime/program_instance.h"
#include "tokenizer/factory.h"

namespace genai::eval {
namespace {

using namespace genai::pipeline;

constexpr const char* kSideNames[] = {"float", "qdq", "program"};

// The decoder sessions compared, each absent when the run cannot have it.
struct Sides {
  std::unique_ptr<DecoderScheduler> session[3];  // float, qdq, program (kSideNames)
  std::string qdq_from;                          // where the encodings came from
  int64_t window = 0;                            // tokens a window holds: the programs' context
  int64_t vocab = 0;
  // With an attention sink every side evicts, and a window holds --max_seq_len tokens.
  std::optional<AttentionSinkOptions> sink;
};

std::string read_task_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input_error("--eval_tasks: cannot open {}", path.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text_decoder program's directory: the artifact dir, or a lone program's folder.
std::filesystem::path program_dir(const InferenceInputConfig& in) {
  return in.artifact_paths.at(ArtifactKey::kTextDecoder).parent_path();
}

// The QDQ reference's graphs and encodings: this run's quantized bundles as compiled, else the
// programs' decode_qdq.json carried onto graphs of their shape.
std::unique_ptr<DecoderScheduler> qdq_session(const InferenceInputConfig& in, const graph::GraphMap& graphs,
                                              std::string& from) {
  std::map<std::string, std::shared_ptr<const quant::EncodingSet>> encodings;
  if (!in.quantized_graphs.empty()) {
    graph::GraphMap bundle_graphs;
    for (const auto& [name, bundle] : in.quantized_graphs) {
      if (!bundle.encodings()) return nullptr;  // a float bundle: nothing to quantize
      bundle_graphs[std::string(graph_name_str(name))] = bundle.graph();
      encodings[std::string(graph_name_str(name))] = bundle.encodings();
    }
    from = "quantization";
    return make_graph_session(std::make_unique<quant::QdqExecutor>(std::move(bundle_graphs), std::move(encodings)));
  }
  if (!in.artifact_paths.contains(ArtifactKey::kTextDecoder)) return nullptr;
  const std::filesystem::path file = program_dir(in) / "decode_qdq.json";
  if (!std::filesystem::exists(file)) return nullptr;
  const quant::EncodingSet source = quant::load_encodings(file);
  for (const auto& [name, g] : graphs)
    encodings[name] = std::make_shared<const quant::EncodingSet>(quant::reconcile_encodings(*g, source));
  from = file.string();
  return make_graph_session(std::make_unique<quant::QdqExecutor>(graphs, std::move(encodings)));
}

Sides make_sides(const InferenceInputConfig& in, const InferenceEvalSetup& setup) {
  Sides s;
  graph::DecoderGraphOptions go = setup.graphs;
  if (in.artifact_paths.contains(ArtifactKey::kTextDecoder)) {
    auto program = make_program_session(runtime::ProgramInstance::load(in.artifact_paths.at(ArtifactKey::kTextDecoder)));
    // The float and QDQ graphs take the programs' shape, so every side schedules a window alike.
    go.mode = program->prefill_ar_len() > 0 ? graph::ModelMode::kHybrid : graph::ModelMode::kKv;
    go.max_context_len = program->max_context() + program->decode_ar_len() - 1;
    if (program->prefill_ar_len() > 0) go.prefill_ar_len = program->prefill_ar_len();
    s.window = program->max_context();
    s.vocab = program->vocab_size();
    s.session[2] = std::move(program);
  }
  if (in.model) {
    const graph::GraphMap graphs = graph::build_decoder_graphs(in.model, go);
    s.session[0] = make_graph_session(std::make_unique<graph::InterpreterExecutor>(graphs));
    s.session[1] = qdq_session(in, graphs, s.qdq_from);
    if (!s.session[2]) {
      s.window = s.session[0]->max_context();
      s.vocab = s.session[0]->vocab_size();
    }
  }
  s.sink = setup.sink;
  if (s.sink) {
    if (s.session[2]) s.session[2]->set_attention_sink(*s.sink);
    for (int k = 0; k < 2; ++k)
      if (s.session[k])
        s.session[k]->set_attention_sink(*s.sink, key_rerotation_from_model(in.model->config, go.max_context_len));
    s.window = setup.sink_window;
  }
  return s;
}

// The tokenizer of the run: the prepared one, else --tokenizer..., else the artifact dir's.
std::shared_ptr<const Tokenizer> eval_tokenizer(const InferenceInputConfig& in) {
  if (in.tokenizer) return in.tokenizer;
  if (in.model && in.model->tokenizer) return in.model->tokenizer;
  std::optional<std::filesystem::path> path = in.runtime_tokenizer_path;
  if (const auto& file = in.settings.tokenizer_file) path = *file;
  if (!path && in.artifact_paths.contains(ArtifactKey::kTextDecoder))
    path = runtime::open_artifact_dir(program_dir(in)).tokenizer_path;
  if (!path) throw_input_error("--eval_methods: the run has no tokenizer; pass --tokenizer_model or --tokenizer_bin");
  return load_tokenizer_file(*path);
}

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }
// SQNR of identical logits is +inf: 999 dB in JSON, as the quantization stage's report; a side
// not measured (NaN) is null.
nlohmann::json db(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : finite_json_number(v); }

// The sides present, as sources of the comparison, float first (the SQNR reference).
std::vector<LogitsSource> sources_of(Sides& s, std::vector<size_t>& index) {
  std::vector<LogitsSource> out;
  for (size_t k = 0; k < 3; ++k) {
    if (!s.session[k]) continue;
    DecoderScheduler* session = s.session[k].get();
    out.push_back({kSideNames[k], [session](std::span<const int32_t> tokens) {
                     session->reset();
                     return session->forward_all(tokens);
                   }});
    index.push_back(k);
  }
  return out;
}

nlohmann::json tasks_eval(Sides& sides, const Tokenizer& tokenizer, const EvalRequest& req,
                          std::map<std::string, double>& results) {
  nlohmann::json all = nlohmann::json::object();
  for (const auto& task : req.tasks) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> ids = tokenizer.encode(read_task_text(task.file), tokenizer.add_bos_by_default());
    const int64_t W = sides.window;
    if (static_cast<int64_t>(ids.size()) < W)
      throw_input_error("--eval_tasks {}: {} has {} tokens, shorter than one window of {} tokens (the programs' "
                        "context length)",
                        task.name, task.file.string(), ids.size(), W);
    const int64_t n = std::min<int64_t>(req.limit, static_cast<int64_t>(ids.size()) / W);
    if (n < req.limit)
      log::warn("--eval_limit {}: {} holds only {} window(s) of {} tokens", req.limit, task.name, n, W);
    std::vector<std::span<const int32_t>> windows;
    for (int64_t w = 0; w < n; ++w) windows.emplace_back(ids.data() + w * W, static_cast<size_t>(W));
    std::vector<size_t> index;
    const std::vector<LogitsSource> sources = sources_of(sides, index);
    const WindowComparison c = compare_windows(windows, sides.vocab, sources, "tasks_eval " + task.name);
    nlohmann::json j = {{"text", task.file.string()}, {"windows", c.windows}, {"window_tokens", W},
                        {"attention_sink", sides.sink ? nlohmann::json(fmt::format("{},{}", sides.sink->sink,
                                                                                      sides.sink->eviction))
                                                      : nlohmann::json(nullptr)},
                        {"eval_tokens", c.predicted_tokens}};
    for (const char* side : kSideNames) j[fmt::format("perplexity_{}", side)] = nullptr;
    for (size_t i = 0; i < index.size(); ++i) {
      const std::string key = fmt::format("perplexity_{}", kSideNames[index[i]]);
      j[key] = number_or_null(c.sources[i].perplexity);
      results[fmt::format("tasks_eval.{}.{}", task.name, key)] = c.sources[i].perplexity;
    }
    j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log::info("tasks_eval {}: {} window(s) of {} tokens ({} predicted); perplexity float {}, QDQ {}, program {}",
              task.name, c.windows, W, c.predicted_tokens, figure_text(j["perplexity_float"]), figure_text(j["perplexity_qdq"]),
              figure_text(j["perplexity_program"]));
    all[task.name] = std::move(j);
  }
  return all;
}

nlohmann::json sqnr_eval(Sides& sides, const Tokenizer& tokenizer, const std::vector<std::string>& prompts,
                         std::map<std::string, double>& results) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!sides.session[0]) throw_input_error("--eval_methods sqnr_eval needs the float model: give --checkpoint");
  if (!sides.session[1] && !sides.session[2])
    throw_input_error("--eval_methods sqnr_eval compares a quantized or compiled model with the float one; this run "
                      "has neither (quantization and compilation skipped, no -a/--pre_gen_pte programs)");
  // Each prompt as plain text (no chat template), at most one window.
  std::vector<std::vector<int32_t>> ids;
  for (const auto& p : prompts) {
    ids.push_back(tokenizer.encode(p, tokenizer.add_bos_by_default()));
    if (static_cast<int64_t>(ids.back().size()) > sides.window) ids.back().resize(static_cast<size_t>(sides.window));
    if (ids.back().empty()) ids.pop_back();
  }
  if (ids.empty()) throw_input_error("--eval_methods sqnr_eval: the --prompt texts give no tokens");
  std::vector<std::span<const int32_t>> windows(ids.begin(), ids.end());
  std::vector<size_t> index;
  const std::vector<LogitsSource> sources = sources_of(sides, index);
  const WindowComparison c = compare_windows(windows, sides.vocab, sources, "sqnr_eval");
  nlohmann::json j = {{"prompt_tokens", c.logits_rows}};
  for (const char* side : {"qdq", "program"}) {
    j[fmt::format("sqnr_db_{}", side)] = nullptr;
    j[fmt::format("top1_agreed_{}", side)] = nullptr;
  }
  for (size_t i = 1; i < index.size(); ++i) {  // index[0] is float, the reference
    const char* side = kSideNames[index[i]];
    j[fmt::format("sqnr_db_{}", side)] = db(c.sources[i].sqnr_db);
    j[fmt::format("top1_agreed_{}", side)] = c.sources[i].top1_agreed;
    results[fmt::format("sqnr_eval.sqnr_db_{}", side)] = c.sources[i].sqnr_db;
  }
  j["predicted_tokens"] = c.predicted_tokens;
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log::info("sqnr_eval: logits SQNR vs float over {} prompt token(s): QDQ {}, program {}", c.logits_rows,
            figure_text(j["sqnr_db_qdq"], " dB"), figure_text(j["sqnr_db_program"], " dB"));
  return j;
}

}  // namespace

nlohmann::json evaluate_inference(const InferenceInputConfig& in, const EvalRequest& request,
                                  const InferenceEvalSetup& setup, std::map<std::string, double>& results) {
  Sides sides = make_sides(in, setup);
  if (!sides.session[0] && !sides.session[2])
    throw_input_error("--eval_methods: nothing to evaluate (no programs and no float model)");
  const std::shared_ptr<const Tokenizer> tokenizer = eval_tokenizer(in);
  nlohmann::json eval = nlohmann::json::object();
  if (request.tasks_eval) eval["tasks_eval"] = tasks_eval(sides, *tokenizer, request, results);
  if (request.sqnr_eval) eval["sqnr_eval"] = sqnr_eval(sides, *tokenizer, in.prompt, results);
  eval["qdq_encodings"] = sides.qdq_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(sides.qdq_from);
  return eval;
}

}  // namespace genai::eval
