#include "compile/decoder_metadata.h"

#include <fmt/format.h>

#include "core/error.h"
#include "graph/graph.h"
#include "model/reference_decoder.h"
#include "pipeline/adapter_graphs.h"
#include "quant/encoding_set.h"

namespace genai::compile {

const std::vector<std::string>& decoder_constant_names() {
  static const std::vector<std::string> kNames{
      "get_max_seq_len", "get_max_context_len", "get_ar_len",      "get_vocab_size",       "get_n_layers",
      "get_n_kv_heads",  "get_head_dim",        "get_dim",         "get_bos_id",           "get_eos_id",
      "get_n_bos",       "get_n_eos",           "get_max_batch_size", "get_use_kv_cache", "get_kv_io_bit_width",
      "get_logits_scale", "get_logits_zero_point"};
  return kNames;
}

namespace {

bool is_decoder_graph(pipeline::GraphName name) {
  if (const auto adapted = pipeline::adapter_graph_of(name)) name = adapted->base;  // a LoRA adapter's copy
  return name == pipeline::GraphName::kKvForward || name == pipeline::GraphName::kPrefillForward ||
         name == pipeline::GraphName::kKvForwardAr1;
}

const pipeline::InputSpec* find_input(const pipeline::GraphBundle& bundle, std::string_view name) {
  for (const auto& in : bundle.example_inputs()) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

int64_t dtype_bits(DType t) { return static_cast<int64_t>(dtype_size(t)) * 8; }

}  // namespace

pipeline::Metadata complete_decoder_metadata(const ModelConfig& config, const pipeline::GraphBundle& bundle,
                                             const DecoderMetadataOptions& options) {
  const std::string& graph_name = bundle.graph()->name();
  const pipeline::InputSpec* mask = find_input(bundle, "atten_mask");
  if (!mask || mask->shape.size() != 4) {
    throw_failure("decoder metadata: graph {} has no atten_mask input [1, 1, ar, CL]", graph_name);
  }
  const int64_t ar = mask->shape[2];
  const int64_t context = mask->shape[3];

  pipeline::Metadata md = bundle.metadata();
  auto fill = [&](const std::string& key, pipeline::MetadataValue value) { md.emplace(key, std::move(value)); };
  if (options.max_seq_len) md["get_max_seq_len"] = *options.max_seq_len;
  fill("get_max_seq_len", context);
  fill("get_max_context_len", context);
  fill("get_ar_len", ar);
  fill("get_vocab_size", config.vocab_size);
  fill("get_n_layers", config.n_layers);
  fill("get_n_kv_heads", config.layer_kv_heads(0));  // layer 0's, as the runner reads k_cache_0
  fill("get_head_dim", config.layer_head_dim(0));
  fill("get_dim", config.dim);
  fill("get_bos_id", static_cast<int64_t>(config.bos_id));
  fill("get_eos_id", static_cast<int64_t>(config.eos_id));
  fill("get_n_bos", int64_t{1});
  fill("get_n_eos", int64_t{1});
  fill("get_max_batch_size", int64_t{1});
  fill("get_use_kv_cache", context != ar);
  // Gemma 4's constants, as upstream names them: the layers with a KV cache of their own, the
  // shared ones, the global layers' head size, the window.
  if (config.has_per_layer_kv()) {
    fill("get_n_self_layers", config.kv_layers());
    fill("get_num_kv_shared_layers", config.kv_shared_layers);
    fill("get_global_head_dim", config.global_layer_head_dim());
    if (config.sliding_window > 0) fill("get_sliding_window", config.sliding_window);
  }

  // Each cached layer's RoPE frequencies (all zero: none), so the runner can rotate kept keys
  // back after an attention-sink eviction (llm/attention_sink.h).
  for (int64_t l = 0; l < config.kv_layers(); ++l) {
    const std::vector<float> inv_freq = layer_rope_inv_freq(config, l, context);
    std::vector<double> list(inv_freq.begin(), inv_freq.end());
    if (list.empty()) list.push_back(0.0);
    fill(fmt::format("get_rope_inv_freq_{}", l), std::move(list));
  }

  // KV I/O width: the cache input's (or, without a cache, the new-K output's) program dtype.
  int64_t kv_bits = 32;
  if (const auto& io = bundle.quant_io_dtypes()) {
    if (auto it = io->inputs.find("k_cache_0"); it != io->inputs.end()) {
      kv_bits = dtype_bits(it->second);
    } else if (auto out = io->outputs.find("k_out_0"); out != io->outputs.end()) {
      kv_bits = dtype_bits(out->second);
    }
  }
  fill("get_kv_io_bit_width", kv_bits);

  if (bundle.quantized()) {
    const graph::Graph& g = *bundle.graph();
    const graph::GraphOutput* logits = g.find_output("logits");
    if (!logits) throw_failure("decoder metadata: graph {} has no logits output", graph_name);
    if (!bundle.encodings()) throw_failure("decoder metadata: quantized graph {} carries no encodings", graph_name);
    const auto& acts = bundle.encodings()->activations;
    auto it = acts.find(g.value(logits->value).name);
    if (it == acts.end()) throw_failure("decoder metadata: graph {}: logits have no encoding", graph_name);
    fill("get_logits_scale", static_cast<double>(it->second.scale));
    fill("get_logits_zero_point", static_cast<int64_t>(it->second.zero_point));
  }
  return md;
}

pipeline::GraphBundles with_decoder_metadata(const ModelConfig& config, const pipeline::GraphBundles& bundles,
                                             const DecoderMetadataOptions& options) {
  pipeline::GraphBundles out;
  for (const auto& [name, bundle] : bundles) {
    if (!is_decoder_graph(name)) {
      out.emplace(name, bundle);
      continue;
    }
    out.emplace(name, pipeline::GraphBundle(bundle.graph(), bundle.example_inputs(),
                                            complete_decoder_metadata(config, bundle, options),
                                            bundle.quant_io_dtypes(), bundle.modality_inputs(),
                                            bundle.program_options(), bundle.encodings()));
  }
  return out;
}

}  // namespace genai::compile
