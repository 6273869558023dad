// The constant ("prim getter") methods of a text_decoder program, from the decode graph's bundle:
// one method per get_* metadata entry (decoder_metadata.h lists the required ones; any further
// get_* key, e.g. get_sliding_window, is emitted too) and, for quantized programs,
// get_kv_output_{i}_quant_attr = [scale, zero_point, quant_min, quant_max, "torch.uint8"|
// "torch.uint16"] for each KV output i in the decode graph's output order (k_out_0..k_out_{L-1},
// v_out_0..v_out_{L-1}).
#pragma once

#include <vector>

#include "pipeline/graph_bundle.h"
#include "pte/program.h"

namespace genai::compile {

// Failure naming the missing key when the metadata lacks a required constant (callers complete it
// with compile::with_decoder_metadata), or when a value has no constant-method type.
std::vector<pte::Method> decoder_constant_methods(const pipeline::GraphBundle& decode);
// Every get_* entry of a bundle's metadata as a constant method (an encoder's program: its I/O
// encodings, image token, tokens per tile).
std::vector<pte::Method> metadata_constant_methods(const pipeline::GraphBundle& bundle);

}  // namespace genai::compile
