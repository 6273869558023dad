#!/usr/bin/env bash
# Builds the aarch64 tree (scripts/build_aarch64.sh) and runs its tests under qemu-aarch64-static,
# once per Arm vector unit the kernels dispatch to:
#   neon     a Cortex-A72 (no SVE): NEON
#   sve128   qemu's `max` CPU at 128-bit vectors: SVE2_128, and SVE2, SVE, NEON forced in turn
#   sve256   qemu's `max` CPU at 256-bit vectors: SVE_256, and SVE2, SVE, NEON forced in turn
#
#   scripts/test_aarch64.sh [--all] [build-dir]
# Without --all (CI's default run): the kernel suite on all three CPUs, each kernel on each target
# against the scalar build and the QDQ reference; only that suite and the layers it links (quant
# and below) are built. With --all (the long sweep): the whole tree, every suite on every CPU.
# Whole programs on the three CPUs (this tree's genai, the same tokens as x86 on each) are the
# release tree's long Aarch64Runner test. (Graph parity, the backends and the runtime's
# in-process tests, and the whole-program runs, left CI's run for the sweep: building the layers
# above quant and genai for aarch64 and running them under qemu took about six of CI's minutes,
# for the kernels' arithmetic that the kernel suite compares on each CPU.) Each CPU's kernel run
# fails unless the targets named for it ran (GENAI_EXPECT_SIMD_TARGETS,
# tests/kernels/kernel_test_util.h).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
all=0
if [[ "${1:-}" == "--all" ]]; then all=1; shift; fi
dir="${1:-$root/build-aarch64}"

# The lock: Aarch64Runner's long test builds genai in the same tree.
mkdir -p "$dir"
if (( all )); then
  flock "$dir/.build.lock" bash "$root/scripts/build_aarch64.sh" "$dir"
else
  flock "$dir/.build.lock" bash "$root/scripts/build_aarch64.sh" "$dir" -- test_kernels
fi

# name | QEMU_CPU | the Highway targets its kernel tests must run
cpus=(
  "neon|cortex-a72|NEON"
  "sve128|max,sve-default-vector-length=16|SVE2_128,SVE2,SVE,NEON"
  "sve256|max,sve-default-vector-length=32|SVE_256,SVE2,SVE,NEON"
)
# CI's run selects the kernel suite; --all runs every suite.
selection=()
(( all )) || selection=(-L '^kernels$')
status=0
for entry in "${cpus[@]}"; do
  IFS='|' read -r name cpu expect <<<"$entry"
  echo "== aarch64 tests on $name (QEMU_CPU=$cpu)"
  start=$SECONDS
  if ! QEMU_CPU="$cpu" GENAI_EXPECT_SIMD_TARGETS="$expect" \
      ctest --test-dir "$dir" "${selection[@]}" -LE "long|nosan" --output-on-failure -j2; then
    status=1
  fi
  echo "== $name: $((SECONDS - start)) s"
done
exit $status
