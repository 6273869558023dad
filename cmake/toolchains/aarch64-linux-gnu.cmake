# Cross build for aarch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu) and its
# multiarch :arm64 -dev packages (scripts/build_aarch64.sh installs both). Programs built here run
# on this x86 machine under qemu-aarch64-static: CMake runs them through
# CMAKE_CROSSCOMPILING_EMULATOR (gtest discovery at build time, ctest), and qemu reads the CPU
# model, SVE vector length included, from QEMU_CPU.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian's multiarch layout: libraries and CMake package files under /usr/lib/aarch64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
# Libraries built from Debian's source packages for a static link (GENAI_AARCH64_DEPS, set by
# scripts/build_aarch64.sh) come before the system's; pkg-config reads only arm64 .pc files.
if(DEFINED ENV{GENAI_AARCH64_DEPS})
  set(GENAI_AARCH64_DEPS "$ENV{GENAI_AARCH64_DEPS}")
endif()
if(GENAI_AARCH64_DEPS)
  list(PREPEND CMAKE_PREFIX_PATH "${GENAI_AARCH64_DEPS}")
  set(_genai_deps_pc "${GENAI_AARCH64_DEPS}/lib/pkgconfig:")
endif()
set(ENV{PKG_CONFIG_LIBDIR} "${_genai_deps_pc}/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
