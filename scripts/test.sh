#!/usr/bin/env bash
# README command 2 (and CI): install, build, and run every test.
#  1. aarch64 cross build of the kernel suite (static), run under qemu-user on NEON, SVE2 at 128
#     bits and SVE at 256 bits (scripts/test_aarch64.sh; --all: every suite, the long sweep)
#  2. release build, full CTest suite (long sweeps excluded: ctest -L long runs them, among them
#     the same tokens from one program on x86 and on an aarch64 genai)
#  3. ASan+UBSan build, the suites of the layers that parse hostile input and hold the arithmetic
#     again (GENAI_SANITIZER_SUITES, tests/CMakeLists.txt; the release stage keeps every test), and
#     among them the libFuzzer targets, each for a short time seeded with real files (fuzz/: built
#     by GCC in this tree, guided by comparison tracing; the long campaigns with edge coverage are
#     a clang tree's, `ctest --test-dir build-fuzz -L long`)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install_deps.sh --test
GENAI_DEFAULT_MODEL="$(bash scripts/fetch_default_model.sh)"
[[ -s "$GENAI_DEFAULT_MODEL" ]] || { echo "default model missing: $GENAI_DEFAULT_MODEL" >&2; exit 1; }
export GENAI_DEFAULT_MODEL
# The upstream .pte fixtures live in ../shared beside the checkout (read-only). Tests that need a
# missing piece skip on a developer's machine and fail in CI (tests/support/test_requirements.h).
if [[ ! -d "$root/../shared/fixtures/pte" ]]; then
  if [[ -n "${CI:-}" && "${CI}" != "false" && "${CI}" != "0" ]]; then
    echo "error: ../shared/fixtures/pte not found beside the checkout; CI needs it" >&2
    exit 1
  fi
  echo "warning: ../shared/fixtures/pte not found; fixture tests will skip" >&2
fi

# Each stage's wall time, for keeping CI within its budget.
stage_start=$SECONDS
stage_done() { echo "== $1: $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

echo "== aarch64 build + tests (qemu-user)"
bash scripts/test_aarch64.sh "$root/build-aarch64"
stage_done aarch64

echo "== release build + tests"
bash scripts/build.sh "$root/build"
# Labels (cmake/GenaiLayer.cmake): "long" sweeps run only with `ctest -L long`; "nosan" tests (the
# default-model ones, minutes under the sanitizers) run in this release tree only.
ctest --test-dir "$root/build" -LE long --output-on-failure -j2
stage_done release

echo "== ASan+UBSan build + tests + fuzzers"
# -O1 and no debug information: reports name the functions of each frame (from the symbol table;
# UBSan's also the line), and a tree rebuilt with -g gives the lines; -g1 cost a sixth more time
# for the quant layer's unit.
bash scripts/build.sh "$root/build-asan" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1" -DGENAI_SANITIZE=ON -DGENAI_BUILD_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" -LE "long|nosan" --output-on-failure -j2
stage_done asan

echo "all test stages passed"
