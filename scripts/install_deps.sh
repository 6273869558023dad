#!/usr/bin/env bash
# Installs what genai needs on Debian 12, idempotently.
#   scripts/install_deps.sh          build + run dependencies (Debian packages; ONNX Runtime's QNN
#                                    EP from PyPI for --lowering qnn)
#   scripts/install_deps.sh --test   also the test-side Python references (PyPI), fuzzing tools,
#                                    and ExecuTorch's runtime in a venv of its own
#                                    ($GENAI_EXECUTORCH_VENV, default
#                                    ${XDG_CACHE_HOME:-~/.cache}/genai/venv-executorch, outside the
#                                    checkout so that a fresh clone reuses it; tests/executorch runs
#                                    our programs in it)
#   scripts/install_deps.sh --aarch64
#                                    the aarch64 cross build (scripts/build_aarch64.sh): Debian's
#                                    cross compiler, qemu-user-static, the :arm64 -dev packages, and
#                                    the source packages of the two libraries Debian ships for
#                                    arm64 only as shared objects (highway, sentencepiece)
set -euo pipefail

want_test=0 want_aarch64=0
case "${1:-}" in
  --test) want_test=1 ;;
  --aarch64) want_aarch64=1 ;;
  "") ;;
  *) echo "install_deps: unknown option '$1' (valid: --test, --aarch64)" >&2; exit 2 ;;
esac
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"

packages=(
  build-essential cmake ninja-build pkg-config python3 lld
  libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev libcli11-dev libfmt-dev
  libsentencepiece-dev libhwy-dev libpcre2-dev libssl-dev libxxhash-dev libpng-dev libturbojpeg0-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  adb
  # genai eval's default text (Newton's Opticks, public domain): docs/quantization.md
  golang-1.19-src
)
if (( want_test )); then
  packages+=(clang libclang-rt-14-dev)
fi
if (( want_aarch64 )); then
  # Multiarch: the :arm64 packages install beside the amd64 ones (all are Multi-Arch: same).
  # libsentencepiece-dev is not co-installable with its amd64 twin, and Debian's arm64 highway
  # and sentencepiece have no static archives: build_aarch64.sh builds both from their Debian
  # source packages (deb-src, added below).
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    force_update=1
  fi
  src_list=/etc/apt/sources.list.d/genai-deb-src.sources
  if ! grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ && ! grep -qs "^deb-src" /etc/apt/sources.list; then
    printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" "Suites: bookworm" "Components: main" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $SUDO tee "$src_list" >/dev/null
    force_update=1
  fi
  packages+=(g++-aarch64-linux-gnu qemu-user-static dpkg-dev
             libflatbuffers-dev:arm64 libfmt-dev:arm64 libpcre2-dev:arm64 libssl-dev:arm64 libxxhash-dev:arm64
             libpng-dev:arm64 libturbojpeg0-dev:arm64 zlib1g-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )) || [[ -n "${force_update:-}" ]]; then
  $SUDO apt-get update -qq
  if (( ${#missing[@]} )); then
    echo "install_deps: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# ONNX Runtime's QNN EP (the QNN HTP compiler and simulator), driven by genai's QNN bridge
# (src/backends/qnn/qnn_bridge.py) for --lowering qnn, the programs a stock ExecuTorch runtime
# loads: a product dependency, so the main command installs it too.
if ! python3 -c 'import importlib.metadata as m; assert m.version("onnxruntime-qnn") == "2.7.0"' 2>/dev/null; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "onnxruntime-qnn==2.7.0"
fi
# Ray, for `genai sweep --ray` (src/sweep/ray_driver.py runs in this interpreter, or in
# $GENAI_PYTHON's): a product dependency, pinned like the QNN EP. Plain `ray` (no extras) has the
# `ray start` CLI and the task API the sweep uses; no dashboard.
if ! python3 -c 'import importlib.metadata as m; assert m.version("ray") == "2.60.0"' 2>/dev/null; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "ray==2.60.0"
fi
if (( want_test )); then
  # The ONNX reference (tests/python/onnx_qdq_run.py) reads the exported models with `onnx`.
  if ! python3 -c 'import importlib.metadata as m; m.version("onnx")' 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore onnx
  fi
  # Test-side references only: the C++ code never imports them.
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$(dirname "$0")/../tests/python/requirements.txt"
  # ExecuTorch's own runtime with its QNN backend (tests/executorch, tests/python/executorch_reference.py),
  # in a venv of its own so that its pins leave the test side's packages alone. The venv sees the
  # system site-packages (torch, numpy); --no-deps keeps the wheel from pulling a torch of its own,
  # and the rest are the modules its import needs.
  # Outside the checkout, like the system's packages: its wheels are about 200 MB (five minutes
  # of a CI run on a slow day), and every clean clone used to download them again. The check below
  # reinstalls when a pin changes.
  et_venv="${GENAI_EXECUTORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/genai/venv-executorch}"
  et_pins=(executorch==1.5.1 pytorch-tokenizers torchao==0.18.0)
  et_extra=(ruamel.yaml expecttest hypothesis kgb parameterized py-cpuinfo tabulate hydra-core omegaconf)
  if ! "$et_venv/bin/python" - "${et_pins[@]}" "${et_extra[@]}" 2>/dev/null <<'PY'
import importlib.metadata as m, sys
for spec in sys.argv[1:]:
    name, _, version = spec.partition("==")
    assert not version or m.version(name) == version, spec
PY
  then
    echo "install_deps: ExecuTorch's runtime into $et_venv"
    [[ -x "$et_venv/bin/python" ]] || { mkdir -p "$(dirname "$et_venv")" && python3 -m venv --system-site-packages "$et_venv"; }
    "$et_venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${et_pins[@]}"
    "$et_venv/bin/python" -m pip install -q --disable-pip-version-check "${et_extra[@]}"
  fi
fi
