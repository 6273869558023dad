// Image features into a prompt: the encoder's rows take the places of the prompt's image
// tokens, in order (tiles row by row, the whole image last; images in prompt order), as
// SmolVLM's merge does.
#pragma once

#include <cstdint>
#include <span>

#include "llm/decoder_session.h"

namespace genai {

// Rows for DecoderSession::forward_replacing: `features` ([count, dim] float32) at the indices of
// `tokens` equal to `image_token_id`. InputError when the prompt holds a different number of
// image tokens than there are feature rows (naming both).
EmbeddingRows image_embedding_rows(std::span<const int32_t> tokens, int32_t image_token_id,
                                   std::span<const float> features, int64_t dim);

}  // namespace genai
