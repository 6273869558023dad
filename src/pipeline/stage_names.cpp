#include "pipeline/stage_names.h"

#include <algorithm>
#include <vector>

namespace genai::pipeline {

bool is_stage_name(std::string_view name) {
  return std::find(kAllStages.begin(), kAllStages.end(), name) != kAllStages.end();
}

std::string valid_stage_names() {
  std::vector<std::string_view> sorted(kAllStages.begin(), kAllStages.end());
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (auto s : sorted) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

}  // namespace genai::pipeline
