// `genai targets`: the SoCs and backend types compilation can target.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "target/backend_type.h"
#include "target/soc.h"

namespace genai::cli {
namespace {

int list_targets(bool json_output) {
  if (json_output) {
    nlohmann::json socs = nlohmann::json::array();
    for (const auto& s : target::soc_table()) {
      socs.push_back({{"name", std::string(s.name)},
                      {"chipset_id", static_cast<int>(s.chipset)},
                      {"htp_arch", target::htp_arch_name(s.htp_arch)},
                      {"vtcm_mb", s.vtcm_mb},
                      {"lpai", s.lpai ? nlohmann::json(target::lpai_version_name(*s.lpai)) : nlohmann::json(nullptr)}});
    }
    nlohmann::json out = {{"socs", socs}, {"backend_types", target::backend_type_names()}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::string text = fmt::format("{:<10} {:>10} {:>8} {:>8} {:>5}\n", "SoC", "chipset_id", "HTP", "VTCM_MB", "LPAI");
  for (const auto& s : target::soc_table()) {
    text += fmt::format("{:<10} {:>10} {:>8} {:>8} {:>5}\n", s.name, static_cast<int>(s.chipset),
                        target::htp_arch_name(s.htp_arch), s.vtcm_mb,
                        s.lpai ? target::lpai_version_name(*s.lpai) : "-");
  }
  text += "\nbackend types:";
  for (const auto& b : target::backend_type_names()) text += " " + b;
  std::printf("%s\n", text.c_str());
  return 0;
}

const CommandRegistration kTargets{
    "targets", "List the Qualcomm SoCs (chipset, HTP arch, VTCM, LPAI) and QNN backend types",
    [](CLI::App& sub) -> CommandAction {
      auto json_output = std::make_shared<bool>(false);
      sub.add_flag("--json", *json_output, "Print one JSON object on stdout");
      return [json_output] { return list_targets(*json_output); };
    }};

}  // namespace
}  // namespace genai::cli
