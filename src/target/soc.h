// The Qualcomm SoCs we can target: chipset id, HTP architecture, VTCM size and LPAI hardware,
// as upstream's _soc_info_table lists them. The enums come from schema/qnn_options.fbs so the
// ids written into compile specs cannot drift from the table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "schema/qnn_options_generated.h"

namespace genai::target {

using Chipset = qnn_delegate::QcomChipset;
using HtpArch = qnn_delegate::HtpArch;
using LpaiVersion = qnn_delegate::LpaiHardwareVersion;

struct SocInfo {
  std::string_view name;  // upstream spelling, e.g. "SM8650"
  Chipset chipset;
  HtpArch htp_arch;
  uint32_t vtcm_mb;
  std::optional<LpaiVersion> lpai;  // only SoCs with an LPAI block
};

// Every known SoC, in upstream table order (UNKNOWN_SM has no entry).
std::span<const SocInfo> soc_table();

// Name -> chipset, any letter case ("sm8650" works). InputError listing the valid names otherwise.
Chipset resolve_soc_model(std::string_view name);
const SocInfo& resolve_soc(std::string_view name);
// Table entry of a chipset; InputError for UNKNOWN_SM or an id not in the table.
const SocInfo& soc_info(Chipset chipset);

// "SA8295, SA8797, ..." for error messages and `genai targets`.
std::string valid_soc_names();

// "V75", "none"; "V6", "none".
std::string htp_arch_name(HtpArch arch);
std::string lpai_version_name(LpaiVersion version);

}  // namespace genai::target
