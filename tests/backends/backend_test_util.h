// Helpers for the backend tests: a small random decoder whose dimensions suit every recipe
// (block 32 divides them), quantized in seconds; lowering + executor initialisation of one
// method; integer inputs; and the QDQ reference run on the same inputs, its float outputs turned
// into codes on the output encodings so the two compare exactly.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/register_builtin.h"
#include "compile/backend.h"
#include "core/half.h"
#include "graph/decoder_graphs.h"
#include "model/lora_adapter.h"
#include "model/model.h"
#include "quant/encoding.h"
#include "quant/qdq_executor.h"
#include "quant/quantize.h"
#include "runtime/backend_executor.h"
#include "support/random_model.h"
#include "target/soc.h"

namespace genai::backends_testing {

inline std::shared_ptr<const Model> block_friendly_model(uint32_t seed = 11, bool tied = false, bool qwen = false,
                                                        Architecture arch = Architecture::kLlama) {
  auto m = std::make_shared<Model>();
  ModelConfig c = testing::small_config(qwen ? Architecture::kQwen2 : arch, tied);
  c.dim = 64;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.ffn_dim = 128;
  c.vocab_size = 89;
  testing::set_family_features(c);  // again: granite's attention multiplier follows head_dim
  c.validate("backend test model");
  m->config = c;
  m->weights = testing::random_weights(c, seed);
  return m;
}

// calibration: tokens per calibration window (0: the context).
inline quant::QuantizedModel quantize(std::shared_ptr<const Model> model, const quant::Recipe& recipe,
                                      graph::ModelMode mode, int64_t context = 32, int64_t prefill = 8,
                                      int64_t calibration = 0,
                                      std::vector<std::shared_ptr<const LoraAdapter>> adapters = {}) {
  quant::QuantizeOptions o;
  o.adapters = std::move(adapters);
  o.mode = mode;
  o.max_context_len = context;
  o.prefill_ar_len = prefill;
  o.recipe = recipe;
  o.calibration.context_len = calibration > 0 ? calibration : context;
  o.calibration.max_windows = 2;
  return quant::quantize_model(model, o);
}

inline quant::QuantizedModel quantize(std::shared_ptr<const Model> model, const std::string& recipe,
                                      graph::ModelMode mode, int64_t context = 32, int64_t prefill = 8,
                                      int64_t calibration = 0) {
  return quantize(std::move(model), quant::recipe_from_spelling(recipe), mode, context, prefill, calibration);
}

struct Lowered {
  compile::LoweredMethod method;
  std::map<std::string, pte::NamedData> named;
  std::unique_ptr<runtime::DelegateMethod> exec;
  std::vector<uint8_t> scratch_storage;  // 64-byte aligned view in `scratch`
  std::span<uint8_t> scratch;
};

// The method an executor is initialised for, when only its label matters to the test.
inline runtime::MethodDesc method_labelled(std::string label) {
  runtime::MethodDesc m;
  m.name = label;
  m.label = std::move(label);
  return m;
}

inline runtime::NamedDataLookup lookup_of(const std::map<std::string, pte::NamedData>& named) {
  return [&named](std::string_view key) -> std::span<const uint8_t> {
    auto it = named.find(std::string(key));
    return it == named.end() ? std::span<const uint8_t>() : it->second.data.bytes();
  };
}

inline compile::LoweringTarget target_for(std::string_view soc, bool shared, bool fp16 = false,
                                          target::BackendType type = target::BackendType::kHtpBackend,
                                          compile::KvFusion fusion = compile::KvFusion::kEightBit) {
  compile::LoweringTarget t;
  t.kv_fusion = fusion;
  t.soc = &target::resolve_soc(soc);
  t.backend_type = type;
  t.shared_buffer = shared;
  t.use_fp16 = fp16;
  return t;
}

inline std::unique_ptr<Lowered> lower_and_init(const compile::Backend& backend, const std::string& name,
                                               const pipeline::GraphBundle& bundle, const compile::LoweringTarget& t) {
  auto l = std::make_unique<Lowered>();
  l->method = backend.lower(name, bundle, t);
  for (const auto& nd : l->method.named_data) l->named.emplace(nd.key, nd);
  const auto* ex = runtime::find_backend_executor(l->method.delegate_id);
  if (!ex) throw std::runtime_error("no executor for " + l->method.delegate_id);
  l->exec = ex->init(l->method.payload, {}, lookup_of(l->named), method_labelled(name));
  l->scratch_storage.assign(l->exec->scratch_bytes() + 64, 0);
  uint8_t* p = l->scratch_storage.data();
  const size_t pad = (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  l->scratch = std::span<uint8_t>(p + pad, l->exec->scratch_bytes());
  return l;
}

// Program-side buffers of one call (raw bytes per I/O) and the float tensors the QDQ reference
// gets for the same values.
struct Call {
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::map<std::string, Tensor> reference_inputs;
};

inline const quant::Encoding& encoding_of(const quant::EncodingSet& set, const std::string& name) {
  return set.activations.at(name);
}

// The program's buffers for given input values (codes on the input encodings for quantized
// inputs), the values the codes stand for for the QDQ reference, and output buffers filled with
// 0xAB.
inline Call call_from_values(const runtime::DelegateMethod& m, const quant::EncodingSet* set,
                             std::map<std::string, Tensor> values) {
  Call c;
  for (const auto& io : m.inputs()) {
    Tensor& ref = values.at(io.name);
    const int64_t n = shape_numel(io.shape);
    std::vector<uint8_t> bytes(static_cast<size_t>(n) * dtype_size(io.dtype));
    if (io.dtype == DType::kI32 || io.dtype == DType::kF32) {
      std::memcpy(bytes.data(), ref.raw(), bytes.size());
    } else {
      const quant::Encoding& e = encoding_of(*set, io.name);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t q = quant::quantize_value(ref.data<float>()[i], e);
        ref.mutable_data<float>()[i] = quant::dequantize_value(q, e);
        if (io.dtype == DType::kU8) bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(q);
        else reinterpret_cast<uint16_t*>(bytes.data())[i] = static_cast<uint16_t>(q);
      }
    }
    c.inputs.push_back(std::move(bytes));
    c.reference_inputs.emplace(io.name, std::move(ref));
  }
  for (const auto& io : m.outputs())
    c.outputs.emplace_back(static_cast<size_t>(shape_numel(io.shape)) * dtype_size(io.dtype), 0xAB);
  return c;
}

// Random integer inputs: tokens, causal positions from `start`, a mask that lets row i see the
// cache [0, start) and new positions <= i, random cache codes.
inline Call make_call(const runtime::DelegateMethod& m, const quant::EncodingSet* set, int64_t vocab, int64_t start,
                      uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, Tensor> values;
  for (const auto& io : m.inputs()) {
    const int64_t n = shape_numel(io.shape);
    Tensor ref = Tensor::zeros(io.dtype == DType::kI32 ? DType::kI32 : DType::kF32, io.shape);
    if (io.name == "tokens") {
      for (int64_t i = 0; i < n; ++i) ref.mutable_data<int32_t>()[i] = static_cast<int32_t>(rng() % vocab);
    } else if (io.name == "input_pos") {
      for (int64_t i = 0; i < n; ++i) ref.mutable_data<int32_t>()[i] = static_cast<int32_t>(start + i);
    } else if (io.name == "atten_mask") {
      const int64_t ar = io.shape[2], cl = io.shape[3], cache = cl - ar;
      for (int64_t i = 0; i < ar; ++i)
        for (int64_t j = 0; j < cl; ++j) {
          const bool attend = j < cache ? j < start : (j - cache) <= i;
          ref.mutable_data<float>()[i * cl + j] = attend ? 0.0f : graph::kMaskedValue;
        }
    } else {  // caches: random codes (or f16 values for the float program)
      const bool cached = set && !set->is_float();
      for (int64_t i = 0; i < n; ++i) {
        if (cached) {
          const quant::Encoding& e = encoding_of(*set, io.name);
          const int64_t q = e.qmin + static_cast<int64_t>(rng() % static_cast<uint32_t>(e.qmax - e.qmin + 1));
          ref.mutable_data<float>()[i] = quant::dequantize_value(q, e);
        } else {
          std::normal_distribution<float> nd(0.0f, 1.0f);
          ref.mutable_data<float>()[i] = quant::round_to_f16(nd(rng));
        }
      }
    }
    values.emplace(io.name, std::move(ref));
  }
  return call_from_values(m, set, std::move(values));
}

inline void execute(Lowered& l, Call& c) {
  std::vector<runtime::BufferRef> in, out;
  for (auto& b : c.inputs) in.push_back({b.data(), b.size()});
  for (auto& b : c.outputs) out.push_back({b.data(), b.size()});
  l.exec->execute(in, out, l.scratch);
}

inline graph::TensorMap run_reference(quant::QdqExecutor& qdq, const std::string& name, const Call& c) {
  graph::InputMap in;
  for (const auto& [k, t] : c.reference_inputs) in[k] = &t;
  return qdq.run(name, in);
}

// Codes of the program's output `j` and of the reference's float output on that encoding.
struct Codes {
  std::vector<int64_t> program, reference;
};

inline Codes output_codes(const graph::Graph& g, const quant::EncodingSet& set, const runtime::IoDesc& io,
                          const std::vector<uint8_t>& bytes, const Tensor& reference) {
  Codes c;
  const quant::Encoding& e = set.activations.at(g.value(g.find_output(io.name)->value).name);
  const int64_t n = shape_numel(io.shape);
  for (int64_t i = 0; i < n; ++i) {
    c.program.push_back(io.dtype == DType::kU8 ? bytes[static_cast<size_t>(i)]
                                               : reinterpret_cast<const uint16_t*>(bytes.data())[i]);
    c.reference.push_back(quant::quantize_value(reference.data<float>()[i], e));
  }
  return c;
}

// Max |program - reference| over every output code of `name`, for `calls` random calls.
inline int64_t max_code_difference(const quant::QuantizedModel& q, const std::string& name, bool shared, int calls,
                            int64_t* compared, compile::KvFusion fusion = compile::KvFusion::kEightBit) {
  backends::register_builtin_backends();
  const compile::Backend* htp = compile::find_backend("htp");
  const auto& bundle = q.bundles.at(pipeline::parse_graph_name(name));
  auto l = lower_and_init(*htp, name, bundle,
                          target_for("SM8650", shared, false, target::BackendType::kHtpBackend, fusion));
  quant::QdqExecutor qdq(q.graphs, q.encodings);
  const graph::Graph& g = *q.graphs.at(name);
  const quant::EncodingSet& set = *q.encodings.at(name);
  const int64_t cache = g.find_input("k_cache_0") ? g.find_input("k_cache_0")->type.shape[3] : 0;
  int64_t worst = 0;
  *compared = 0;
  for (int k = 0; k < calls; ++k) {
    const int64_t start = cache > 0 ? (k * 7) % (cache + 1) : 0;
    Call c = make_call(*l->exec, &set, 89, start, 100 + k);
    execute(*l, c);
    const auto ref = run_reference(qdq, name, c);
    const auto& outs = l->exec->outputs();
    for (size_t j = 0; j < outs.size(); ++j) {
      const Codes codes = output_codes(g, set, outs[j], c.outputs[j], ref.at(outs[j].name));
      for (size_t i = 0; i < codes.program.size(); ++i) {
        worst = std::max(worst, std::abs(codes.program[i] - codes.reference[i]));
        ++*compared;
      }
    }
  }
  return worst;
}

}  // namespace genai::backends_testing
