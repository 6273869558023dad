#include "llm/decoder_session.h"

#include "core/error.h"

namespace genai {

std::span<const float> DecoderSession::forward_replacing(std::span<const int32_t>, const EmbeddingRows&) {
  throw_input_error("this decoder looks its token embeddings up inside its own graphs: replacing embeddings (image "
                    "features) needs the token embedding as its own step (the tok_embedding artifact)");
}

}  // namespace genai
