#include "eval/quant_evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/sampler.h"
#include "graph/decoder_graphs.h"
#include "llm/graph_decoder.h"
#include "quant/qdq_executor.h"

namespace genai {

const std::string& default_eval_text() {
  static const std::string text =
      "The lighthouse stood at the end of a narrow spit of rock, and for most of the year the only visitors were "
      "the gulls and the keeper's cat. Every evening the keeper climbed the spiral stairs, one hundred and twelve of "
      "them, wiped the salt from the great lens, trimmed the wick and lit the lamp. Ships passing in the night saw "
      "the beam sweep across the water every ten seconds and knew exactly where they were. In the winter, storms "
      "came in from the west. Waves broke over the lower gallery and the whole tower seemed to hum with the wind. "
      "The keeper kept a logbook in which he wrote the weather, the ships he saw, and the small events of the day: "
      "a seal asleep on the landing stage, a box of apples washed ashore, a letter from his sister in the city. "
      "When the supply boat arrived each month, it brought flour, oil for the lamp, newspapers that were already "
      "old, and sometimes a child from the village who wanted to see the light up close. He would show them how "
      "the clockwork turned the lens, how the prisms bent the light into a single bright band, and why the glass "
      "had to be kept perfectly clean. Years later, when the light was automated and the keeper moved to a small "
      "house in the village, people still asked him about the storms. He always said the same thing: the sea is "
      "not cruel and it is not kind, it is simply very large, and the job of a light is to help people remember "
      "where the land begins.";
  return text;
}

const std::string& default_eval_text_file() {
  static const std::string path = "/usr/share/go-1.19/src/testdata/Isaac.Newton-Opticks.txt";
  return path;
}

const std::string& default_eval_text_package() {
  static const std::string package = "golang-1.19-src";
  return package;
}

double sqnr_db(double signal, double noise) {
  if (noise <= 0.0) return std::numeric_limits<double>::infinity();
  if (signal <= 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

namespace {

// sum f^2 and sum (f - q)^2 over float values f and their quantized counterparts q.
struct SqnrSum {
  double signal = 0.0, noise = 0.0;
  void add(const float* f, const float* q, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const double a = f[i], d = a - q[i];
      signal += a * a;
      noise += d * d;
    }
  }
  double db() const { return sqnr_db(signal, noise); }
};

// Inputs of a full-autoregressive graph over `n` tokens: causal mask, positions 0..n-1.
struct WindowInputs {
  Tensor tokens, mask, pos;
  explicit WindowInputs(int64_t n)
      : tokens(Tensor::zeros(DType::kI32, {1, n})),
        mask(Tensor::zeros(DType::kF32, {1, 1, n, n})),
        pos(Tensor::zeros(DType::kI32, {1, n})) {
    for (int64_t i = 0; i < n; ++i) {
      pos.mutable_data<int32_t>()[i] = static_cast<int32_t>(i);
      for (int64_t j = 0; j < n; ++j) mask.mutable_data<float>()[i * n + j] = j <= i ? 0.0f : graph::kMaskedValue;
    }
  }
  graph::InputMap bind(std::span<const int32_t> ids) {
    std::copy(ids.begin(), ids.end(), tokens.mutable_data<int32_t>());
    return {{"tokens", &tokens}, {"atten_mask", &mask}, {"input_pos", &pos}};
  }
};

std::vector<float> run_window(graph::GraphExecutor& e, const std::string& name, WindowInputs& in,
                              std::span<const int32_t> ids) {
  graph::TensorMap out = e.run(name, in.bind(ids));
  const Tensor& logits = out.at("logits");
  return std::vector<float>(logits.data<float>(), logits.data<float>() + logits.numel());
}

// The full-autoregressive graph of `n` tokens and the encodings carried onto it.
struct WindowGraph {
  std::string name = std::string(graph::kCalibration);
  graph::GraphMap graphs;
  std::shared_ptr<const quant::EncodingSet> encodings;
  WindowGraph(const std::shared_ptr<const Model>& model, const quant::EncodingSet& source, int64_t n) {
    const std::shared_ptr<const Weights> weights(model, &model->weights);
    auto g = graph::build_decoder_graph(model->config, weights, name, n, n);
    encodings = std::make_shared<const quant::EncodingSet>(quant::reconcile_encodings(*g, source));
    graphs[name] = std::move(g);
  }
};

// Per-tensor SQNR of every quantized op result over one window: the float run stashes each
// value, the QDQ run compares as it goes.
std::vector<TensorSqnr> tensor_sqnr(const WindowGraph& wg, std::span<const int32_t> ids) {
  const graph::Graph& g = *wg.graphs.at(wg.name);
  std::vector<bool> compared(g.values().size(), false);
  for (const auto& op : g.ops())
    compared[static_cast<size_t>(op.result)] = g.value(op.result).type.dtype == DType::kF32 && !quant::is_passthrough(op.kind);
  graph::InterpreterExecutor fe(wg.graphs);
  quant::QdqExecutor qe(wg.graphs, {{wg.name, wg.encodings}});
  std::unordered_map<std::string, std::vector<float>> stash;
  fe.set_observer([&](const graph::Value& v, const Tensor& t) {
    if (!compared[static_cast<size_t>(&v - g.values().data())]) return;
    stash[v.name].assign(t.data<float>(), t.data<float>() + t.numel());
  });
  std::vector<TensorSqnr> rows;
  qe.set_observer([&](const graph::Value& v, const Tensor& t) {
    auto it = stash.find(v.name);
    if (it == stash.end()) return;
    SqnrSum sum;
    sum.add(it->second.data(), t.data<float>(), it->second.size());
    rows.push_back({v.name, sum.db()});
    stash.erase(it);
  });
  WindowInputs in(static_cast<int64_t>(ids.size()));
  run_window(fe, wg.name, in, ids);
  run_window(qe, wg.name, in, ids);
  return rows;
}

}  // namespace

EvalReport evaluate_quantization(std::shared_ptr<const Model> model, std::shared_ptr<const quant::EncodingSet> encodings,
                                 const EvalOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!model->tokenizer) throw_input_error("{}: eval needs a tokenizer and the checkpoint has none", model->checkpoint_path.string());
  const std::string& text = o.text.empty() ? default_eval_text() : o.text;
  std::vector<int32_t> ids = model->tokenizer->encode(text, model->tokenizer->add_bos_by_default());
  if (ids.size() < 2) throw_input_error("--eval_text: the text has {} token(s), need at least 2", ids.size());
  if (o.max_context_len < 2) throw_input_error("--max_context_len must be >= 2, got {}", o.max_context_len);
  const int64_t n_ids = static_cast<int64_t>(ids.size());
  const int64_t W = std::min(o.max_context_len, n_ids);
  const int64_t usable = o.max_tokens > 0 ? std::min(o.max_tokens, n_ids) : n_ids;
  const int64_t n_windows = std::max<int64_t>(1, usable / W);

  EvalReport r;
  r.recipe = encodings->recipe;
  if (o.sqnr_eval) {
    const WindowGraph wg(model, *encodings, W);
    graph::InterpreterExecutor fe(wg.graphs);
    WindowInputs in(W);
    WindowLogits quantized = o.quantized_window;
    std::unique_ptr<quant::QdqExecutor> qe;
    if (!quantized) {
      qe = std::make_unique<quant::QdqExecutor>(wg.graphs, std::map<std::string, std::shared_ptr<const quant::EncodingSet>>{
                                                               {wg.name, wg.encodings}});
      quantized = [&](std::span<const int32_t> window) { return run_window(*qe, wg.name, in, window); };
    }
    std::vector<std::span<const int32_t>> windows;
    for (int64_t w = 0; w < n_windows; ++w) windows.emplace_back(ids.data() + w * W, static_cast<size_t>(W));
    const LogitsSource sources[] = {
        {"float", [&](std::span<const int32_t> window) { return run_window(fe, wg.name, in, window); }},
        {"quantized", quantized}};
    const WindowComparison c = compare_windows(windows, model->config.vocab_size, sources);
    log::info("evaluated {} window(s) of {} tokens: float {:.1f} s, quantized {:.1f} s", n_windows, W,
              c.sources[0].seconds, c.sources[1].seconds);
    r.eval_windows = c.windows;
    r.eval_tokens = c.predicted_tokens;
    r.sqnr_db = c.sources[1].sqnr_db;
    r.top1_agreed = c.sources[1].top1_agreed;
    r.perplexity_float = c.sources[0].perplexity;
    r.perplexity_quantized = c.sources[1].perplexity;

    if (o.tensor_tokens > 0) {
      const int64_t tn = std::clamp<int64_t>(o.tensor_tokens, 2, W);
      const WindowGraph tg(model, *encodings, tn);
      r.per_tensor = tensor_sqnr(tg, std::span<const int32_t>(ids.data(), static_cast<size_t>(tn)));
      r.per_layer = r.per_tensor;
      std::stable_sort(r.per_layer.begin(), r.per_layer.end(),
                       [](const TensorSqnr& a, const TensorSqnr& b) { return a.sqnr_db < b.sqnr_db; });
    }
  }

  const int64_t CL = o.max_context_len;
  graph::DecoderGraphOptions go;
  go.mode = graph::ModelMode::kKv;
  go.max_context_len = CL;
  if (o.prompt_eval) {
    const graph::GraphMap graphs = graph::build_decoder_graphs(model, go);
    const std::string kv(graph::kKvForward);
    auto set = std::make_shared<const quant::EncodingSet>(quant::reconcile_encodings(*graphs.at(kv), *encodings));
    const auto fs = make_graph_session(std::make_unique<graph::InterpreterExecutor>(graphs));
    const auto qs = make_graph_session(std::make_unique<quant::QdqExecutor>(
        graphs, std::map<std::string, std::shared_ptr<const quant::EncodingSet>>{{kv, set}}));
    const int64_t p = std::clamp<int64_t>(o.prompt_tokens, 1, static_cast<int64_t>(ids.size()));
    const int64_t gen = std::clamp<int64_t>(o.gen_tokens, 0, CL - p);
    const std::span<const int32_t> prompt(ids.data(), static_cast<size_t>(p));
    auto greedy = [&](DecoderScheduler& s) {
      s.reset();
      std::vector<int32_t> out;
      auto logits = s.forward(prompt);
      for (int64_t i = 0; i < gen; ++i) {
        const int32_t t = argmax(logits);
        out.push_back(t);
        if (i + 1 < gen) logits = s.forward(std::span<const int32_t>(&t, 1));
      }
      return out;
    };
    const auto a = greedy(*fs), b = greedy(*qs);
    r.greedy_tokens = gen;
    bool prefix = true;
    for (int64_t i = 0; i < gen; ++i) {
      const bool same = a[static_cast<size_t>(i)] == b[static_cast<size_t>(i)];
      r.greedy_agreed += same;
      prefix = prefix && same;
      r.greedy_common_prefix += prefix;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<TensorSqnr> layer_sensitivity(const Model& model, const quant::Recipe& recipe, std::span<const int32_t> tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n < 2) throw_input_error("--per_layer: the text has {} token(s), need at least 2", n);
  auto base = std::shared_ptr<const Weights>(std::shared_ptr<const Weights>{}, &model.weights);
  const auto reference = graph::build_decoder_graph(model.config, base, std::string(graph::kCalibration), n, n);
  // Layer unit ("layers.N" / "lm_head") -> its linear ops' (weight, result) names.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> units;
  for (const auto& op : reference->ops()) {
    if (op.kind != graph::OpKind::kLinear || reference->value(op.operands[1]).kind != graph::ValueKind::kWeight) continue;
    const std::string& result = reference->value(op.result).name;
    // "layers.N.attn.q_proj.out" -> "layers.N", "lm_head.out" -> "lm_head".
    const size_t skip = result.starts_with("layers.") ? result.find('.') + 1 : 0;
    units[result.substr(0, result.find('.', skip))].emplace_back(reference->value(op.operands[1]).name, result);
  }
  WindowInputs in(n);
  auto logits_of = [&](const graph::Graph& g) {
    graph::TensorMap out = graph::interpret(g, in.bind(tokens));
    const Tensor& l = out.at("logits");
    return std::vector<float>(l.data<float>(), l.data<float>() + l.numel());
  };
  const std::vector<float> lf = logits_of(*reference);
  std::vector<TensorSqnr> rows;
  ProgressBar bar("layer sensitivity", static_cast<int64_t>(units.size()));
  for (const auto& [unit, linears] : units) {
    auto w = std::make_shared<Weights>(model.weights);  // shares every tensor but the replaced ones
    bool quantized = false;
    for (const auto& [weight, result] : linears) {
      const quant::Scheme s = recipe.scheme_for(result);
      if (s.act == quant::QDType::kF16) continue;
      const Tensor f = model.weights.f32(weight);
      const quant::WeightEncoding e =
          quant::quantize_weight(weight, f.data<float>(), f.dim(0), f.dim(1), s.weight, s.block_size);
      const std::vector<float> dq = quant::dequantize_weight(e, f.data<float>());
      Tensor t = Tensor::zeros(DType::kF32, f.shape());
      std::copy(dq.begin(), dq.end(), t.mutable_data<float>());
      w->add(weight, std::move(t));
      quantized = true;
    }
    if (quantized) {
      const auto g = graph::build_decoder_graph(model.config, w, std::string(graph::kCalibration), n, n);
      const std::vector<float> lq = logits_of(*g);
      SqnrSum sum;
      sum.add(lf.data(), lq.data(), lf.size());
      rows.push_back({unit, sum.db()});
    }
    bar.advance();
  }
  bar.finish();
  std::stable_sort(rows.begin(), rows.end(), [](const TensorSqnr& a, const TensorSqnr& b) { return a.sqnr_db < b.sqnr_db; });
  return rows;
}

std::vector<std::string> propose_overrides(const std::vector<TensorSqnr>& sensitivity, const std::string& higher,
                                           double margin_db) {
  if (sensitivity.empty()) return {};
  std::vector<double> v;
  for (const auto& r : sensitivity) v.push_back(r.sqnr_db);
  std::sort(v.begin(), v.end());
  const double median = v[v.size() / 2];
  std::vector<std::string> layers;
  for (const auto& r : sensitivity)  // worst first
    if (r.sqnr_db < median - margin_db && layers.size() < std::max<size_t>(1, sensitivity.size() / 4)) layers.push_back(r.name);
  std::vector<std::string> out;
  for (const auto& name : layers) {
    std::string pattern;
    for (char ch : name) pattern += ch == '.' ? std::string("\\.") : std::string(1, ch);
    out.push_back(pattern + "\\..*=" + higher);
  }
  return out;
}

}  // namespace genai
