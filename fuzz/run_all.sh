#!/usr/bin/env bash
# Runs every fuzz_<name> binary of a fuzz build for a bounded time, seeded with fuzz/corpus/<name>
# (committed seeds) and fuzz/<name>.seeds (one directory per line, relative to the repo root; may
# point outside it, e.g. ../shared/fixtures/pte). Time per target: fuzz/<name>.seconds or 20.
set -euo pipefail
build="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
status=0
for bin in "$build"/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  name="$(basename "$bin")"; name="${name#fuzz_}"
  secs=20; [[ -f "$root/fuzz/$name.seconds" ]] && secs="$(cat "$root/fuzz/$name.seconds")"
  work="$(mktemp -d)"
  seeds=()
  [[ -d "$root/fuzz/corpus/$name" ]] && seeds+=("$root/fuzz/corpus/$name")
  if [[ -f "$root/fuzz/$name.seeds" ]]; then
    while read -r d; do [[ -n "$d" && -d "$root/$d" ]] && seeds+=("$root/$d"); done < "$root/fuzz/$name.seeds"
  fi
  echo "fuzz_$name: ${secs}s, seeds: ${seeds[*]:-none}"
  if ! (cd "$work" && "$bin" -max_total_time="$secs" -rss_limit_mb=4096 -print_final_stats=1 "$work" "${seeds[@]}" > "$work/log" 2>&1); then
    echo "fuzz_$name FAILED"; tail -50 "$work/log"; status=1
  else
    grep -E "^Done [0-9]+ runs" "$work/log" || true
  fi
  rm -rf "$work"
done
exit $status
