# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DFUNCTION=<ns::name> -DHEADER=<include> -P EmbedText.cmake
# Writes a C++ source whose function FUNCTION() returns INPUT's bytes as a std::string_view, so a
# program can carry a text file (the QNN bridge's Python source) without installing it.
file(READ "${INPUT}" _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _size "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," _bytes "${_hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){32})" "\\1\n" _bytes "${_bytes}")
string(REGEX MATCH "^(.*)::([^:]+)$" _ "${FUNCTION}")
set(_ns "${CMAKE_MATCH_1}")
set(_fn "${CMAKE_MATCH_2}")
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/EmbedText.cmake; do not edit.\n#include \"${HEADER}\"\n\nnamespace ${_ns} {\nnamespace {\nconstexpr char kText[] = {\n${_bytes}\n'\\0'};\n}  // namespace\n\nstd::string_view ${_fn}() { return {kText, ${_size}}; }\n\n}  // namespace ${_ns}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
