# genai's bridge to ONNX Runtime's QNN execution provider. The C++ side (qnn_bridge.cpp) embeds
# this file at build time and starts it as `python3 -c <source>`: nothing is installed or looked
# up on disk. It answers requests on stdin/stdout, one frame each way ("GWP1", uint64 LE length,
# body; see runtime/worker_process.h). A body is a message:
#   uint32 LE n | n bytes of JSON (the header) | uint32 LE k | k times (uint64 LE m | m bytes)
# i.e. a small JSON header and raw blobs (ONNX models, context binaries, tensors); no pickle.
# Every request gets one answer; an error is {"error": {"kind": "bad_input"|"failure",
# "message": ...}}. Python's own stdout is pointed at stderr first, so that nothing a library
# prints can corrupt the protocol. Only the standard library is needed to start and to answer
# `probe`; onnxruntime, onnxruntime_qnn, onnx and numpy are imported when first needed.
import faulthandler
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import time
import traceback

IN_FD = 0
OUT_FD = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr
faulthandler.enable()  # a crash inside ONNX Runtime leaves a Python traceback in stderr's tail
PACKAGES_HINT = "pip install onnxruntime-qnn==2.7.0 onnx"


class BadInput(Exception):
    pass


class BridgeFailure(Exception):
    pass


def read_exactly(n):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = os.readv(IN_FD, [view[got:]])
        if k == 0:
            return None
        got += k
    return buf


def write_all(parts):
    views = [memoryview(p).cast("B") for p in parts if len(p)]
    while views:
        n = os.writev(OUT_FD, views[:512])
        while n > 0:
            if n >= len(views[0]):
                n -= len(views[0])
                views.pop(0)
            else:
                views[0] = views[0][n:]
                n = 0


def decode(body):
    view = memoryview(body)
    try:
        (n,) = struct.unpack_from("<I", view, 0)
        header = json.loads(bytes(view[4:4 + n]).decode("utf-8"))
        at = 4 + n
        (k,) = struct.unpack_from("<I", view, at)
        at += 4
        blobs = []
        for _ in range(k):
            (m,) = struct.unpack_from("<Q", view, at)
            at += 8
            if at + m > len(view):
                raise ValueError("a blob runs past the end")
            blobs.append(view[at:at + m])
            at += m
        if at != len(view) or not isinstance(header, dict):
            raise ValueError("trailing bytes or a header that is not an object")
    except (ValueError, struct.error, UnicodeDecodeError) as e:
        raise BridgeFailure(f"garbage request ({e})")
    return header, blobs


def send(header, blobs=()):
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    parts = [struct.pack("<I", len(h)), h, struct.pack("<I", len(blobs))]
    for b in blobs:
        b = memoryview(b).cast("B")
        parts += [struct.pack("<Q", len(b)), b]
    write_all([b"GWP1", struct.pack("<Q", sum(len(memoryview(p).cast("B")) for p in parts))] + parts)


def log(msg):
    sys.stderr.write(f"qnn_bridge: {msg}\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# ONNX Runtime, engaged as a plugin EP (the reference: providers=[...] silently runs on the CPU).

_ort = None


def missing_packages():
    missing = []
    for module, package in (("onnxruntime", "onnxruntime"), ("onnxruntime_qnn", "onnxruntime-qnn"),
                            ("onnx", "onnx"), ("numpy", "numpy")):
        try:
            __import__(module)
        except Exception as e:  # an ImportError, or a broken install
            missing.append({"package": package, "detail": f"{type(e).__name__}: {e}"})
    return missing


def ort_modules():
    global _ort
    if _ort is None:
        missing = missing_packages()
        if missing:
            names = ", ".join(m["package"] for m in missing)
            raise BadInput(f"the Python packages {names} cannot be imported ({PACKAGES_HINT})")
        import numpy
        import onnx
        import onnxruntime
        import onnxruntime_qnn
        onnxruntime.set_default_logger_severity(3)  # errors only; warnings are noise here
        onnxruntime.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
        devices = [d for d in onnxruntime.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
        if not devices:
            raise BridgeFailure("ONNX Runtime lists no QNNExecutionProvider device after registering the plugin")
        _ort = (onnxruntime, onnxruntime_qnn, onnx, numpy, devices)
    return _ort


def session_options(provider_options, config):
    ort, qnn, _, _, devices = ort_modules()
    opts = {str(k): str(v) for k, v in provider_options.items()}
    if not opts.get("htp_arch"):
        # Without it the simulator behaves like V68 and is many steps off (the reference, §2).
        raise BadInput("provider option htp_arch is not set")
    opts["backend_path"] = qnn.get_qnn_htp_path()
    so = ort.SessionOptions()
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")  # nothing may run on the CPU
    for k, v in config.items():
        so.add_session_config_entry(k, v)
    so.add_provider_for_devices(devices, opts)
    return so


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def create_session(model, so, what, capture):
    """An InferenceSession; ONNX Runtime's error becomes BadInput (the model or binary is refused)
    or BridgeFailure, naming `what` and, from ONNX Runtime's log, the nodes the HTP refused."""
    ort = ort_modules()[0]
    log(f"creating the session for {what}")
    saved = tmp = None
    if capture:  # ONNX Runtime names unsupported nodes only in its log
        tmp = tempfile.TemporaryFile()
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
    error = None
    try:
        session = ort.InferenceSession(model, so)
    except Exception as e:
        error = e
    finally:
        text = ""
        if capture:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = ANSI.sub("", tmp.read().decode("utf-8", "replace"))
            tmp.close()
            sys.stderr.write(text)
            sys.stderr.flush()
    if error is None:
        return session
    message = ANSI.sub("", str(error)).strip()
    refused = sorted(set(re.findall(r"Unsupported nodes in QNN EP: \{([^}]*)\}", text)))
    detail = f"{what}: ONNX Runtime refused it: {message}"
    if refused:
        detail += "; nodes the QNN EP does not support: " + "; ".join(r.strip() for r in refused)
    if "pre-register input" in text or "Failed to compose Qnn graph" in message:
        detail += " (in a shared context the graphs' input and output names must all differ)"
    bad = ("fallback to CPU EP has been explicitly disabled" in message or refused or
           type(error).__name__ in ("InvalidArgument", "InvalidGraph", "InvalidProtobuf", "NoSuchFile"))
    raise (BadInput if bad else BridgeFailure)(detail)


def elem_name(onnx, numpy, elem_type):
    try:
        return numpy.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).name
    except Exception:
        return f"onnx_type_{elem_type}"


def value_infos(onnx, numpy, infos):
    out = {}
    for vi in infos:
        t = vi.type.tensor_type
        out[vi.name] = {"name": vi.name, "dtype": elem_name(onnx, numpy, t.elem_type),
                        "shape": [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]}
    return out


def qnn_graph_io(json_dir, graph, io):
    """The graph's inputs and outputs in the QNN graph's own order, with their quantization. The
    QNN EP's JSON dump (provider option dump_json_qnn_graph) lists every tensor with a creation id
    and a type (0 app-write = input, 1 app-read = output); graph I/O order is creation order."""
    path = os.path.join(json_dir, graph + ".json")
    try:
        with open(path) as f:
            tensors = json.load(f)["graph"]["tensors"]
    except (OSError, ValueError, KeyError):
        return None
    result = {}
    for kind, code in (("inputs", 0), ("outputs", 1)):
        items = sorted((t.get("id", 0), name, t) for name, t in tensors.items() if t.get("type") == code)
        lst = []
        for _, name, t in items:
            entry = dict(io.get(name, {"name": name, "dtype": "unknown", "shape": t.get("dims", [])}))
            q = t.get("quant_params", {})
            so = q.get("scale_offset")
            if q.get("definition") == 1 and so is not None:
                entry["scale"] = so.get("scale")
                entry["offset"] = so.get("offset")  # QNN's offset = -zero_point
            entry["qnn_data_type"] = t.get("data_type")
            lst.append(entry)
        result[kind] = lst
    return result


def do_probe(header, blobs):
    info = {"python": sys.version.split()[0], "protocol": 1, "missing": missing_packages()}
    for module in ("onnxruntime", "onnxruntime_qnn", "onnx", "numpy"):
        try:
            info[module] = __import__(module).__version__
        except Exception:
            info[module] = None
    try:
        from onnxruntime_qnn import build_and_package_info
        info["qnn_sdk"] = getattr(build_and_package_info, "qnn_version", None)
    except Exception:
        info["qnn_sdk"] = None
    return info, []


def do_compile(header, blobs):
    ort, qnn, onnx, numpy, _ = ort_modules()
    models = header.get("models", [])
    if len(models) != len(blobs) or not models:
        raise BadInput(f"compile: {len(models)} model descriptions for {len(blobs)} model blobs")
    share = bool(header.get("share_context", True)) and len(models) > 1
    work = tempfile.mkdtemp(prefix="genai_qnn_compile_")
    try:
        results, files = [], []
        for i, (desc, blob) in enumerate(zip(models, blobs)):
            what = f"compile of model {i} ('{desc.get('name', '')}')"
            json_dir = os.path.join(work, f"json{i}")
            ctx_model = os.path.join(work, f"model{i}.onnx")
            config = {"ep.context_enable": "1", "ep.context_file_path": ctx_model, "ep.context_embed_mode": "0"}
            if share:
                config["ep.share_ep_contexts"] = "1"
                if i == len(models) - 1:
                    config["ep.stop_share_ep_contexts"] = "1"
            po = dict(header.get("provider_options", {}))
            po.update({"dump_json_qnn_graph": "1", "json_qnn_graph_dir": json_dir})
            start = time.monotonic()
            session = create_session(bytes(blob), session_options(po, config), what, capture=True)
            seconds = time.monotonic() - start
            del session
            if not os.path.exists(ctx_model):
                raise BridgeFailure(f"{what}: ONNX Runtime wrote no EPContext model")
            m = onnx.load(ctx_model, load_external_data=False)
            nodes = [n for n in m.graph.node if n.op_type == "EPContext"]
            if len(nodes) != 1 or len(m.graph.node) != 1:
                raise BadInput(f"{what}: the model became {len(nodes)} QNN graphs and "
                               f"{len(m.graph.node) - len(nodes)} other nodes; it must become exactly one QNN graph")
            node = nodes[0]
            attrs = {a.name: (a.s.decode() if a.type == onnx.AttributeProto.STRING else a.i) for a in node.attribute}
            io = value_infos(onnx, numpy, list(m.graph.input) + list(m.graph.output))
            ordered = qnn_graph_io(json_dir, node.name, io)
            source = "qnn_json_dump"
            if ordered is None:  # no dump: the EPContext model's order, which the EP keeps
                source = "epcontext_model"
                ordered = {"inputs": [io[n] for n in node.input], "outputs": [io[n] for n in node.output]}
            binfile = attrs.get("ep_cache_context", "")
            if binfile not in files:
                files.append(binfile)
            results.append({"name": desc.get("name", ""), "graph": node.name, "binary": files.index(binfile),
                            "inputs": ordered["inputs"], "outputs": ordered["outputs"], "io_order_source": source,
                            "ep_sdk_version": attrs.get("ep_sdk_version", ""), "seconds": seconds})
        binaries = []
        for f in files:
            with open(os.path.join(work, f), "rb") as fh:
                binaries.append(fh.read())
        return {"graphs": results, "shared": share}, binaries
    finally:
        shutil.rmtree(work, ignore_errors=True)


def has_recorded_string(binary, s):
    # QNN context binaries store names as a uint32 LE length followed by the bytes.
    b = s.encode("utf-8")
    return (struct.pack("<I", len(b)) + b) in binary


class LoadedSession:
    def __init__(self, work):
        self.work = work
        self.methods = {}  # name -> (InferenceSession, input specs, output specs)


sessions = {}
next_session = [1]


def do_load(header, blobs):
    ort, qnn, onnx, numpy, _ = ort_modules()
    methods = header.get("methods", [])
    if not blobs or not methods:
        raise BadInput("load: no context binary or no method")
    work = tempfile.mkdtemp(prefix="genai_qnn_load_")
    loaded = LoadedSession(work)
    try:
        for k, b in enumerate(blobs):
            with open(os.path.join(work, f"ctx{k}.bin"), "wb") as f:
                f.write(b)
        for j, mdesc in enumerate(methods):
            method, graph = mdesc.get("method", ""), mdesc.get("graph", "")
            what = f"method '{method}' (QNN graph '{graph}')"
            k = int(mdesc.get("binary", 0))
            if not 0 <= k < len(blobs):
                raise BadInput(f"{what}: no context binary {k}")
            binary = bytes(blobs[k])
            if bytes(binary[:4]) != b"\x00\x00\x00\x02":
                raise BadInput(f"{what}: the payload is not a QNN context binary (it starts {bytes(binary[:8]).hex()})")
            if not has_recorded_string(binary, graph):
                raise BadInput(f"{what}: the context binary has no graph named '{graph}'")
            by_name = mdesc.get("bind", "name") == "name"
            ins, outs = mdesc.get("inputs", []), mdesc.get("outputs", [])
            if by_name:
                for t in ins + outs:
                    if not has_recorded_string(binary, t["name"]):
                        raise BadInput(f"{what}: the context binary has no tensor named '{t['name']}'")
            vis = []
            for t in ins + outs:
                try:
                    et = onnx.helper.np_dtype_to_tensor_dtype(numpy.dtype(t["dtype"]))
                except TypeError:
                    raise BadInput(f"{what}: tensor '{t['name']}' has an unknown dtype '{t['dtype']}'")
                vis.append(onnx.helper.make_tensor_value_info(t["name"], et, [int(d) for d in t["shape"]]))
            attrs = {"main_context": 1, "ep_cache_context": f"ctx{k}.bin", "embed_mode": 0, "source": "QNN",
                     "partition_name": graph}
            if by_name:
                # Bind by name, never by position (the reference, §4): "<model name>=<binary name>;".
                attrs["io_name_overrides"] = "".join(f"{t['name']}={t['name']};" for t in ins + outs)
            node = onnx.helper.make_node("EPContext", [t["name"] for t in ins], [t["name"] for t in outs],
                                         name=graph, domain="com.microsoft", **attrs)
            g = onnx.helper.make_graph([node], f"{method}_wrapper", vis[:len(ins)], vis[len(ins):])
            m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", 21),
                                                         onnx.helper.make_opsetid("com.microsoft", 1)])
            m.ir_version = 10
            path = os.path.join(work, f"method{j}.onnx")  # beside the binary: ep_cache_context is relative
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            so = session_options(header.get("provider_options", {}), {})
            session = create_session(path, so, what, capture=False)
            loaded.methods[method] = (session, ins, outs)
        handle = next_session[0]
        next_session[0] += 1
        sessions[handle] = loaded
        return {"session": handle}, []
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def do_run(header, blobs):
    ort, qnn, onnx, numpy, _ = ort_modules()
    loaded = sessions.get(header.get("session"))
    if loaded is None:
        raise BadInput(f"run: no session {header.get('session')}")
    method = header.get("method", "")
    if method not in loaded.methods:
        raise BadInput(f"run: the session has no method '{method}' (it has {', '.join(sorted(loaded.methods))})")
    session, ins, outs = loaded.methods[method]
    if len(blobs) != len(ins):
        raise BadInput(f"run of method '{method}': {len(blobs)} input tensors, the graph takes {len(ins)}")
    feeds = {}
    for spec, blob in zip(ins, blobs):
        dt = numpy.dtype(spec["dtype"])
        n = 1
        for d in spec["shape"]:
            n *= int(d)
        if len(blob) != n * dt.itemsize:
            raise BadInput(f"run of method '{method}': input '{spec['name']}' has {len(blob)} bytes, "
                           f"{spec['dtype']}{spec['shape']} needs {n * dt.itemsize}")
        feeds[spec["name"]] = numpy.frombuffer(blob, dtype=dt).reshape([int(d) for d in spec["shape"]])
    start = time.monotonic()
    try:
        results = session.run([o["name"] for o in outs], feeds)
    except Exception as e:
        raise BridgeFailure(f"run of method '{method}': {ANSI.sub('', str(e)).strip()}")
    seconds = time.monotonic() - start
    arrays = [numpy.ascontiguousarray(r) for r in results]
    return {"seconds": seconds, "outputs": [{"name": o["name"], "dtype": a.dtype.name, "shape": list(a.shape)}
                                            for o, a in zip(outs, arrays)]}, arrays


def do_close(header, blobs):
    loaded = sessions.pop(header.get("session"), None)
    if loaded is not None:
        loaded.methods.clear()
        shutil.rmtree(loaded.work, ignore_errors=True)
    return {}, []


HANDLERS = {"probe": do_probe, "compile": do_compile, "load": do_load, "run": do_run, "close": do_close}


def main():
    while True:
        h = read_exactly(12)
        if h is None:
            return
        if bytes(h[:4]) != b"GWP1":
            log(f"garbage frame header {bytes(h).hex()}")
            return
        body = read_exactly(struct.unpack("<Q", bytes(h[4:]))[0])
        if body is None:
            return
        try:
            header, blobs = decode(body)
            op = header.get("op")
            if op == "quit":
                send({})
                return
            if op not in HANDLERS:
                raise BridgeFailure(f"unknown request '{op}'")
            reply, out = HANDLERS[op](header, blobs)
            send(reply, out)
        except BadInput as e:
            send({"error": {"kind": "bad_input", "message": str(e)}})
        except BridgeFailure as e:
            send({"error": {"kind": "failure", "message": str(e)}})
        except Exception as e:
            traceback.print_exc()
            send({"error": {"kind": "failure", "message": f"{type(e).__name__}: {e}"}})


main()
for s in list(sessions.values()):
    shutil.rmtree(s.work, ignore_errors=True)
