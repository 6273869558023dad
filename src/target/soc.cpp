#include "target/soc.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.h"

namespace genai::target {
namespace {

using C = Chipset;
using A = HtpArch;
constexpr auto kNoLpai = std::nullopt;

const std::array<SocInfo, 20> kSocTable = {{
    {"SA8295", C::SA8295, A::V68, 8, kNoLpai},
    {"SA8797", C::SA8797, A::V81, 16, kNoLpai},
    {"SM8350", C::SM8350, A::V68, 4, kNoLpai},
    {"SM8450", C::SM8450, A::V69, 8, kNoLpai},
    {"SM8475", C::SM8475, A::V69, 8, kNoLpai},
    {"SM8550", C::SM8550, A::V73, 8, kNoLpai},
    {"SA8255", C::SA8255, A::V73, 8, kNoLpai},
    {"SM8650", C::SM8650, A::V75, 8, kNoLpai},
    {"SM8750", C::SM8750, A::V79, 8, kNoLpai},
    {"SM8850", C::SM8850, A::V81, 8, LpaiVersion::V6},
    {"SSG2115P", C::SSG2115P, A::V73, 2, kNoLpai},
    {"SSG2125P", C::SSG2125P, A::V73, 2, kNoLpai},
    {"SXR1230P", C::SXR1230P, A::V73, 2, kNoLpai},
    {"SXR2230P", C::SXR2230P, A::V69, 8, kNoLpai},
    {"SXR2330P", C::SXR2330P, A::V79, 8, kNoLpai},
    {"QCS9100", C::QCS9100, A::V73, 8, kNoLpai},
    {"SAR2230P", C::SAR2230P, A::V81, 4, LpaiVersion::V6},
    {"SW6100", C::SW6100, A::V81, 4, kNoLpai},
    {"QCM6490", C::QCM6490, A::V68, 2, kNoLpai},
    {"SM8845", C::SM8845, A::V81, 8, kNoLpai},
}};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

}  // namespace

std::span<const SocInfo> soc_table() { return kSocTable; }

std::string valid_soc_names() {
  std::string out;
  for (const auto& s : kSocTable) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

const SocInfo& resolve_soc(std::string_view name) {
  for (const auto& s : kSocTable) {
    if (iequals(s.name, name)) return s;
  }
  throw_input_error("unknown SoC model '{}' for --soc_model; valid choices: {}", name, valid_soc_names());
}

Chipset resolve_soc_model(std::string_view name) { return resolve_soc(name).chipset; }

const SocInfo& soc_info(Chipset chipset) {
  for (const auto& s : kSocTable) {
    if (s.chipset == chipset) return s;
  }
  throw_input_error("unknown QNN chipset id {} (soc_model); valid choices: {}", static_cast<int>(chipset),
                    valid_soc_names());
}

std::string htp_arch_name(HtpArch arch) {
  if (arch == HtpArch::NONE) return "none";
  const char* n = qnn_delegate::EnumNameHtpArch(arch);
  return (n && *n) ? n : fmt::format("unknown({})", static_cast<int>(arch));
}

std::string lpai_version_name(LpaiVersion version) {
  if (version == LpaiVersion::NONE) return "none";
  const char* n = qnn_delegate::EnumNameLpaiHardwareVersion(version);
  return (n && *n) ? n : fmt::format("unknown({})", static_cast<int>(version));
}

}  // namespace genai::target
