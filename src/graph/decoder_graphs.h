// Builds the static graphs of a decoder (every family of model_config.h: the features a config
// turns on are extra ops in one skeleton) with upstream's signature, so runners and tools line up:
//   inputs  tokens [1, ar] int32, atten_mask [1, 1, ar, CL] float32 (0 attend, -255 masked),
//           input_pos [1, ar] int32, k_cache_0..L-1 [1, n_kv, head_dim, CL-ar],
//           v_cache_0..L-1 [1, n_kv, CL-ar, head_dim]   (no cache inputs when ar == CL)
//   outputs logits [1, ar, vocab], k_out_0..L-1 [1, n_kv, head_dim, ar], v_out_0..L-1 [1, n_kv, ar, head_dim]
// Attention row i sees cache columns [0, CL-ar) and the ar new columns CL-ar.. through the mask.
// All graphs of one call share one copy of the weights.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "model/model.h"

namespace genai::graph {

inline constexpr std::string_view kKvForward = "kv_forward";            // AR-1 (lookahead: the tree)
inline constexpr std::string_view kPrefillForward = "prefill_forward";  // AR-N
// Ours, next to a lookahead kv_forward: one token per call, for the decode steps where no guess
// is worth a tree (on a CPU a tree call costs several single ones).
inline constexpr std::string_view kKvForwardAr1 = "kv_forward_ar1";
inline constexpr std::string_view kCalibration = "calibration";         // AR-CL, quantization only
inline constexpr float kMaskedValue = -255.0f;                          // upstream PADDING_MASK_VALUE
// The token embedding as its own graphs (artifact key "tok_embedding"), one per decoder graph.
inline constexpr std::string_view kTokEmbeddingPrefix = "tok_embedding_";
inline constexpr std::string_view kInputsEmbeds = "inputs_embeds";

enum class ModelMode { kKv, kHybrid };
std::string_view model_mode_name(ModelMode m);  // "kv", "hybrid"
// InputError naming `option` and the valid choices for anything else.
ModelMode model_mode_from_name(std::string_view name, std::string_view option = "--model_mode");

struct DecoderGraphOptions {
  ModelMode mode = ModelMode::kHybrid;
  int64_t max_context_len = 512;
  int64_t prefill_ar_len = 32;
  bool calibration = false;  // also build the full-autoregressive calibration graph
  // The decoder graphs take `inputs_embeds` [1, ar, dim] float32 in place of `tokens`, and
  // tok_embedding_<graph> graphs (tokens [1, ar] -> inputs_embeds) are built next to them.
  bool separate_embedding = false;
  // kv_forward's AR length: 1, or the token tree of lookahead decoding (upstream's
  // next_pow2((window + gcap) * (ngram - 1))). Must stay below the context. Above 1,
  // kv_forward_ar1 is built too.
  int64_t decode_ar_len = 1;
};

using GraphMap = std::map<std::string, std::shared_ptr<const Graph>>;

// True when some layer of `config` slides over a window shorter than the context: its graphs
// then add the windowed mask (atten_mask.window) to those layers' scores.
bool windowed_layers(const ModelConfig& config, int64_t max_context_len);

// kv: {kv_forward}; hybrid: {kv_forward, prefill_forward}; plus calibration when asked (and
// tok_embedding_<name> for each with separate_embedding). Each
// graph has passed the default pass pipeline and the verifier. Bad options are InputErrors
// naming the option.
GraphMap build_decoder_graphs(const Model& model, const DecoderGraphOptions& options);
GraphMap build_decoder_graphs(std::shared_ptr<const Model> model, const DecoderGraphOptions& options);

// One graph of `ar_len` tokens per call over a context of `max_context_len` (ar_len == CL: no
// cache inputs). `weights` must hold config's tensors.
std::shared_ptr<Graph> build_decoder_graph(const ModelConfig& config, std::shared_ptr<const Weights> weights,
                                           std::string name, int64_t ar_len, int64_t max_context_len,
                                           bool embeds_input = false);
// tokens [1, ar_len] int32 -> inputs_embeds [1, ar_len, dim]: the embedding lookup alone.
std::shared_ptr<Graph> build_tok_embedding_graph(std::shared_ptr<const Weights> weights, std::string name,
                                                 int64_t ar_len);

// RoPE tables [CL, rotary dims] (cos, then sin) for positions 0..CL-1, HF rotate-half layout
// (the frequencies repeated twice), with llama3 scaling or longrope (factors chosen for CL,
// attention factor applied) when the config has it.
// `local`: with the sliding layers' own base (gemma3).
std::pair<Tensor, Tensor> rope_tables(const ModelConfig& config, int64_t max_context_len, bool local = false);

}  // namespace genai::graph
