#include "llm/image_embeddings.h"

#include "core/error.h"

namespace genai {

EmbeddingRows image_embedding_rows(std::span<const int32_t> tokens, int32_t image_token_id,
                                   std::span<const float> features, int64_t dim) {
  if (dim < 1 || features.size() % static_cast<size_t>(dim) != 0)
    throw_failure("internal: {} image feature values are not rows of {}", features.size(), dim);
  EmbeddingRows r;
  r.dim = dim;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] == image_token_id) r.at.push_back(static_cast<int64_t>(i));
  const size_t rows = features.size() / static_cast<size_t>(dim);
  if (r.at.size() != rows)
    throw_input_error("the prompt holds {} image tokens (id {}) but the images give {} feature rows", r.at.size(),
                      image_token_id, rows);
  r.rows.assign(features.begin(), features.end());
  return r;
}

}  // namespace genai
