// A few kilobytes of plain English prose, written for this project, from which the synthetic
// vocabularies learn their merges (so that synthetic models see realistic token statistics).
#pragma once

#include <string_view>

namespace genai {

std::string_view synthetic_training_text();

}  // namespace genai
