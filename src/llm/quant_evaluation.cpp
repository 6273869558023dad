#include "llm/quant_evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/error.h"
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

double sqnr_db(double signal, double noise) {
  if (noise <= 0.0) return std::numeric_limits<double>::infinity();
  if (signal <= 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

namespace {

double log_softmax_at(std::span<const float> logits, int32_t target) {
  double mx = -std::numeric_limits<double>::infinity();
  for (float v : logits) mx = std::max(mx, static_cast<double>(v));
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  return static_cast<double>(logits[static_cast<size_t>(target)]) - mx - std::log(sum);
}

}  // namespace

EvalReport evaluate_quantization(std::shared_ptr<const Model> model, std::shared_ptr<const quant::EncodingSet> encodings,
                                 const EvalOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!model->tokenizer) throw_input_error("{}: eval needs a tokenizer and the checkpoint has none", model->checkpoint_path.string());
  const std::string& text = o.text.empty() ? default_eval_text() : o.text;
  std::vector<int32_t> ids = model->tokenizer->encode(text, model->tokenizer->add_bos_by_default());
  const int64_t CL = o.max_context_len;
  if (static_cast<int64_t>(ids.size()) > CL) ids.resize(static_cast<size_t>(CL));
  if (ids.size() < 2) throw_input_error("--eval_text: the text has {} token(s), need at least 2", ids.size());

  graph::DecoderGraphOptions go;
  go.mode = graph::ModelMode::kKv;
  go.max_context_len = CL;
  const graph::GraphMap graphs = graph::build_decoder_graphs(model, go);
  const std::string kv(graph::kKvForward);
  auto set = std::make_shared<const quant::EncodingSet>(quant::reconcile_encodings(*graphs.at(kv), *encodings));

  auto float_exec = std::make_unique<graph::InterpreterExecutor>(graphs);
  auto qdq_exec = std::make_unique<quant::QdqExecutor>(
      graphs, std::map<std::string, std::shared_ptr<const quant::EncodingSet>>{{kv, set}});
  graph::InterpreterExecutor* fe = float_exec.get();
  quant::QdqExecutor* qe = qdq_exec.get();
  const auto fs = make_graph_session(std::move(float_exec)), qs = make_graph_session(std::move(qdq_exec));

  EvalReport r;
  r.recipe = encodings->recipe;
  const graph::Graph& g = *graphs.at(kv);
  std::vector<bool> compared(g.values().size(), false);
  for (const auto& op : g.ops())
    compared[static_cast<size_t>(op.result)] = g.value(op.result).type.dtype == DType::kF32 && !quant::is_passthrough(op.kind);

  if (o.sqnr_eval) {
    std::unordered_map<std::string, std::vector<float>> stash;
    std::map<std::string, std::pair<double, double>> acc;  // name -> (signal, noise)
    fe->set_observer([&](const graph::Value& v, const Tensor& t) {
      if (!compared[static_cast<size_t>(&v - g.values().data())]) return;
      stash[v.name].assign(t.data<float>(), t.data<float>() + t.numel());
    });
    qe->set_observer([&](const graph::Value& v, const Tensor& t) {
      auto it = stash.find(v.name);
      if (it == stash.end()) return;
      auto& [s, nz] = acc[v.name];
      const float* q = t.data<float>();
      for (size_t i = 0; i < it->second.size(); ++i) {
        const double f = it->second[i], d = f - q[i];
        s += f * f;
        nz += d * d;
      }
    });
    double signal = 0, noise = 0, nll_f = 0, nll_q = 0;
    const int64_t n = static_cast<int64_t>(ids.size()) - 1;
    ProgressBar bar("evaluating", n);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t tok = ids[static_cast<size_t>(i)];
      stash.clear();
      const auto lf_span = fs->forward(std::span<const int32_t>(&tok, 1));
      const std::vector<float> lf(lf_span.begin(), lf_span.end());
      const auto lq = qs->forward(std::span<const int32_t>(&tok, 1));
      for (size_t k = 0; k < lf.size(); ++k) {
        const double d = static_cast<double>(lf[k]) - lq[k];
        signal += static_cast<double>(lf[k]) * lf[k];
        noise += d * d;
      }
      const int32_t next = ids[static_cast<size_t>(i + 1)];
      nll_f -= log_softmax_at(lf, next);
      nll_q -= log_softmax_at(lq, next);
      if (argmax(lf) == argmax(lq)) ++r.top1_agreed;
      bar.advance();
    }
    bar.finish();
    r.eval_tokens = n;
    r.sqnr_db = sqnr_db(signal, noise);
    r.perplexity_float = std::exp(nll_f / static_cast<double>(n));
    r.perplexity_quantized = std::exp(nll_q / static_cast<double>(n));
    for (const auto& [name, sn] : acc) r.per_layer.push_back({name, sqnr_db(sn.first, sn.second)});
    std::stable_sort(r.per_layer.begin(), r.per_layer.end(),
                     [](const TensorSqnr& a, const TensorSqnr& b) { return a.sqnr_db < b.sqnr_db; });
    fe->set_observer(nullptr);
    qe->set_observer(nullptr);
  }

  if (o.prompt_eval) {
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

}  // namespace genai
