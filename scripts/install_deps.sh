#!/usr/bin/env bash
# Installs what genai needs on Debian 12, idempotently.
#   scripts/install_deps.sh          build + run dependencies (Debian packages)
#   scripts/install_deps.sh --test   also the test-side Python references (PyPI) and fuzzing tools,
#                                    and ONNX Runtime's QNN EP for --lowering qnn (PyPI)
set -euo pipefail

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

packages=(
  build-essential cmake ninja-build pkg-config python3
  libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev libcli11-dev libfmt-dev
  libsentencepiece-dev libhwy-dev libpcre2-dev libssl-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  adb
  # genai eval's default text (Newton's Opticks, public domain): docs/quantization.md
  golang-1.19-src
)
if (( want_test )); then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if (( want_test )); then
  # ONNX Runtime's QNN EP (the QNN HTP compiler and simulator), driven by genai's QNN bridge
  # (src/backends/qnn/qnn_bridge.py) for --lowering qnn and QnnBackend programs.
  if ! python3 -c 'import importlib.metadata as m; m.version("onnx"); assert m.version("onnxruntime-qnn") == "2.7.0"' 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "onnxruntime-qnn==2.7.0" onnx
  fi
  # Test-side references only: the C++ code never imports them.
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$(dirname "$0")/../tests/python/requirements.txt"
fi
