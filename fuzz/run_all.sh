#!/usr/bin/env bash
# Runs every fuzz_<name> binary of a fuzz build for a bounded time, seeded with fuzz/corpus/<name>
# (committed seeds) and fuzz/<name>.seeds (one directory per line, relative to the repo root; may
# point outside it, e.g. ../shared/fixtures/pte). Time per target: fuzz/<name>.seconds or 20.
# Long mode (the `long` sweeps): `run_all.sh BUILD --runs N [name...]` runs each target (or only
# the named ones) for N inputs instead (GENAI_FUZZ_RUNS=N does the same), e.g. --runs 1000000.
set -euo pipefail
build="$(cd "$1" && pwd)"; shift
runs="${GENAI_FUZZ_RUNS:-}"
if [[ "${1:-}" == "--runs" ]]; then runs="$2"; shift 2; fi
only=("$@")
root="$(cd "$(dirname "$0")/.." && pwd)"
status=0
for bin in "$build"/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  name="$(basename "$bin")"; name="${name#fuzz_}"
  if (( ${#only[@]} )) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  secs=20; [[ -f "$root/fuzz/$name.seconds" ]] && secs="$(cat "$root/fuzz/$name.seconds")"
  work="$(mktemp -d)"
  seeds=()
  [[ -d "$root/fuzz/corpus/$name" ]] && seeds+=("$root/fuzz/corpus/$name")
  if [[ -f "$root/fuzz/$name.seeds" ]]; then
    while read -r d; do [[ -n "$d" && -d "$root/$d" ]] && seeds+=("$root/$d"); done < "$root/fuzz/$name.seeds"
  fi
  if [[ -n "$runs" ]]; then limit=(-runs="$runs"); echo "fuzz_$name: $runs runs, seeds: ${seeds[*]:-none}"
  else limit=(-max_total_time="$secs"); echo "fuzz_$name: ${secs}s, seeds: ${seeds[*]:-none}"; fi
  start=$SECONDS
  if ! (cd "$work" && "$bin" "${limit[@]}" -rss_limit_mb=4096 -print_final_stats=1 "$work" "${seeds[@]}" > "$work/log" 2>&1); then
    echo "fuzz_$name FAILED"; tail -50 "$work/log"; status=1
  else
    echo "$(grep -E "^Done [0-9]+ runs" "$work/log" || echo "no 'Done' line") (wall $((SECONDS - start)) s)"
  fi
  rm -rf "$work"
done
exit $status
