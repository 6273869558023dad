// genai sweep's Ray driver (ray_driver.py), compiled into the binary by a CMake step
// (cmake/EmbedText.cmake) and run as `python3 -c <source> SPEC`: no file to install or find.
#pragma once

#include <string_view>

namespace genai::sweep {

std::string_view ray_driver_source();

}  // namespace genai::sweep
