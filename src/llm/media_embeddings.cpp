#include "llm/media_embeddings.h"

#include "core/error.h"

namespace genai {

EmbeddingRows media_embedding_rows(std::span<const int32_t> tokens, int32_t token_id,
                                   std::span<const float> features, int64_t dim) {
  if (dim < 1 || features.size() % static_cast<size_t>(dim) != 0)
    throw_failure("internal: {} feature values are not rows of {}", features.size(), dim);
  EmbeddingRows r;
  r.dim = dim;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == token_id) r.at.push_back(static_cast<int64_t>(i));
  const size_t rows = features.size() / static_cast<size_t>(dim);
  if (r.at.size() != rows)
    throw_input_error("the prompt holds {} media tokens (id {}) but the images or clips give {} feature rows", r.at.size(),
                      token_id, rows);
  r.rows.assign(features.begin(), features.end());
  return r;
}

}  // namespace genai
