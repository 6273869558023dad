#!/usr/bin/env bash
# Builds genai and its test binaries for aarch64 Linux on this x86 machine:
#   scripts/build_aarch64.sh [build-dir] [extra cmake args...] [-- target...]
# (default build-dir: build-aarch64; without targets, everything). Every executable is linked
# statically, so the same `genai` runs on a phone (`genai run --device`, which pushes
# build-aarch64/genai by default) and under qemu-aarch64-static here (scripts/test_aarch64.sh).
#
# Debian ships highway, sentencepiece and fmt for arm64 as shared objects only: they are built here
# as static archives from their Debian source packages (the same versions as the x86 build's),
# once per machine, into ${XDG_CACHE_HOME:-~/.cache}/genai/aarch64-deps/<key> (the key: the
# installed versions of the three packages, the toolchain file and this script), so that a clean
# clone reuses them (sentencepiece alone took 52 s of a CI run); GENAI_AARCH64_DEPS_CACHE moves
# that folder. (fmt's header-only mode would do without its
# archive, but then every unity batch compiles fmt's formatting core again: a fifth more time
# for the options unit, measured without precompiled headers.)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/build-aarch64}"; shift || true
[[ "$dir" = /* ]] || dir="$PWD/$dir"
cmake_args=() targets=()
while (($#)); do
  if [[ "$1" == "--" ]]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
jobs="${GENAI_JOBS:-2}"
bash "$root/scripts/install_deps.sh" --aarch64

toolchain="$root/cmake/toolchains/aarch64-linux-gnu.cmake"
deps_key="$( { dpkg-query -W -f='${Package}=${Version}\n' libhwy-dev libfmt-dev libsentencepiece-dev; \
               cat "$toolchain" "$0"; } | sha256sum | cut -c1-16)"
deps="${GENAI_AARCH64_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/genai/aarch64-deps}/$deps_key"
export GENAI_AARCH64_DEPS="$deps"
# One build of the archives at a time (two trees, or CI beside a developer's build).
mkdir -p "$deps"
exec 9>"$deps/.lock"
flock 9

# One Debian source package, unpacked (with Debian's patches) into $deps/src/<name>-<version>.
unpack_source() {  # <source package> -> prints the unpacked folder
  local pkg="$1" out
  mkdir -p "$deps/src"
  out="$(find "$deps/src" -maxdepth 1 -type d -name "$pkg-*" | head -n1)"
  if [[ -z "$out" ]]; then
    (cd "$deps/src" && apt-get source -qq "$pkg" >/dev/null 2>&1) || {
      echo "build_aarch64: apt-get source $pkg failed (is deb-src enabled? scripts/install_deps.sh --aarch64)" >&2
      exit 1
    }
    out="$(find "$deps/src" -maxdepth 1 -type d -name "$pkg-*" | head -n1)"
  fi
  echo "$out"
}

# A CMake project from its Debian source package, built and installed into $deps unless its
# archive is there: static_dep <archive> <source package> [cmake args...]
static_dep() {
  local archive="$1" pkg="$2" src; shift 2
  [[ -f "$deps/lib/$archive" ]] && return 0
  echo "== $pkg (static, aarch64)"
  src="$(unpack_source "$pkg")"
  cmake -S "$src" -B "$deps/build/$pkg" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$deps" -DBUILD_SHARED_LIBS=OFF "$@" >/dev/null
  ninja -C "$deps/build/$pkg" -j"$jobs" install >/dev/null
}
static_dep libhwy.a highway -DHWY_ENABLE_CONTRIB=OFF -DHWY_ENABLE_EXAMPLES=OFF -DHWY_ENABLE_TESTS=OFF -DBUILD_TESTING=OFF
static_dep libfmt.a fmtlib -DCMAKE_INSTALL_LIBDIR=lib -DFMT_TEST=OFF -DFMT_DOC=OFF -DFMT_INSTALL=ON

if [[ ! -f "$deps/lib/libsentencepiece.a" ]]; then
  echo "== sentencepiece (static, aarch64)"
  src="$(unpack_source sentencepiece)"
  # Debian's packaging drops the upstream static archive (one patch): undone here. The bundled
  # protobuf-lite goes into the archive, so that it needs nothing else; only the library is built.
  if [[ ! -f "$src/.genai-static" ]]; then
    patch -d "$src" -R -p1 -s <"$src/debian/patches/disable-static-library.patch"
    touch "$src/.genai-static"
  fi
  cmake -S "$src" -B "$deps/build/sentencepiece" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DSPM_USE_BUILTIN_PROTOBUF=ON \
    -DSPM_ENABLE_TCMALLOC=OFF -DSPM_BUILD_TEST=OFF >/dev/null
  ninja -C "$deps/build/sentencepiece" -j"$jobs" sentencepiece-static >/dev/null
  mkdir -p "$deps/include" "$deps/lib/pkgconfig"
  cp "$src/src/sentencepiece_processor.h" "$deps/include/"
  cp "$deps/build/sentencepiece/src/libsentencepiece.a" "$deps/lib/libsentencepiece.a.part"
  printf '%s\n' "prefix=$deps" 'Name: sentencepiece' 'Description: sentencepiece (static, aarch64)' \
    'Version: 0.1.97' 'Cflags: -I${prefix}/include' 'Libs: -L${prefix}/lib -lsentencepiece' \
    'Libs.private: -lpthread' >"$deps/lib/pkgconfig/sentencepiece.pc"
  mv "$deps/lib/libsentencepiece.a.part" "$deps/lib/libsentencepiece.a"
fi

exec 9>&-

echo "== genai (static, aarch64)"
# No benchmarks: under qemu they would measure the emulator.
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DGENAI_AARCH64_DEPS="$deps" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DGENAI_STATIC=ON -DGENAI_BUILD_BENCH=OFF \
  "${cmake_args[@]}" >/dev/null
ninja -C "$dir" -j"$jobs" "${targets[@]}"
