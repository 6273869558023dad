// The vision encoder as a static graph (artifact key "vision_encoder", method "vision_encoder"):
// one tile of pixels in, its image features out, in the text decoder's width:
//   input  pixel_values [1, channels, image_size, image_size] float32 (normalised, as the
//          image processor gives them)
//   output image_features [1, tokens_per_image, text_dim]
// Patches are cut in the graph (reshape + transpose: a patch's pixels in channel, row, column
// order, as the convolution reads them) and projected by a linear layer; InternVL's CLS token
// goes first; learned positions are added; pre-LN encoder layers (biased attention without a
// mask, GELU MLP: tanh form or exact; InternVL's layer scales folded into the projections before
// them); SmolVLM's post LayerNorm; the CLS row dropped; the connector's pixel shuffle (s x s
// neighbouring patches into one token, by row offset, then column offset, then channel) and its
// projection (one linear layer, or InternVL's LayerNorm, linear, GELU, linear).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.h"
#include "model/vision_tower.h"

namespace genai::graph {

inline constexpr std::string_view kVisionEncoder = "vision_encoder";
inline constexpr std::string_view kPixelValues = "pixel_values";
inline constexpr std::string_view kImageFeatures = "image_features";

std::shared_ptr<Graph> build_vision_encoder_graph(std::shared_ptr<const VisionTower> tower,
                                                  std::string name = std::string(kVisionEncoder));

}  // namespace genai::graph
