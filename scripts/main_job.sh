#!/usr/bin/env bash
# README command 1: install, build, and run the main job on the embedded default model.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install_deps.sh
model="$(bash scripts/fetch_default_model.sh)"
[[ -s "$model" ]] || { echo "default model missing" >&2; exit 1; }
bash scripts/build.sh "$root/build"
./build/genai run --checkpoint "$model" \
  --prompt "What is the capital of France? Answer in one sentence." \
  --max_new_tokens 48 --temperature 0
