"""Test-side reference: our .pte programs in ExecuTorch's own runtime (the executorch wheel's
QnnBackend, the runtime a phone runs them with), on QNN's x86 HTP simulator.
Usage: executorch_reference.py JOBS.json OUT.json

Runs in the venv scripts/install_deps.sh --test makes (GENAI_EXECUTORCH_PYTHON), with
LD_LIBRARY_PATH = the QNN device-config shim's folder, then onnxruntime_qnn's package folder
(tests/support/qnn_htp_device_config_shim.c says why). One process for every job: importing
torch takes seconds.

JOBS.json: {"jobs": [job, ...]}, each job:
  name            a label echoed in the result
  pte             the program
  metadata_only   true: method names, signatures and constant methods only (no backend method is
                  loaded: a device build, whose context the simulator cannot load)
  generate        {"prompt_ids": [...], "max_new_tokens": N}: a greedy generation as upstream's
                  smart-mask runner does it (below)
  execute         [{"method": M, "inputs": [raw file, ...], "out_dir": DIR}]: runs M on those
                  inputs (little-endian bytes of each input's dtype and shape) and writes each
                  output as DIR/<M>.out<i>.bin
Every other non-constant method runs once on zero inputs (a failure of one is reported in
`failed`, {method: error}, and the others still run). OUT.json: {"jobs": [result, ...]},
each result: name, ok, error (the exception text when not ok), methods, metadata
({method: {inputs: [{dtype, sizes}], outputs: [...]}}, dtype = ExecuTorch's ScalarType code; a
constant method has no inputs and its outputs' count),
constants ({method: [values]}), executed ({method: [ms per call]}), generation ({tokens,
prefill_ms, decode_ms}).

The generation (upstream examples/qualcomm/oss_scripts/llama/runner, SMART_MASK):
inputs tokens, atten_mask, input_pos, the K caches, then the V caches; outputs logits, the new
K rows, then the new V rows. Each layer keeps one logical cache of the whole context, K as
[1, heads, head_dim, CL] and V as [1, heads, CL, head_dim]; a method of AR length ar sees its
first CL - ar columns. The prompt runs through prefill_forward in chunks of its AR while a chunk
fits (the last one padded with its last token), the rest and every generated token through
kv_forward. Mask 65535 attends: cache columns [0, n_past) and, for row i, the new columns
CL - ar .. CL - ar + i. After a call its real rows' K/V go to columns n_past.., and n_past grows.
The next token is the argmax of the last real row's logits codes (the dequantization is
monotonic).
"""
import json
import sys
import time
import traceback

import torch

# ExecuTorch's runtime is the C++ extension module _C (its QnnBackend linked in); the Python module
# executorch.runtime wraps it through executorch.extension.pybindings.portable_lib, which re-exports
# _C's names unchanged but first imports executorch.exir (the export stack: torch._dynamo, inductor)
# for a warning class: 8 of the 12 seconds this process took to start. The wrapper gets _C itself.
# (_C needs torch's libraries loaded first, as portable_lib does.)
from executorch.extension.pybindings import _C as _executorch_runtime

sys.modules.setdefault("executorch.extension.pybindings.portable_lib", _executorch_runtime)
from executorch.runtime import Runtime, Verification  # noqa: E402

DTYPES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64, 6: torch.float32,
          11: torch.bool, 27: torch.uint16}
MASK_ATTEND = 65535


def tensor_metas(meta, count, get):
    return [{"dtype": int(get(i).dtype()), "sizes": [int(s) for s in get(i).sizes()]} for i in range(count)]


def signature(prog, name):
    m = prog.metadata(name)
    if m.num_inputs() == 0:  # a constant method: its outputs are values, not tensors
        return {"inputs": [], "outputs": m.num_outputs()}
    return {"inputs": tensor_metas(m, m.num_inputs(), m.input_tensor_meta),
            "outputs": tensor_metas(m, m.num_outputs(), m.output_tensor_meta)}


def plain(value):
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


class Timed:
    def __init__(self, prog, executed):
        self.prog, self.executed, self.methods = prog, executed, {}

    def __call__(self, name, inputs):
        if name not in self.methods:
            self.methods[name] = self.prog.load_method(name)
        start = time.perf_counter()
        out = self.methods[name].execute(inputs)
        ms = (time.perf_counter() - start) * 1e3
        self.executed.setdefault(name, []).append(ms)
        return out, ms


def greedy_generation(prog, run, sig, prompt_ids, max_new_tokens):
    kv = sig["kv_forward"]["inputs"]
    has_prefill = "prefill_forward" in sig
    context = kv[1]["sizes"][-1]
    caches = kv[3:]
    layers = len(caches) // 2
    # Logical caches over the whole context, from kv_forward's shapes (K: [1, h, d, CL - ar]).
    k_cache = [torch.zeros(c["sizes"][:3] + [context], dtype=DTYPES[c["dtype"]]) for c in caches[:layers]]
    v_cache = [torch.zeros(c["sizes"][:2] + [context, c["sizes"][3]], dtype=DTYPES[c["dtype"]]) for c in caches[layers:]]
    n_past = 0
    timings = {"prefill_ms": [], "decode_ms": []}

    def call(method, chunk):
        nonlocal n_past
        ar = sig[method]["inputs"][0]["sizes"][1]
        n = len(chunk)
        tokens = torch.tensor([[chunk[min(i, n - 1)] for i in range(ar)]], dtype=torch.int32)
        pos = torch.tensor([[min(n_past + i, context - 1) for i in range(ar)]], dtype=torch.int32)
        mask = torch.zeros((1, 1, ar, context), dtype=torch.int32)
        mask[..., :n_past] = MASK_ATTEND
        for i in range(ar):
            mask[0, 0, i, context - ar:context - ar + i + 1] = MASK_ATTEND
        keep = context - ar
        inputs = [tokens, mask.to(torch.uint16), pos]
        inputs += [k[..., :keep].contiguous() for k in k_cache]
        inputs += [v[:, :, :keep, :].contiguous() for v in v_cache]
        out, ms = run(method, inputs)
        timings["prefill_ms" if method == "prefill_forward" else "decode_ms"].append(ms)
        logits = out[0]
        for l in range(layers):
            k_cache[l][..., n_past:n_past + n] = out[1 + l][..., :n]
            v_cache[l][:, :, n_past:n_past + n, :] = out[1 + layers + l][:, :, :n, :]
        n_past += n
        return int(torch.argmax(logits[0, n - 1].to(torch.int32)))

    i, n = 0, len(prompt_ids)
    next_token = None
    if has_prefill and n > 1:
        ar = sig["prefill_forward"]["inputs"][0]["sizes"][1]
        while i < n and n_past + ar <= context:
            take = min(ar, n - i)
            next_token = call("prefill_forward", prompt_ids[i:i + take])
            i += take
    ar = sig["kv_forward"]["inputs"][0]["sizes"][1]
    while i < n:
        take = min(ar, n - i)
        next_token = call("kv_forward", prompt_ids[i:i + take])
        i += take
    tokens = []
    while len(tokens) < max_new_tokens:
        tokens.append(next_token)
        if len(tokens) == max_new_tokens or n_past >= context:
            break
        next_token = call("kv_forward", [next_token])
    return {"tokens": tokens, **timings}


def zero_inputs(meta):
    return [torch.zeros(t["sizes"], dtype=DTYPES[t["dtype"]]) for t in meta["inputs"]]


def read_inputs(meta, files):
    if len(files) != len(meta["inputs"]):
        raise ValueError(f"{len(files)} input files for {len(meta['inputs'])} inputs")
    tensors = []
    for path, t in zip(files, meta["inputs"]):
        with open(path, "rb") as f:
            data = bytearray(f.read())
        tensors.append(torch.frombuffer(data, dtype=DTYPES[t["dtype"]]).reshape(t["sizes"]).clone())
    return tensors


def run_job(job):
    result = {"name": job.get("name", job["pte"]), "ok": False, "error": None}
    try:
        prog = Runtime.get().load_program(job["pte"], verification=Verification.Minimal)
        names = sorted(prog.method_names)
        result["methods"] = names
        sig = {name: signature(prog, name) for name in names}
        result["metadata"] = sig
        constant = [name for name in names if not sig[name]["inputs"]]
        result["constants"] = {name: [plain(v) for v in prog.load_method(name).execute([])] for name in constant}
        if not job.get("metadata_only"):
            executed = {}
            result["executed"] = executed
            run = Timed(prog, executed)
            if "generate" in job:
                g = job["generate"]
                result["generation"] = greedy_generation(prog, run, sig, g["prompt_ids"], g["max_new_tokens"])
            for e in job.get("execute", []):
                out, _ = run(e["method"], read_inputs(sig[e["method"]], e["inputs"]))
                for o, t in enumerate(out):
                    with open(f"{e['out_dir']}/{e['method']}.out{o}.bin", "wb") as f:
                        f.write(t.contiguous().numpy().tobytes())
            failed = {}
            result["failed"] = failed
            for name in names:
                if name not in constant and name not in executed:
                    try:
                        run(name, zero_inputs(sig[name]))
                    except Exception as e:  # each method's own verdict
                        failed[name] = f"{type(e).__name__}: {e}"
            if failed:
                raise RuntimeError("methods failed: " + ", ".join(sorted(failed)))
        result["ok"] = True
    except Exception as e:  # reported per job, so one program's failure leaves the others' results
        result["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    return result


def main():
    with open(sys.argv[1]) as f:
        jobs = json.load(f)["jobs"]
    results = []
    for job in jobs:
        results.append(run_job(job))
        print(f"executorch_reference: {results[-1]['name']}: {'ok' if results[-1]['ok'] else 'FAILED'}", file=sys.stderr)
    with open(sys.argv[2], "w") as f:
        json.dump({"jobs": results}, f)


if __name__ == "__main__":
    main()
