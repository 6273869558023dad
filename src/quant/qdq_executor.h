// The QDQ ("fake-quant") reference: executes graphs with every float activation passed through
// quantize -> dequantize at its encoding, weights replaced by their quantized values, and linear
// / matmul ops computed as the integer program will (exact integer accumulation, requantization
// by one float multiplier, round half to even; docs/quantization.md). A later integer kernel must
// match it bit for bit. Its signature is the float graph's (float inputs and outputs holding
// dequantized values), so the decoder scheduler runs it unchanged (llm/graph_method_runner.h).
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "graph/executor.h"
#include "quant/encoding_set.h"

namespace genai::quant {

class QdqExecutor : public graph::GraphExecutor {
 public:
  // `encodings` must cover every float value of every graph (reconcile_encodings does).
  QdqExecutor(graph::GraphMap graphs, std::map<std::string, std::shared_ptr<const EncodingSet>> encodings);
  bool has_graph(std::string_view name) const override;
  std::vector<graph::IoSpec> inputs(std::string_view name) const override;
  std::vector<graph::IoSpec> outputs(std::string_view name) const override;
  graph::TensorMap run(std::string_view name, const graph::InputMap& inputs) override;
  // Sees every op result after fake quantization (per-layer SQNR).
  void set_observer(std::function<void(const graph::Value&, const Tensor&)> observer) { observer_ = std::move(observer); }

 private:
  graph::GraphMap graphs_;
  std::map<std::string, std::shared_ptr<const EncodingSet>> encodings_;
  std::map<std::string, Tensor> dequantized_tables_;  // gathered weight tables, by weight name
  std::function<void(const graph::Value&, const Tensor&)> observer_;
};

// The integer kernels of the reference, exposed for tests and the compiled path.
// y[r, c] for x [rows, cols_in] holding values on encoding `ex`, weights `w` with their codes
// (weight_codes, [w.rows * w.cols]), output encoding `ey`. Returns the dequantized outputs (so
// they are exactly representable on `ey`).
void qdq_linear(const float* x, int64_t rows, const Encoding& ex, const WeightEncoding& w, const int16_t* codes,
                const float* bias, const Encoding& ey, float* y);

}  // namespace genai::quant
