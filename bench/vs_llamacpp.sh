#!/usr/bin/env bash
# genai against llama.cpp, side by side in one run on this machine (issue 17's table).
#
# llama.cpp comes from the llama-cpp-python sdist on PyPI (its vendored tree), built Release into a
# folder outside the source tree with the CPU's own vector extensions except AMX (the CPUs this
# project lands on report AMX, but AMX code dies with SIGILL on them). Nothing of llama.cpp is
# committed. The models are random-weight `genai synth` shapes (llama.cpp's quantized from the same
# GGUF by llama-quantize: f32 up to 1B, f16 for the 3-4B shapes, whose f32 file would be 12-15 GB)
# and the default model. genai compiles each with a prefill AR of
# --pp and a context of --context tokens (default --pp + --tg: the KV size llama-bench gives its
# own runs, n_ctx = n_prompt + n_gen); its static graphs attend over that whole context at every
# call, where llama.cpp attends over the filled part only.
#
#   bash bench/vs_llamacpp.sh [--shapes "stories15m smollm2-135m default"] [--threads 2]
#                             [--pp 128] [--tg 128] [--context N] [--reps 3] [--work DIR]
#                             [--genai build/genai] [--json FILE]
# Environment: GENAI_VS_LLAMACPP_DIR (default ~/.cache/genai-vs-llamacpp) = --work.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${GENAI_VS_LLAMACPP_DIR:-$HOME/.cache/genai-vs-llamacpp}
genai=$root/build/genai
shapes="stories15m smollm2-135m default"
threads=2 pp=128 tg=128 reps=3 json_out="" context=""
llama_cpp_python_version=0.3.36

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --shapes) shapes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --pp) pp=$2; shift 2 ;;
    --tg) tg=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --context) context=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --genai) genai=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "vs_llamacpp.sh: unknown option '$1' (valid: --shapes --threads --pp --tg --context --reps --work --genai --json)" >&2; exit 2 ;;
  esac
done
for s in $shapes; do
  case $s in stories15m|smollm2-135m|llama3.2-1b|llama3.2-3b|phi-4-mini|default) ;;
    *) echo "vs_llamacpp.sh: --shapes: unknown shape '$s' (valid: stories15m smollm2-135m llama3.2-1b llama3.2-3b phi-4-mini default)" >&2; exit 2 ;;
  esac
done
context=${context:-$((pp + tg))}
[[ $context =~ ^[0-9]+$ && $context -ge $((pp + tg)) ]] ||
  { echo "vs_llamacpp.sh: --context must be a whole number of at least --pp + --tg ($((pp + tg))), got '$context'" >&2; exit 2; }
[[ -x $genai ]] || { echo "vs_llamacpp.sh: $genai not built (bash scripts/build.sh build)" >&2; exit 2; }
case $work in "$root"|"$root"/*) echo "vs_llamacpp.sh: --work must lie outside the source tree" >&2; exit 2 ;; esac
mkdir -p "$work"
log() { echo "vs_llamacpp: $*" >&2; }

# ---- llama.cpp -----------------------------------------------------------------------------
llama_src=$work/llama-cpp-python-$llama_cpp_python_version/vendor/llama.cpp
llama_build=$work/llama.cpp-build
if [[ ! -x $llama_build/bin/llama-bench || ! -x $llama_build/bin/llama-quantize ]]; then
  if [[ ! -d $llama_src ]]; then
    log "downloading the llama-cpp-python $llama_cpp_python_version sdist from PyPI"
    python3 -m pip download --quiet --no-deps --no-binary :all: \
      "llama-cpp-python==$llama_cpp_python_version" -d "$work/sdist"
    tar xzf "$work/sdist/llama_cpp_python-$llama_cpp_python_version.tar.gz" -C "$work"
    mv "$work/llama_cpp_python-$llama_cpp_python_version" "$work/llama-cpp-python-$llama_cpp_python_version"
  fi
  # The CPU's own extensions, named one by one: GGML_NATIVE would pass -march=native, which turns
  # AMX on where the CPU reports it.
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  has() { [[ " $flags " == *" $1 "* ]] && echo ON || echo OFF; }
  log "building llama.cpp (Release, AMX off) into $llama_build"
  cmake -S "$llama_src" -B "$llama_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGGML_NATIVE=OFF -DGGML_AVX=$(has avx) -DGGML_AVX2=$(has avx2) -DGGML_FMA=$(has fma) \
    -DGGML_F16C=$(has f16c) -DGGML_BMI2=$(has bmi2) -DGGML_AVX_VNNI=$(has avx_vnni) \
    -DGGML_AVX512=$(has avx512f) -DGGML_AVX512_VBMI=$(has avx512vbmi) \
    -DGGML_AVX512_VNNI=$(has avx512_vnni) -DGGML_AVX512_BF16=$(has avx512_bf16) \
    -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_OPENMP=ON \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DBUILD_SHARED_LIBS=OFF >"$work/llama-configure.log"
  cmake --build "$llama_build" -j2 --target llama-bench llama-quantize >"$work/llama-build.log"
fi
llama_bench=$llama_build/bin/llama-bench
llama_quantize=$llama_build/bin/llama-quantize

# ---- models --------------------------------------------------------------------------------
models=$work/models
genai_id=$(sha256sum "$genai" | cut -c1-12)  # compiled programs are kept per genai build
mkdir -p "$models"
default_model=$root/models/SmolLM2-135M-Instruct.Q4_1.gguf
source_gguf() {  # shape -> the f32 (or shipped) GGUF both tools start from
  if [[ $1 == default ]]; then
    [[ -f $default_model ]] || bash "$root/scripts/fetch_default_model.sh" >&2
    echo "$default_model"
  else
    local type=f32
    case $1 in llama3.2-3b|phi-4-mini) type=f16 ;; esac
    local f=$models/$1.$type.gguf
    [[ -f $f ]] || "$genai" synth --shape "$1" --format gguf --weight_type "$type" --seed 1 --out "$f" >"$work/synth.log" 2>&1
    echo "$f"
  fi
}
llama_model() {  # shape type(Q8_0|Q4_0|shipped)
  local src; src=$(source_gguf "$1")
  if [[ $2 == shipped ]]; then echo "$src"; return; fi
  local out=$models/$1.$2.gguf
  if [[ ! -f $out ]]; then
    local allow=(); [[ $1 == default ]] && allow=(--allow-requantize)
    "$llama_quantize" "${allow[@]}" "$src" "$out" "$2" >"$work/quantize.log" 2>&1
  fi
  echo "$out"
}
genai_artifact() {  # shape recipe
  local src; src=$(source_gguf "$1")
  local out=$models/$1.$2.ar$pp.cl$context.$genai_id.genai
  if [[ ! -f $out/manifest.json ]]; then
    log "compiling $1 ($2)"
    "$genai" compile --checkpoint "$src" --soc_model SM8650 --backend htp --model_mode hybrid \
      --max_seq_len "$context" --prefill_ar_len "$pp" --quant_recipe "$2" --enable_x86_64 \
      -a "$out" --json >"$work/compile.log" 2>&1
  fi
  echo "$out"
}

# ---- runs ----------------------------------------------------------------------------------
genai_run() {  # artifact -> "pp tg ttft_ms peak_rss_mb"
  "$genai" bench -a "$1" --pp "$pp" --tg "$tg" --reps "$reps" --threads "$threads" --json 2>>"$work/bench.log" |
    python3 -c '
import json,sys
d=json.load(sys.stdin); t={r["test"][:2]: r["mean"] for r in d["results"]}
print(t.get("pp",0.0), t.get("tg",0.0), d["ttft_ms"], d["peak_rss_mb"])'
}
llama_run() {  # gguf -> "pp tg" tokens/s
  "$llama_bench" -m "$1" -t "$threads" -p "$pp" -n "$tg" -r "$reps" -o json 2>/dev/null |
    python3 -c '
import json,sys
rows=json.load(sys.stdin); pp=tg=0.0
for r in rows:
    if r["n_prompt"]>0: pp=r["avg_ts"]
    if r["n_gen"]>0: tg=r["avg_ts"]
print(pp, tg)'
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
results=$work/results.tsv
: >"$results"
for s in $shapes; do
  for pair in "16a8w Q8_0" "16a4w Q4_0"; do
    read -r recipe qtype <<<"$pair"
    [[ $s == default && $qtype == Q4_0 ]] && qtype=shipped
    art=$(genai_artifact "$s" "$recipe"); lm=$(llama_model "$s" "$qtype")
    log "$s: genai $recipe, llama.cpp $qtype"
    read -r gpp gtg gttft grss <<<"$(genai_run "$art")"
    read -r lpp ltg <<<"$(llama_run "$lm")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$recipe" "$qtype" "$gpp" "$gtg" "$gttft" "$grss" "$lpp" "$ltg" >>"$results"
  done
done

python3 - "$results" "$cpu" "$threads" "$pp" "$tg" "$context" "${json_out:-}" <<'EOF'
import json, sys
path, cpu, threads, pp, tg, context, json_out = sys.argv[1:8]
rows = []
for line in open(path):
    s, recipe, qtype, gpp, gtg, gttft, grss, lpp, ltg = line.rstrip("\n").split("\t")
    rows.append(dict(shape=s, genai_recipe=recipe, llamacpp_type=qtype if qtype != "shipped" else "Q4_1 (as shipped)",
                     genai_pp=float(gpp), genai_tg=float(gtg), genai_ttft_ms=float(gttft), genai_peak_rss_mb=float(grss),
                     llamacpp_pp=float(lpp), llamacpp_tg=float(ltg), llamacpp_pp_ms=int(pp) * 1000.0 / float(lpp)))
print(f"CPU: {cpu}; {threads} threads; pp{pp} / tg{tg}, tokens/s; genai's context {context} tokens\n")
print("| shape | genai | llama.cpp | genai pp / tg | llama.cpp pp / tg | ratio pp / tg | genai TTFT / llama.cpp pp time (ms) | genai peak RSS (MiB) |")
print("|---|---|---|--:|--:|--:|--:|--:|")
for r in rows:
    print(f"| {r['shape']} | {r['genai_recipe']} | {r['llamacpp_type']} | {r['genai_pp']:.0f} / {r['genai_tg']:.0f} | "
          f"{r['llamacpp_pp']:.0f} / {r['llamacpp_tg']:.0f} | "
          f"{r['genai_pp']/r['llamacpp_pp']:.2f}x / {r['genai_tg']/r['llamacpp_tg']:.2f}x | "
          f"{r['genai_ttft_ms']:.1f} / {r['llamacpp_pp_ms']:.1f} | {r['genai_peak_rss_mb']:.0f} |")
if json_out:
    json.dump(dict(cpu=cpu, threads=int(threads), pp=int(pp), tg=int(tg), context=int(context), rows=rows),
              open(json_out, "w"), indent=1)
EOF
