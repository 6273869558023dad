// Encoder features into a prompt: the encoder's rows take the places of the prompt's image or
// audio tokens, in order (images: tiles row by row, the whole image last; items in prompt
// order), as transformers' merges (masked_scatter) do.
#pragma once

#include <cstdint>
#include <span>

#include "llm/decoder_session.h"

namespace genai {

// Rows for DecoderSession::forward_replacing: `features` ([count, dim] float32) at the indices of
// `tokens` equal to `token_id`. InputError when the prompt holds a different number of those
// tokens than there are feature rows (naming both).
EmbeddingRows media_embedding_rows(std::span<const int32_t> tokens, int32_t token_id,
                                   std::span<const float> features, int64_t dim);

}  // namespace genai
