#!/usr/bin/env bash
# Lookahead decoding against plain decoding, side by side in one run (issue 19's benchmark).
#
# Compiles the model twice for the same target and context: a hybrid program (kv_forward AR-1,
# plain decoding) and a lookahead program (kv_forward of next_pow2((window + gcap) * (ngram - 1))
# rows). Each prompt then runs greedily on both, alternating, --reps times; the decode tok/s are
# the medians, and the tokens must be identical (lookahead decoding never changes greedy output).
# Prompts: a repetitive one (the answer repeats what the prompt lists: n-grams the pool verifies)
# and a free one.
#
#   bash bench/lookahead.sh [--checkpoint FILE] [--ngram 5] [--window 1] [--gcap 1]
#                           [--tokens 128] [--reps 3] [--threads 2] [--work DIR] [--genai build/genai]
# Default checkpoint: the embedded default model (models/, scripts/fetch_default_model.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
genai=$root/build/genai
checkpoint=$root/models/SmolLM2-135M-Instruct.Q4_1.gguf
ngram=5 window=1 gcap=1 tokens=128 reps=3 threads=2 work=""
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --checkpoint) checkpoint=$2; shift 2 ;;
    --ngram) ngram=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --gcap) gcap=$2; shift 2 ;;
    --tokens) tokens=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --genai) genai=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "lookahead.sh: unknown option '$1' (valid: --checkpoint --ngram --window --gcap --tokens --reps --threads --work --genai)" >&2; exit 2 ;;
  esac
done
[[ -x $genai ]] || { echo "lookahead.sh: $genai not built (bash scripts/build.sh build)" >&2; exit 2; }
[[ -e $checkpoint ]] || { echo "lookahead.sh: checkpoint $checkpoint not found" >&2; exit 2; }
if [[ -z $work ]]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

compile() {  # dir, extra options...
  local dir=$1; shift
  "$genai" compile --checkpoint "$checkpoint" --soc_model SM8750 --enable_x86_64 --max_seq_len 512 \
    --prefill_ar_len 32 -a "$dir" "$@" >/dev/null
}
echo "compiling plain (hybrid) and lookahead (ngram $ngram, window $window, gcap $gcap) programs..." >&2
compile "$work/plain" --model_mode hybrid
compile "$work/lookahead" --model_mode lookahead --ngram "$ngram" --window "$window" --gcap "$gcap"

declare -A prompts=(
  [repetitive]="Repeat this list exactly, three times: red, green, blue, yellow, purple, orange, black, white, red, green, blue, yellow, purple, orange, black, white."
  [free]="Write a short story about a dragon who learns to paint."
)
printf '%-11s %12s %14s %8s %22s\n' prompt "plain tok/s" "lookahead tok/s" ratio "trees/steps, tok/tree"
for name in repetitive free; do
  plain_rates=() la_rates=() per_call=""
  for ((r = 0; r < reps; r++)); do
    for kind in plain lookahead; do
      out=$("$genai" run -a "$work/$kind" --prompt "${prompts[$name]}" --temperature 0 \
        --max_new_tokens "$tokens" --threads "$threads" --json 2>/dev/null)
      rate=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["decode_tok_s"])' <<<"$out")
      toks=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])' <<<"$out")
      if [[ $kind == plain ]]; then plain_rates+=("$rate"); plain_tokens=$toks; else
        la_rates+=("$rate"); la_tokens=$toks
        per_call=$(python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; t=s["lookahead_calls"]; print("%d/%d, %.2f" % (t, s["decode_calls"], (t + s["lookahead_accepted"]) / max(1, t)))' <<<"$out")
      fi
    done
    [[ $plain_tokens == "$la_tokens" ]] || { echo "lookahead.sh: $name: tokens differ from plain decoding" >&2; exit 1; }
  done
  median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  p=$(median "${plain_rates[@]}") l=$(median "${la_rates[@]}")
  printf '%-11s %12.1f %14.1f %7.2fx %22s\n' "$name" "$p" "$l" "$(python3 -c "print($l/$p)")" "$per_call"
done
echo "($(lscpu | sed -n 's/^Model name: *//p'), $threads threads, $tokens tokens, median of $reps)"
