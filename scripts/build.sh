#!/usr/bin/env bash
# Configures and builds one tree:
#   scripts/build.sh <build-dir> [extra cmake args...] [-- target...]
# Without targets everything is built (the tests included); `-- genai` builds the CLI only.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/build}"; shift || true
cmake_args=() targets=()
while (($#)); do
  if [[ "$1" == "--" ]]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >/dev/null
ninja -C "$dir" -j"${GENAI_JOBS:-2}" "${targets[@]}"
