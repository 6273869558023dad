#!/usr/bin/env bash
# Configures and builds one tree:
#   scripts/build.sh <build-dir> [extra cmake args...] [-- target...]
# Without targets everything is built (the tests included); `-- genai` builds the CLI only.
# These one-shot builds (the README commands, CI) are unity builds: sources of a target are
# compiled in batches, so the shared headers are parsed and their templates optimized once per
# batch instead of once per file (about a third less CPU time). A developer tree configured with
# plain cmake compiles file by file, for quick incremental builds and to catch a missing #include;
# -DCMAKE_UNITY_BUILD=OFF here does the same.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/build}"; shift || true
cmake_args=() targets=()
while (($#)); do
  if [[ "$1" == "--" ]]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON "${cmake_args[@]}" >/dev/null
ninja -C "$dir" -j"${GENAI_JOBS:-2}" "${targets[@]}"
