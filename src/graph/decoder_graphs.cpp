#include "graph/decoder_graphs.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "graph/passes.h"
#include "model/reference_decoder.h"

namespace genai::graph {
namespace {

void check_options(const ModelConfig& c, const DecoderGraphOptions& o) {
  if (o.max_context_len < 2) throw_input_error("--max_context_len must be at least 2, got {}", o.max_context_len);
  if (o.mode == ModelMode::kHybrid) {
    if (o.prefill_ar_len < 1) throw_input_error("--prefill_ar_len must be positive, got {}", o.prefill_ar_len);
    if (o.prefill_ar_len > o.max_context_len)
      throw_input_error("--prefill_ar_len ({}) must not exceed --max_context_len ({}) in hybrid mode", o.prefill_ar_len,
                        o.max_context_len);
  }
  if (o.decode_ar_len < 1 || o.decode_ar_len >= o.max_context_len)
    throw_input_error("the decode AR length {} (--model_mode lookahead: next_pow2((--window + --gcap) * (--ngram - 1))) "
                      "must be in [1, --max_context_len {})",
                      o.decode_ar_len, o.max_context_len);
  c.validate("model config");
  // Past the window, the sliding layers' mask (build_decoder_graph) takes the new tokens' own
  // columns as visible: true while a chunk is no longer than the window, or has no cache before it.
  const bool prefill_has_cache = o.mode == ModelMode::kHybrid && o.prefill_ar_len < o.max_context_len;
  if (windowed_layers(c, o.max_context_len) && prefill_has_cache && o.prefill_ar_len > c.sliding_window)
    throw_input_error("--prefill_ar_len {} exceeds the model's sliding window of {} tokens with --max_context_len {} "
                      "(valid: at most {}, or equal to --max_context_len)",
                      o.prefill_ar_len, c.sliding_window, o.max_context_len, c.sliding_window);
  if (windowed_layers(c, o.max_context_len) && o.decode_ar_len > c.sliding_window)
    throw_input_error("the lookahead decode AR length {} exceeds the model's sliding window of {} tokens (--window, "
                      "--gcap, --ngram make it smaller)",
                      o.decode_ar_len, c.sliding_window);
}

}  // namespace

bool windowed_layers(const ModelConfig& c, int64_t max_context_len) {
  for (int64_t l = 0; l < c.n_layers; ++l)
    if (c.layer_slides(l) && max_context_len > c.sliding_window) return true;
  return false;
}

std::string_view model_mode_name(ModelMode m) { return m == ModelMode::kKv ? "kv" : "hybrid"; }

ModelMode model_mode_from_name(std::string_view name, std::string_view option) {
  if (name == "kv") return ModelMode::kKv;
  if (name == "hybrid") return ModelMode::kHybrid;
  throw_input_error("{}: unknown model mode '{}' (valid: kv, hybrid)", option, name);
}

std::pair<Tensor, Tensor> rope_tables(const ModelConfig& config, int64_t max_context_len, bool local) {
  // A static graph picks longrope's factors once, for the context it is built for (as llama.cpp
  // does by its context size; HF switches per sequence length).
  const std::vector<float> inv_freq = rope_inv_freq(config, max_context_len, local);
  const int64_t half = static_cast<int64_t>(inv_freq.size()), hd = 2 * half;  // the rotary width of this kind
  const float factor = config.long_rope.enabled() ? config.long_rope.attention_factor : 1.0f;
  Tensor cos = Tensor::zeros(DType::kF32, {max_context_len, hd});
  Tensor sin = Tensor::zeros(DType::kF32, {max_context_len, hd});
  for (int64_t p = 0; p < max_context_len; ++p)
    for (int64_t i = 0; i < half; ++i) {
      // As HF: the angle is a float32 product, cos/sin of it rounded to float32.
      const float angle = static_cast<float>(p) * inv_freq[i];
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * factor;
      const float s = static_cast<float>(std::sin(static_cast<double>(angle))) * factor;
      cos.mutable_data<float>()[p * hd + i] = cos.mutable_data<float>()[p * hd + i + half] = c;
      sin.mutable_data<float>()[p * hd + i] = sin.mutable_data<float>()[p * hd + i + half] = s;
    }
  return {std::move(cos), std::move(sin)};
}

std::shared_ptr<Graph> build_tok_embedding_graph(std::shared_ptr<const Weights> weights, std::string name, int64_t ar) {
  if (ar < 1) throw_input_error("graph {}: AR length {} must be positive", name, ar);
  auto g = std::make_shared<Graph>(std::move(name), std::move(weights));
  const ValueId tokens = g->add_input("tokens", DType::kI32, {1, ar});
  g->add_output(std::string(kInputsEmbeds),
                g->add_op(OpKind::kGather, {g->add_weight(weight_names::embed_tokens()), tokens}, "embed.out"));
  default_pipeline().run(*g);
  return g;
}

GraphMap build_decoder_graphs(std::shared_ptr<const Model> model, const DecoderGraphOptions& options) {
  check_options(model->config, options);
  // Aliasing pointer: every graph keeps the model alive and shares its one copy of the weights.
  std::shared_ptr<const Weights> weights(model, &model->weights);
  const ModelConfig& c = model->config;
  const int64_t CL = options.max_context_len;
  std::vector<std::pair<std::string, int64_t>> wanted{{std::string(kKvForward), options.decode_ar_len}};
  if (options.mode == ModelMode::kHybrid) wanted.emplace_back(std::string(kPrefillForward), options.prefill_ar_len);
  if (options.decode_ar_len > 1) wanted.emplace_back(std::string(kKvForwardAr1), 1);
  if (options.calibration) wanted.emplace_back(std::string(kCalibration), CL);
  GraphMap graphs;
  for (const auto& [name, ar] : wanted) {
    graphs[name] = build_decoder_graph(c, weights, name, ar, CL, options.separate_embedding);
    if (options.separate_embedding) {
      const std::string emb = std::string(kTokEmbeddingPrefix) + name;
      graphs[emb] = build_tok_embedding_graph(weights, emb, ar);
    }
  }
  return graphs;
}

GraphMap build_decoder_graphs(const Model& model, const DecoderGraphOptions& options) {
  // Copying a Model copies tensor handles, not tensor data (storage is reference-counted).
  return build_decoder_graphs(std::make_shared<const Model>(model), options);
}

}  // namespace genai::graph
