// The offline rotation of the residual stream (QuaRot / SpinQuant's R1), merged into the weights:
// every norm's weight is folded into the projections that read its output, then the stream is
// multiplied by an orthogonal Q = diag(signs) H / sqrt(dim) (H a Hadamard matrix): the
// embedding table and every projection reading the stream take Q on their input side, every
// projection writing to it Q^T on its output side. RMS norms do not see an orthogonal rotation,
// so the float model computes the same function, while outlier channels of the stream (the
// "massive activations" of small models) are spread over all channels: per-tensor activation
// ranges shrink and weight rows become easier to quantize. No op is added to the graphs.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace genai {

// A Hadamard matrix of order n as a Kronecker product of small factors (Sylvester's 2 x 2 and
// Paley's construction of order q + 1 for primes q = 3 mod 4), or empty when genai knows none of
// that order. Each factor is row-major, entries +-1.
struct HadamardFactors {
  std::vector<std::vector<int8_t>> factors;
  std::vector<int64_t> orders;
  bool empty() const { return factors.empty(); }
};
HadamardFactors hadamard_factors(int64_t n);

// x -> x Q for `rows` row vectors of length dim (Q as above, signs from a fixed seed).
class ResidualRotation {
 public:
  // InputError naming --rotation and the dimension when no Hadamard matrix of that order is known.
  explicit ResidualRotation(int64_t dim);
  int64_t dim() const { return dim_; }
  void rotate_rows(float* data, int64_t rows) const;

 private:
  int64_t dim_;
  HadamardFactors h_;
  std::vector<float> signs_;
};

// Rotates `model` in place. InputError naming --rotation for families whose blocks the rotation
// does not commute with (LayerNorm, norms after the projections, per-layer embeddings).
void rotate_residual_stream(Model& model);

}  // namespace genai
