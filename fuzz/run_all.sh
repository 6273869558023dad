#!/usr/bin/env bash
# Runs every fuzz_<name> binary of a fuzz build for a bounded time, seeded with fuzz/corpus/<name>
# (committed seeds: valid files), fuzz/regressions/<name> (inputs that once failed) and
# fuzz/<name>.seeds (one directory per line, relative to the repo root; may point outside it, e.g.
# ../shared/fixtures/pte). Time per target: fuzz/<name>.seconds or 20.
# A fuzzer is single-threaded: GENAI_FUZZ_JOBS targets (default 2, the cores of a CI machine) run
# at once; each target's result is printed in name order once all are done.
# A tree's fuzz/libfuzzer.args (written by fuzz/CMakeLists.txt) adds its flags to every run: the
# sanitizer tree's GCC-built targets need -use_value_profile=1 (comparison tracing is their only
# coverage).
# Long mode (the `long` sweeps): `run_all.sh BUILD --runs N [name...]` runs each target (or only
# the named ones) for N inputs instead (GENAI_FUZZ_RUNS=N does the same), e.g. --runs 1000000.
set -euo pipefail
build="$(cd "$1" && pwd)"; shift
runs="${GENAI_FUZZ_RUNS:-}"
if [[ "${1:-}" == "--runs" ]]; then runs="$2"; shift 2; fi
only=("$@")
max_jobs="${GENAI_FUZZ_JOBS:-2}"
root="$(cd "$(dirname "$0")/.." && pwd)"
# UBSan reports abort, so that libFuzzer's signal handler saves the input (a plain UBSan exit does
# not); the caller's other options stay.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}abort_on_error=1"
tree_args=()
if [[ -f "$build/fuzz/libfuzzer.args" ]]; then read -r -a tree_args < "$build/fuzz/libfuzzer.args"; fi
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

# fuzz_one NAME BIN: one target in its own work dir; its report goes to $logs/NAME.{log,status}.
fuzz_one() {
  local name="$1" bin="$2" secs=20 limit work d start
  [[ -f "$root/fuzz/$name.seconds" ]] && secs="$(cat "$root/fuzz/$name.seconds")"
  local seeds=()
  [[ -d "$root/fuzz/corpus/$name" ]] && seeds+=("$root/fuzz/corpus/$name")
  [[ -d "$root/fuzz/regressions/$name" ]] && seeds+=("$root/fuzz/regressions/$name")
  if [[ -f "$root/fuzz/$name.seeds" ]]; then
    while read -r d; do [[ -n "$d" && -d "$root/$d" ]] && seeds+=("$root/$d"); done < "$root/fuzz/$name.seeds"
  fi
  if [[ -n "$runs" ]]; then limit="-runs=$runs"; echo "fuzz_$name: $runs runs, seeds: ${seeds[*]:-none}" > "$logs/$name.head"
  else limit="-max_total_time=$secs"; echo "fuzz_$name: ${secs}s, seeds: ${seeds[*]:-none}" > "$logs/$name.head"; fi
  work="$(mktemp -d)"
  start=$SECONDS
  if (cd "$work" && "$bin" "$limit" "${tree_args[@]}" -rss_limit_mb=4096 -print_final_stats=1 "$work" "${seeds[@]}" > "$logs/$name.log" 2>&1); then
    echo "$(grep -E "^Done [0-9]+ runs" "$logs/$name.log" || echo "no 'Done' line") (wall $((SECONDS - start)) s)" > "$logs/$name.result"
    echo 0 > "$logs/$name.status"
  else
    # The inputs libFuzzer saved (crash-*, leak-*, timeout-*, oom-*) outlive the work dir: a
    # failing input goes into fuzz/regressions/<name>/ with its fix.
    local kept="$build/fuzz/failures/$name"
    mkdir -p "$kept"
    find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
      -exec cp {} "$kept/" \;
    { echo "fuzz_$name FAILED (failing inputs kept in $kept)"; tail -50 "$logs/$name.log"; } > "$logs/$name.result"
    echo 1 > "$logs/$name.status"
  fi
  rm -rf "$work"
}

names=()
for bin in "$build"/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  name="$(basename "$bin")"; name="${name#fuzz_}"
  if (( ${#only[@]} )) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  names+=("$name")
  while (( $(jobs -rp | wc -l) >= max_jobs )); do wait -n || true; done
  fuzz_one "$name" "$bin" &
done
wait
if (( ${#names[@]} == 0 )); then
  echo "run_all.sh: no fuzz_<name> target${only[*]:+ named ${only[*]}} in $build/fuzz" >&2
  exit 1
fi

status=0
for name in "${names[@]}"; do
  cat "$logs/$name.head" "$logs/$name.result"
  [[ "$(cat "$logs/$name.status" 2>/dev/null)" == 0 ]] || status=1
done
exit $status
