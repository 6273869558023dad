#include "backends/exec/payload_executor.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "backends/exec/method_plan.h"
#include "core/error.h"
#include "core/log.h"

namespace genai::backends {
namespace {

std::atomic<bool>& profile_slot() {
  static std::atomic<bool> on{false};
  return on;
}

class PayloadMethod : public runtime::DelegateMethod {
 public:
  explicit PayloadMethod(std::unique_ptr<exec::MethodPlan> plan) : plan_(std::move(plan)) {
    bases_.assign(2 + plan_->inputs.size() + plan_->outputs.size(), nullptr);
    profile_ = profile_steps();
  }
  ~PayloadMethod() override {
    if (!profile_ || calls_ == 0) return;
    // Per step kind, milliseconds per call, largest first.
    std::vector<std::pair<double, size_t>> order;
    double total = 0;
    for (size_t k = 0; k < seconds_.size(); ++k) {
      order.emplace_back(seconds_[k], k);
      total += seconds_[k];
    }
    std::sort(order.rbegin(), order.rend());
    std::string line;
    for (const auto& [s, k] : order)
      if (s > 0) line += fmt::format(" {} {:.3f}", exec::step_kind_name(static_cast<exec::StepKind>(k)), s * 1e3 / calls_);
    log::info("{}: {} calls, {:.3f} ms/call in steps:{}", plan_->label, calls_, total * 1e3 / calls_, line);
  }
  const std::vector<runtime::IoDesc>& inputs() const override { return plan_->input_descs; }
  const std::vector<runtime::IoDesc>& outputs() const override { return plan_->output_descs; }
  uint64_t scratch_bytes() const override { return plan_->planned_bytes; }

  void execute(std::span<const runtime::BufferRef> inputs, std::span<const runtime::BufferRef> outputs,
               std::span<uint8_t> scratch) override {
    const exec::MethodPlan& p = *plan_;
    if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size())
      throw_failure("{}: method {} takes {} inputs and {} outputs, got {} and {}", p.label, p.name, p.inputs.size(),
                    p.outputs.size(), inputs.size(), outputs.size());
    if (scratch.size() < p.planned_bytes || (p.planned_bytes > 0 && reinterpret_cast<uintptr_t>(scratch.data()) % 64 != 0))
      throw_failure("{}: method {} needs a 64-byte aligned scratch arena of {} bytes, got {} bytes", p.label, p.name,
                    p.planned_bytes, scratch.size());
    auto check = [&](const runtime::BufferRef& b, const exec::IoBinding& io, const char* what) {
      const size_t align = io.desc.dtype == DType::kU8 ? 1 : io.desc.dtype == DType::kU16 ? 2 : 4;
      if (b.bytes != io.bytes || (io.bytes > 0 && (!b.data || reinterpret_cast<uintptr_t>(b.data) % align != 0)))
        throw_failure("{}: method {}: {} '{}' needs {} bytes ({}-byte aligned), got {} bytes", p.label, p.name, what,
                      io.desc.name, io.bytes, align, b.bytes);
    };
    bases_[1] = scratch.data();
    for (size_t i = 0; i < inputs.size(); ++i) {
      check(inputs[i], p.inputs[i], "input");
      bases_[2 + i] = static_cast<uint8_t*>(inputs[i].data);
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      check(outputs[j], p.outputs[j], "output");
      bases_[2 + inputs.size() + j] = static_cast<uint8_t*>(outputs[j].data);
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (p.inputs[i].copy && p.inputs[i].bytes)
        std::memcpy(bases_[1] + p.inputs[i].loc.offset, inputs[i].data, p.inputs[i].bytes);
    if (profile_) {
      exec::run_method_profiled(p, bases_, seconds_);
      ++calls_;
    } else {
      exec::run_method(p, bases_);
    }
    for (size_t j = 0; j < outputs.size(); ++j) {
      const exec::IoBinding& o = p.outputs[j];
      if (!o.copy || !o.bytes) continue;
      const uint8_t* src = o.loc.base == 0 ? reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(o.loc.offset))
                                           : bases_[o.loc.base] + o.loc.offset;
      std::memmove(outputs[j].data, src, o.bytes);
    }
  }

 private:
  std::unique_ptr<exec::MethodPlan> plan_;
  std::vector<uint8_t*> bases_;
  bool profile_ = false;
  std::array<double, exec::kStepKinds> seconds_{};
  uint64_t calls_ = 0;
};

class PayloadExecutor : public runtime::BackendExecutor {
 public:
  explicit PayloadExecutor(std::string_view id) : id_(id) {}
  std::string_view delegate_id() const override { return id_; }
  std::unique_ptr<runtime::DelegateMethod> init(const pte::Blob& payload, const std::vector<pte::CompileSpec>& /*specs*/,
                                                const runtime::NamedDataLookup& named_data,
                                                const runtime::MethodDesc& method) const override {
    return std::make_unique<PayloadMethod>(exec::decode_method(payload.bytes(), named_data, method.label));
  }

 private:
  std::string id_;
};

}  // namespace

bool profile_steps() { return profile_slot().load(std::memory_order_relaxed); }
void set_profile_steps(bool on) { profile_slot().store(on, std::memory_order_relaxed); }

std::unique_ptr<runtime::BackendExecutor> make_payload_executor(std::string_view delegate_id) {
  return std::make_unique<PayloadExecutor>(delegate_id);
}

}  // namespace genai::backends
