#include "quant/calibration.h"

#include "quant/calibration_text.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/whole_file.h"
#include "graph/decoder_graphs.h"
#include "graph/interpreter.h"
#include "core/sampler.h"
#include "model/reference_decoder.h"

namespace genai::quant {

std::vector<std::string> read_calibration_texts(const std::filesystem::path& file) {
  const std::optional<std::string> file_text = read_whole_file(file);
  if (!file_text) throw_input_error("--calib_samples: cannot open {}", file.string());
  const std::string& text = *file_text;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw_input_error("--calib_samples: {} starts like a JSON list but does not parse: {}", file.string(), e.what());
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_string()) throw_input_error("--calib_samples: {}: element {} is not a string", file.string(), i);
      out.push_back(j[i].get<std::string>());
    }
    if (out.empty()) throw_input_error("--calib_samples: {} is an empty list", file.string());
    return out;
  }
  if (first == std::string::npos) throw_input_error("--calib_samples: {} is empty", file.string());
  return {text};
}

std::vector<std::vector<int32_t>> calibration_windows(const Model& model, const CalibrationOptions& o) {
  const int64_t n = o.context_len;
  if (n < 2) throw_input_error("--calib_len must be >= 2, got {}", n);
  if (o.max_windows < 1) throw_input_error("--calib_max_windows must be >= 1, got {}", o.max_windows);
  std::vector<int32_t> stream;
  if (!o.sample_files.empty()) {
    if (!model.tokenizer) throw_input_error("--calib_samples needs a tokenizer, and {} has none", model.checkpoint_path.string());
    for (const auto& f : o.sample_files)
      for (const auto& t : read_calibration_texts(f)) {
        auto ids = model.tokenizer->encode(t, model.tokenizer->add_bos_by_default());
        stream.insert(stream.end(), ids.begin(), ids.end());
      }
    if (stream.empty()) throw_input_error("--calib_samples: the files hold no tokens");
  } else if (model.tokenizer) {
    stream = model.tokenizer->encode(default_calibration_text(), model.tokenizer->add_bos_by_default());
  } else {
    // No tokenizer to read text with (models built in memory): text the model itself finds likely,
    // one sequence per window from BOS, so every window starts where text starts. This decodes
    // one token at a time, which is why a checkpoint (always with a tokenizer) reads the text.
    ReferenceDecoder ref(model);
    Sampler sampler(SamplerConfig{o.temperature, 0.95f, o.seed});
    const int32_t bos =
        model.config.bos_id >= 0 && model.config.bos_id < model.config.vocab_size ? model.config.bos_id : 0;
    ProgressBar bar("calibration text", n * o.max_windows);
    for (int64_t w = 0; w < o.max_windows; ++w) {
      ref.reset();
      int32_t tok = bos;
      stream.push_back(tok);
      for (int64_t i = 1; i < n; ++i) {
        const std::vector<float> logits = ref.forward_last(std::span<const int32_t>(&tok, 1));
        tok = sampler.sample(logits);
        stream.push_back(tok);
        bar.advance();
      }
    }
    bar.finish();
  }
  std::vector<std::vector<int32_t>> windows;
  for (size_t at = 0; at < stream.size() && static_cast<int64_t>(windows.size()) < o.max_windows; at += n) {
    std::vector<int32_t> w;
    for (int64_t i = 0; i < n; ++i) w.push_back(stream[(at + i) % stream.size()]);
    windows.push_back(std::move(w));
  }
  return windows;
}

RangeMap calibrate(const graph::Graph& g, const std::vector<std::vector<int32_t>>& windows, RangeMethod method,
                   bool gram) {
  const auto* tok_in = g.find_input("tokens");
  const auto* mask_in = g.find_input("atten_mask");
  if (!tok_in || !mask_in || !g.find_input("input_pos"))
    throw_failure("quant: calibration graph {} lacks tokens/atten_mask/input_pos", g.name());
  const int64_t n = tok_in->type.shape.at(1), CL = mask_in->type.shape.back();
  if (n != CL) throw_failure("quant: calibration graph {} is not full-autoregressive (ar {} != CL {})", g.name(), n, CL);
  Tensor pos = Tensor::zeros(DType::kI32, {1, n});
  Tensor mask = Tensor::zeros(DType::kF32, {1, 1, n, n});
  for (int64_t i = 0; i < n; ++i) {
    pos.mutable_data<int32_t>()[i] = static_cast<int32_t>(i);
    for (int64_t j = 0; j < n; ++j) mask.mutable_data<float>()[i * n + j] = j <= i ? 0.0f : graph::kMaskedValue;
  }
  std::vector<graph::TensorMap> samples;
  for (const auto& w : windows) {
    if (static_cast<int64_t>(w.size()) != n)
      throw_failure("quant: calibration window of {} tokens, graph takes {}", w.size(), n);
    Tensor tokens = Tensor::zeros(DType::kI32, {1, n});
    std::copy(w.begin(), w.end(), tokens.mutable_data<int32_t>());
    samples.push_back({{"tokens", std::move(tokens)}, {"atten_mask", mask}, {"input_pos", pos}});
  }
  return calibrate_samples(g, samples, method, gram);
}

RangeMap calibrate_samples(const graph::Graph& g, const std::vector<graph::TensorMap>& samples, RangeMethod method,
                           bool gram, const std::string& what) {
  RangeMap ranges;
  // The inputs of linear ops also get per-column mean squares (the weight range search's weights).
  std::vector<bool> linear_input(g.values().size(), false);
  for (const auto& op : g.ops())
    if (op.kind == graph::OpKind::kLinear) linear_input[static_cast<size_t>(op.operands[0])] = true;
  const int passes = method == RangeMethod::kMse ? 2 : 1;
  ProgressBar bar(what, static_cast<int64_t>(samples.size()) * passes);
  for (int pass = 0; pass < passes; ++pass) {
    graph::InterpreterOptions options;
    options.observer = [&](const graph::Value& v, const Tensor& t) {
      if (t.dtype() != DType::kF32) return;
      if (pass == 0) {
        Range& r = ranges[v.name];
        r.add(t.data<float>(), t.numel());
        if (linear_input[static_cast<size_t>(&v - g.values().data())] && t.rank() >= 1) {
          const int64_t cols = t.dim(t.rank() - 1);
          r.add_columns(t.data<float>(), t.numel() / cols, cols);
          if (gram) r.add_gram(t.data<float>(), t.numel() / cols, cols);
        }
      }
      else ranges[v.name].add_to_histogram(t.data<float>(), t.numel());
    };
    for (const auto& sample : samples) {
      graph::InputMap inputs;
      for (const auto& [name, t] : sample) {
        inputs[name] = &t;
        if (pass == 0 && t.dtype() == DType::kF32) ranges[name].add(t.data<float>(), t.numel());
      }
      graph::interpret(g, inputs, options);
      bar.advance();
    }
  }
  bar.finish();
  return ranges;
}

}  // namespace genai::quant
