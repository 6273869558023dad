// Test-only backends for the runtime tests, registered under their own delegate ids:
//  - TestAddBackend: y = x + c, with c a float32 vector read from the program's named data (the
//    payload names the key) — exercises payload validation, named data and the scratch arena.
//  - TestQdqBackend: runs a decoder graph with the QDQ reference (or the float interpreter for
//    fp16), exchanging the integer codes a compiled program exchanges (uint16 mask and logits,
//    uint8/uint16 KV) — the program a real backend must match, so the session's integer plumbing
//    can be checked token for token against the decoder scheduler over the same QDQ executor.
#pragma once

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/error.h"
#include "pte/program_writer.h"
#include "quant/qdq_executor.h"
#include "quant/quantize.h"
#include "runtime/backend_executor.h"

namespace genai::runtime_testing {

inline constexpr std::string_view kAddId = "TestAddBackend";
inline constexpr std::string_view kQdqId = "TestQdqBackend";
// A delegate id no executor of the tree or of these tests ever registers.
inline constexpr std::string_view kUnregisteredId = "NoSuchBackend";

// ---- TestAddBackend ----
// Payload: "ADD1", uint32 n (little-endian), uint32 key length, key bytes.
inline std::vector<uint8_t> add_payload(uint32_t n, const std::string& key) {
  std::vector<uint8_t> p{'A', 'D', 'D', '1'};
  auto put = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) p.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put(n);
  put(static_cast<uint32_t>(key.size()));
  p.insert(p.end(), key.begin(), key.end());
  return p;
}

class AddMethod : public runtime::DelegateMethod {
 public:
  AddMethod(uint32_t n, std::span<const uint8_t> addend) : n_(n), addend_(addend) {
    inputs_ = {{"x", DType::kF32, {static_cast<int64_t>(n)}}};
    outputs_ = {{"y", DType::kF32, {static_cast<int64_t>(n)}}};
  }
  const std::vector<runtime::IoDesc>& inputs() const override { return inputs_; }
  const std::vector<runtime::IoDesc>& outputs() const override { return outputs_; }
  uint64_t scratch_bytes() const override { return uint64_t{n_} * sizeof(float); }
  void execute(std::span<const runtime::BufferRef> in, std::span<const runtime::BufferRef> out,
               std::span<uint8_t> scratch) override {
    ++calls;
    last_scratch = scratch;
    // Computes into the arena first, so a missing or short arena is caught by ASan.
    auto* tmp = reinterpret_cast<float*>(scratch.data());
    const auto* x = static_cast<const float*>(in[0].data);
    for (uint32_t i = 0; i < n_; ++i) {
      float c;
      std::memcpy(&c, addend_.data() + i * sizeof(float), sizeof c);
      tmp[i] = x[i] + c;
    }
    std::memcpy(out[0].data, tmp, n_ * sizeof(float));
  }
  int calls = 0;
  std::span<uint8_t> last_scratch;

 private:
  uint32_t n_;
  std::span<const uint8_t> addend_;
  std::vector<runtime::IoDesc> inputs_, outputs_;
};

// Every method AddExecutor was initialised for, in order (what ProgramInstance hands executors).
inline std::vector<runtime::MethodDesc>& add_executor_inits() {
  static std::vector<runtime::MethodDesc> seen;
  return seen;
}

class AddExecutor : public runtime::BackendExecutor {
 public:
  std::string_view delegate_id() const override { return kAddId; }
  std::unique_ptr<runtime::DelegateMethod> init(const pte::Blob& payload, const std::vector<CompileSpec>&,
                                                const runtime::NamedDataLookup& named_data,
                                                const runtime::MethodDesc& method) const override {
    add_executor_inits().push_back(method);
    const std::string& label = method.label;
    const auto b = payload.bytes();
    if (b.size() < 12 || std::memcmp(b.data(), "ADD1", 4) != 0) throw_input_error("{}: not an ADD1 payload", label);
    auto get = [&](size_t at) {
      uint32_t v = 0;
      for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(b[at + i]) << (8 * i);
      return v;
    };
    const uint32_t n = get(4), key_len = get(8);
    if (key_len > b.size() - 12) throw_input_error("{}: ADD1 key runs past the payload", label);
    const std::string key(reinterpret_cast<const char*>(b.data() + 12), key_len);
    const auto addend = named_data(key);
    if (addend.size() != uint64_t{n} * sizeof(float))
      throw_input_error("{}: named data '{}' has {} bytes, {} expected", label, key, addend.size(), n * sizeof(float));
    return std::make_unique<AddMethod>(n, addend);
  }
};

// ---- TestQdqBackend ----
struct QdqTestModel {
  quant::QuantizedModel q;
  std::unique_ptr<quant::QdqExecutor> exec;
  bool quantized() const { return !q.recipe.is_float(); }
  // Program I/O element types of graph `g` (float32 I/O for fp16 programs).
  DType io_dtype(const std::string& g, const std::string& name, bool input) const {
    const auto& bundle = q.bundles.at(pipeline::parse_graph_name(g));
    if (!bundle.quant_io_dtypes()) {
      return name == "tokens" || name == "input_pos" ? DType::kI32 : DType::kF32;
    }
    const auto& m = input ? bundle.quant_io_dtypes()->inputs : bundle.quant_io_dtypes()->outputs;
    return m.at(name);
  }
};

inline std::map<std::string, std::shared_ptr<QdqTestModel>>& qdq_models() {
  static std::map<std::string, std::shared_ptr<QdqTestModel>> m;
  return m;
}

class QdqMethod : public runtime::DelegateMethod {
 public:
  QdqMethod(std::shared_ptr<QdqTestModel> model, std::string graph) : model_(std::move(model)), graph_(std::move(graph)) {
    for (const auto& s : model_->exec->inputs(graph_))
      inputs_.push_back({s.name, model_->io_dtype(graph_, s.name, true), s.type.shape});
    for (const auto& s : model_->exec->outputs(graph_))
      outputs_.push_back({s.name, model_->io_dtype(graph_, s.name, false), s.type.shape});
  }
  const std::vector<runtime::IoDesc>& inputs() const override { return inputs_; }
  const std::vector<runtime::IoDesc>& outputs() const override { return outputs_; }
  uint64_t scratch_bytes() const override { return 0; }
  void execute(std::span<const runtime::BufferRef> in, std::span<const runtime::BufferRef> out,
               std::span<uint8_t>) override {
    const auto& g = *model_->q.graphs.at(graph_);
    const auto& set = *model_->q.encodings.at(graph_);
    std::vector<Tensor> tensors(inputs_.size());
    graph::InputMap map;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const auto& d = inputs_[i];
      if (d.dtype == DType::kU8 || d.dtype == DType::kU16) {
        const auto& e = set.activations.at(d.name);
        Tensor t = Tensor::zeros(DType::kF32, d.shape);
        float* f = t.mutable_data<float>();
        for (int64_t k = 0; k < t.numel(); ++k) {
          const int64_t q = d.dtype == DType::kU8 ? static_cast<const uint8_t*>(in[i].data)[k]
                                                  : static_cast<const uint16_t*>(in[i].data)[k];
          f[k] = quant::dequantize_value(q, e);
        }
        tensors[i] = std::move(t);
      } else {
        tensors[i] = Tensor::view(d.dtype, d.shape, in[i].data, nullptr);
      }
      map[d.name] = &tensors[i];
    }
    const graph::TensorMap result = model_->exec->run(graph_, map);
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const auto& d = outputs_[i];
      const Tensor& t = result.at(d.name);
      const float* f = t.data<float>();
      if (d.dtype == DType::kU8 || d.dtype == DType::kU16) {
        const auto& e = set.activations.at(g.value(g.find_output(d.name)->value).name);
        for (int64_t k = 0; k < t.numel(); ++k) {
          const int64_t q = quant::quantize_value(f[k], e);
          if (d.dtype == DType::kU8)
            static_cast<uint8_t*>(out[i].data)[k] = static_cast<uint8_t>(q);
          else
            static_cast<uint16_t*>(out[i].data)[k] = static_cast<uint16_t>(q);
        }
      } else {
        std::memcpy(out[i].data, f, t.nbytes());
      }
    }
  }

 private:
  std::shared_ptr<QdqTestModel> model_;
  std::string graph_;
  std::vector<runtime::IoDesc> inputs_, outputs_;
};

// Payload: "<model key>\n<graph name>".
class QdqExecutorBackend : public runtime::BackendExecutor {
 public:
  std::string_view delegate_id() const override { return kQdqId; }
  std::unique_ptr<runtime::DelegateMethod> init(const pte::Blob& payload, const std::vector<CompileSpec>&,
                                                const runtime::NamedDataLookup&,
                                                const runtime::MethodDesc& method) const override {
    const std::string& label = method.label;
    const std::string text(reinterpret_cast<const char*>(payload.data()), payload.size());
    const auto nl = text.find('\n');
    if (nl == std::string::npos) throw_input_error("{}: not a QDQ test payload", label);
    auto it = qdq_models().find(text.substr(0, nl));
    if (it == qdq_models().end()) throw_input_error("{}: unknown QDQ test model", label);
    return std::make_unique<QdqMethod>(it->second, text.substr(nl + 1));
  }
};

inline void register_test_backends() {
  static std::once_flag once;
  std::call_once(once, [] {
    runtime::register_backend_executor(std::make_unique<AddExecutor>());
    runtime::register_backend_executor(std::make_unique<QdqExecutorBackend>());
  });
}

// ---- programs ----
inline pte::Method delegated_method(const std::string& name, const std::vector<runtime::IoDesc>& inputs,
                                    const std::vector<runtime::IoDesc>& outputs, std::string_view delegate_id,
                                    std::vector<uint8_t> payload, int64_t planned_bytes) {
  pte::Method m;
  m.name = name;
  pte::Chain c;
  pte::DelegateCall call;
  for (const auto* list : {&inputs, &outputs})
    for (const auto& d : *list) {
      std::vector<int32_t> sizes(d.shape.begin(), d.shape.end());
      const auto index = static_cast<int32_t>(m.values.size());
      m.values.push_back(pte::make_tensor(pte::scalar_type_from_dtype(d.dtype), sizes));
      (list == &inputs ? m.inputs : m.outputs).push_back(index);
      call.args.push_back(index);
    }
  c.inputs = m.inputs;
  c.outputs = m.outputs;
  c.instructions.push_back(call);
  m.chains.push_back(c);
  m.delegates.push_back(pte::Delegate{std::string(delegate_id), {}, pte::Blob(std::move(payload))});
  m.non_const_buffer_sizes = {0, planned_bytes};
  return m;
}

// A decoder program over the QDQ test backend: kv_forward (+ prefill_forward) and the constant
// methods compilation writes. `key` registers the model for the backend.
inline void write_qdq_program(const std::filesystem::path& path, const std::string& key,
                              std::shared_ptr<QdqTestModel> model, int64_t context_len) {
  qdq_models()[key] = model;
  pte::Program p;
  for (const auto& [name, g] : model->q.graphs) {
    QdqMethod probe(model, name);
    const std::string payload = key + "\n" + name;
    p.methods.push_back(delegated_method(name, probe.inputs(), probe.outputs(), kQdqId,
                                         std::vector<uint8_t>(payload.begin(), payload.end()), 0));
  }
  const auto& md = model->q.bundles.at(pipeline::GraphName::kKvForward).metadata();
  for (const auto& [k, v] : md) {
    if (const auto* i = std::get_if<int64_t>(&v)) p.methods.push_back(pte::make_constant_method(k, pte::Int{*i}));
    if (const auto* d = std::get_if<double>(&v)) p.methods.push_back(pte::make_constant_method(k, pte::Double{*d}));
  }
  p.methods.push_back(pte::make_constant_method("get_max_context_len", pte::Int{context_len}));
  const int kv_bits = model->q.recipe.kv == quant::QDType::kU8 ? 8 : model->quantized() ? 16 : 32;
  p.methods.push_back(pte::make_constant_method("get_kv_io_bit_width", pte::Int{kv_bits}));
  pte::write_program(path, p);
}

}  // namespace genai::runtime_testing
