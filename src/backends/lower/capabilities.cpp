#include "backends/lower/capabilities.h"

#include <fmt/format.h>

#include "graph/graph.h"
#include "quant/encoding_set.h"

namespace genai::backends {

const BackendCapabilities& htp_capabilities() {
  static const BackendCapabilities caps{.backend = "htp",
                                        .quantized_program = true,
                                        .float16_program = true,
                                        .min_arch_float16 = 69,
                                        .min_arch_int4 = 73,
                                        .int8_weights = true,
                                        .int16_weights = true,
                                        .int4_weights = true};
  return caps;
}

const BackendCapabilities& gpu_capabilities() {
  static const BackendCapabilities caps{.backend = "gpu", .quantized_program = false, .float16_program = true};
  return caps;
}

bool lowers_to_float16(const BackendCapabilities& caps, const pipeline::GraphBundle& bundle,
                       const compile::LoweringTarget& target) {
  if (!caps.quantized_program) return true;
  return target.use_fp16 || !bundle.quantized() || !bundle.encodings() || bundle.encodings()->is_float();
}

namespace {

std::string soc_text(const compile::LoweringTarget& t) {
  if (!t.soc) return "an unknown SoC";
  return fmt::format("{} ({})", t.soc->name, target::htp_arch_name(t.soc->htp_arch));
}

int arch_of(const compile::LoweringTarget& t) { return t.soc ? static_cast<int>(t.soc->htp_arch) : 0; }

}  // namespace

std::optional<std::string> check_capabilities(const BackendCapabilities& caps, const pipeline::GraphBundle& bundle,
                                              const compile::LoweringTarget& target) {
  if (!bundle.graph()) return fmt::format("a bundle without a graph cannot be lowered by backend {}", caps.backend);
  const graph::Graph& g = *bundle.graph();
  const std::string soc = soc_text(target);
  const bool fp16 = lowers_to_float16(caps, bundle, target);
  const quant::EncodingSet* enc = bundle.encodings().get();

  if (!caps.quantized_program && bundle.quantized() && enc && !enc->is_float())
    return fmt::format(
        "graph {} is quantized ({}), which backend {} does not support on {}: it runs float16 programs only "
        "(use --quant_recipe fp16)",
        g.name(), enc->recipe, caps.backend, soc);
  if (fp16) {
    if (!caps.float16_program)
      return fmt::format("graph {} needs a float16 program, which backend {} does not support on {}", g.name(),
                         caps.backend, soc);
    if (caps.min_arch_float16 && arch_of(target) < caps.min_arch_float16)
      return fmt::format(
          "graph {} needs a float16 program ({}), which backend {} does not support on {}: float16 needs V{} or newer",
          g.name(), target.use_fp16 ? "--use_fp16" : "float recipe", caps.backend, soc, caps.min_arch_float16);
  }

  for (const auto& v : g.values())
    if (v.type.dtype != DType::kF32 && v.type.dtype != DType::kI32)
      return fmt::format("tensor '{}' has element type {}, which backend {} does not support on {}", v.name,
                         dtype_name(v.type.dtype), caps.backend, soc);
  if (fp16) return std::nullopt;

  // Quantized program: integer activations, integer weights of a width this target has.
  if (!bundle.quant_io_dtypes()) return fmt::format("graph {} has no quantized I/O types for backend {}", g.name(), caps.backend);
  for (const auto& v : g.values()) {
    if (v.type.dtype != DType::kF32 || v.kind == graph::ValueKind::kWeight || v.kind == graph::ValueKind::kConstant)
      continue;
    auto it = enc->activations.find(v.name);
    if (it == enc->activations.end())
      return fmt::format("tensor '{}' has no encoding, so backend {} cannot lower it on {}", v.name, caps.backend, soc);
    if (it->second.dtype != quant::QDType::kU8 && it->second.dtype != quant::QDType::kU16)
      return fmt::format(
          "tensor '{}' has {} activations, which backend {} does not support in a quantized program on {} "
          "(uint8/uint16 only)",
          v.name, quant::qdtype_name(it->second.dtype), caps.backend, soc);
  }
  for (const auto& op : g.ops()) {
    const bool linear = op.kind == graph::OpKind::kLinear;
    const bool table = op.kind == graph::OpKind::kGather && g.value(op.operands[0]).kind == graph::ValueKind::kWeight;
    if (!linear && !table) continue;
    const std::string& wname = g.value(op.operands[linear ? 1 : 0]).name;
    const std::string& rname = g.value(op.result).name;
    auto it = enc->weights.find(wname);
    if (it == enc->weights.end() || !it->second)
      return fmt::format("op '{}' ({}) reads weight {} without an encoding, which backend {} cannot lower on {}", rname,
                         graph::op_kind_name(op.kind), wname, caps.backend, soc);
    const quant::WeightEncoding& w = *it->second;
    const auto unsupported = [&](std::string_view what, std::string_view why) {
      return fmt::format("op '{}' ({}) has {} weights, which backend {} does not support on {}{}", rname,
                         graph::op_kind_name(op.kind), what, caps.backend, soc, why);
    };
    switch (w.dtype) {
      case quant::QDType::kI4:
        if (!caps.int4_weights) return unsupported("int4", "");
        if (caps.min_arch_int4 && arch_of(target) < caps.min_arch_int4)
          return unsupported(w.block_size > 0 ? "int4 block-quantized" : "int4",
                             fmt::format(": int4 weights need V{} or newer", caps.min_arch_int4));
        break;
      case quant::QDType::kI8:
        if (!caps.int8_weights) return unsupported("int8", "");
        break;
      case quant::QDType::kI16:
        if (!caps.int16_weights) return unsupported("int16", "");
        break;
      default:
        return unsupported(quant::qdtype_name(w.dtype), " in a quantized program (mixed float16 is not supported)");
    }
  }
  return std::nullopt;
}

}  // namespace genai::backends
