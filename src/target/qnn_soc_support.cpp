#include "target/qnn_soc_support.h"

#include <cstdlib>
#include <utility>

#include <fmt/format.h>

namespace genai::target {
namespace {

// The HTP arch QNN 2.51 builds for a chipset whose table arch it does not build.
std::optional<HtpArch> qnn_built_arch(Chipset chipset) {
  switch (chipset) {
    case Chipset::SM8475:
    case Chipset::SSG2115P:
    case Chipset::SSG2125P:
    case Chipset::SXR1230P: return HtpArch::V68;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> qnn_lowering_refusal(const SocInfo& soc) {
  const auto built = qnn_built_arch(soc.chipset);
  if (!built || *built == soc.htp_arch) return std::nullopt;
  return fmt::format("QNN's HTP compiler (QNN 2.51, onnxruntime-qnn 2.7.0) builds {} code for {}, whose HTP is {}; a "
                     "context binary for {} cannot carry the compile spec's arch",
                     htp_arch_name(*built), soc.name, htp_arch_name(soc.htp_arch), soc.name);
}

const SocInfo& nearest_qnn_lowering_soc(const SocInfo& soc) {
  const SocInfo* best = nullptr;
  auto key = [&](const SocInfo& s) {
    return std::pair{std::abs(static_cast<int>(s.htp_arch) - static_cast<int>(soc.htp_arch)),
                     std::abs(static_cast<int>(s.vtcm_mb) - static_cast<int>(soc.vtcm_mb))};
  };
  for (const SocInfo& s : soc_table()) {
    if (qnn_lowering_refusal(s)) continue;
    if (!best || key(s) < key(*best)) best = &s;  // strict: the first in table order wins a tie
  }
  return *best;  // the table holds SoCs QNN builds (SM8650 among them)
}

std::string_view qnn_binary_soc_name(const SocInfo& soc) {
  if (soc.chipset == Chipset::QCM6490) return "QCS6490";
  return soc.name;
}

bool qnn_elementwise_needs_one_type(const SocInfo& soc) {
  switch (soc.chipset) {
    case Chipset::QCM6490:
    case Chipset::SSG2115P:
    case Chipset::SSG2125P:
    case Chipset::SXR1230P:
    case Chipset::SAR2230P:
    case Chipset::SW6100: return true;
    default: return false;
  }
}

}  // namespace genai::target
