// The decoder facts the compiled program publishes as constant methods (upstream's
// LlamaModel.get_metadata() of the decode graph): whatever a bundle's metadata lacks is derived
// here from the model config and the graph's own signature, so quantized bundles (whose metadata
// the quantization stage only partly fills) and float bundles carry the same complete set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "pipeline/graph_bundle.h"

namespace genai::compile {

// The scalar constant methods, in the order a program lists them. get_logits_scale and
// get_logits_zero_point exist only for quantized programs.
const std::vector<std::string>& decoder_constant_names();

struct DecoderMetadataOptions {
  // --max_seq_len (the generation limit); absent: the graph's context length.
  std::optional<int64_t> max_seq_len;
};

// The metadata of one decoder graph (kv_forward / prefill_forward) completed: keys already present
// are kept (except get_max_seq_len when options.max_seq_len is given); missing ones are derived:
// get_max_context_len and get_ar_len from the atten_mask input [1, 1, ar, CL], get_n_layers,
// get_n_kv_heads, get_head_dim, get_dim, get_vocab_size, get_bos_id, get_eos_id from the config,
// get_n_bos = get_n_eos = get_max_batch_size = 1, get_use_kv_cache = (CL != ar),
// get_kv_io_bit_width = 8 / 16 from the cache I/O dtype (32 when unquantized), and for quantized
// bundles get_logits_scale / get_logits_zero_point from the logits encoding. Failure when the
// graph lacks the decoder signature.
pipeline::Metadata complete_decoder_metadata(const ModelConfig& config, const pipeline::GraphBundle& bundle,
                                             const DecoderMetadataOptions& options = {});

// Every decoder bundle of `bundles` with complete_decoder_metadata applied (others unchanged).
pipeline::GraphBundles with_decoder_metadata(const ModelConfig& config, const pipeline::GraphBundles& bundles,
                                             const DecoderMetadataOptions& options = {});

}  // namespace genai::compile
