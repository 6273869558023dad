#!/usr/bin/env bash
# README command 1: install, build, and run the whole pipeline on the embedded default model
# (SmolLM2-135M-Instruct, GGUF Q4_1): prepare -> quantize -> compile to .pte for the HTP of a
# Snapdragon 8 Elite (SM8750) -> run the compiled program on the host runtime that emulates the
# target (x86 emulation). Prints the answer, then the summary (stage times, artifacts, planned
# memory, SQNR against float, tokens/s).
#
# Recipe: the model's own default (16a8w, as upstream picks for smollm2) with the residual stream
# rotated offline (--rotation hadamard: a Hadamard rotation merged into the weights, no run-time
# cost). Without the rotation, 16a8w loses enough on this 135M model (massive activations in a
# few residual channels) that its greedy answer drifts; with it, logits SQNR rises by ~3.5 dB
# (docs/quantization.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install_deps.sh
model="$(bash scripts/fetch_default_model.sh)"
[[ -s "$model" ]] || { echo "default model missing" >&2; exit 1; }
bash scripts/build.sh "$root/build" -- genai  # the CLI only: the tests are not needed here
./build/genai pipeline \
  --checkpoint "$model" --decoder_model smollm2_135m \
  --soc_model SM8750 --backend htp --enable_x86_64 \
  --rotation hadamard \
  --artifact "$root/build/main_job_artifacts" \
  --prompt "What is the capital of France?" \
  --max_new_tokens 48 --temperature 0
