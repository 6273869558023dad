// The QNN bridge's Python program (qnn_bridge.py), compiled into the binary by a CMake step
// (cmake/EmbedText.cmake) and run as `python3 -c <source>`: no file to install or find.
#pragma once

#include <string_view>

namespace genai::backends::qnn {

std::string_view qnn_bridge_source();

}  // namespace genai::backends::qnn
