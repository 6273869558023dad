"""Runs exported ONNX QDQ models on given integer inputs (test side only).

usage: onnx_qdq_run.py DIR... [--ep cpu|htp] [--htp_arch 75] [--soc_model 57]

Each DIR holds model.onnx and io.json ({"inputs": [{"name", "dtype", "shape", "file"}],
"outputs": [...]}, files raw little-endian beside it). The model is checked with
onnx.checker (full_check), run, and each output written to its file; DIR/result.json records
the node counts by op type, the initializer element types and the run time, or the error.
--ep cpu: ONNX Runtime's CPU EP with every graph optimisation off (with them on, it rewrites
DQ + MatMul and changes the results). --ep htp: the QNN EP on the HTP simulator, CPU fallback
disabled, so every node runs on the HTP or the session fails.
"""
import argparse
import collections
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

DTYPES = {"uint8": np.uint8, "uint16": np.uint16, "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "float32": np.float32}


def session_options(ep, args):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if ep == "cpu":
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return so, ["CPUExecutionProvider"]
    import onnxruntime_qnn
    if not getattr(session_options, "registered", False):
        ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
        session_options.registered = True
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    so.add_provider_for_devices(devices, {"backend_path": onnxruntime_qnn.get_qnn_htp_path(),
                                          "htp_arch": str(args.htp_arch), "soc_model": str(args.soc_model)})
    return so, None


def run_case(d, args):
    path = os.path.join(d, "model.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    ops = collections.Counter(n.op_type for n in model.graph.node)
    inits = collections.Counter(onnx.TensorProto.DataType.Name(t.data_type) for t in model.graph.initializer)
    with open(os.path.join(d, "io.json")) as f:
        io = json.load(f)
    feeds = {}
    for i in io["inputs"]:
        a = np.fromfile(os.path.join(d, i["file"]), dtype=DTYPES[i["dtype"]]).reshape(i["shape"])
        feeds[i["name"]] = a
    so, providers = session_options(args.ep, args)
    t0 = time.time()
    sess = ort.InferenceSession(path, so, providers=providers) if providers else ort.InferenceSession(path, so)
    t1 = time.time()
    outs = sess.run([o["name"] for o in io["outputs"]], feeds)
    t2 = time.time()
    for o, a in zip(io["outputs"], outs):
        want = DTYPES[o["dtype"]]
        if a.dtype != want:
            raise RuntimeError(f"output {o['name']} is {a.dtype}, expected {want}")
        np.ascontiguousarray(a).tofile(os.path.join(d, o["file"]))
    return {"ops": dict(sorted(ops.items())), "initializers": dict(sorted(inits.items())),
            "session_seconds": t1 - t0, "run_seconds": t2 - t1}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dirs", nargs="+")
    p.add_argument("--ep", choices=["cpu", "htp"], default="cpu")
    p.add_argument("--htp_arch", type=int, default=75)
    p.add_argument("--soc_model", type=int, default=57)
    args = p.parse_args()
    failed = 0
    for d in args.dirs:
        try:
            result = run_case(d, args)
        except Exception as e:  # recorded per case, so the caller names the op that failed
            result = {"error": f"{type(e).__name__}: {e}"}
            failed += 1
        with open(os.path.join(d, "result.json"), "w") as f:
            json.dump(result, f, indent=1)
    print(f"onnx_qdq_run: {len(args.dirs)} models, {failed} failed", file=sys.stderr)


if __name__ == "__main__":
    main()
