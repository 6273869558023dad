# genai's bridge to ONNX Runtime's QNN execution provider. The C++ side (qnn_bridge.cpp) embeds
# this file at build time and starts it as `python3 -c <source>`: nothing is installed or looked
# up on disk. It answers requests on stdin/stdout, one frame each way ("GWP1", uint64 LE length,
# body; see runtime/worker_process.h). A body is a message:
#   uint32 LE n | n bytes of JSON (the header) | uint32 LE k | k times (uint64 LE m | m bytes)
# i.e. a small JSON header and raw blobs (ONNX models, context binaries, tensors); no pickle.
# Every request gets one answer; an error is {"error": {"kind": "bad_input"|"failure",
# "message": ...}}. Python's own stdout is pointed at stderr first, so that nothing a library
# prints can corrupt the protocol. Only the standard library is needed to start and to answer
# `probe`; onnxruntime, onnxruntime_qnn and numpy are imported when first needed. The few ONNX
# messages the bridge reads and writes (EPContext models) are coded here (protobuf wire format,
# field numbers of onnx.proto): importing the `onnx` package costs more than a second.
#
# What ONNX Runtime 1.32 / onnxruntime-qnn 2.7.0 do, as observed (the bridge depends on it):
# - The QNN graph is named by the EP ("QNNExecutionProvider_QNNExecutionProvider_<hash>_1_0"); the
#   EPContext node's name and partition_name carry it. compile reports that name; the C++ side
#   then renames the graph after its method (qnn_graph_rename.h). A single-graph binary is loaded
#   whatever graph name the wrapper gives, so load() checks the name against the binary first.
# - The binary stores names as uint32 LE length + bytes; "soc_type=<SoC>;arch=<N>" records the target.
# - Graph I/O: a model input uint16 -> DequantizeLinear gives a QNN input of type ufixed16 with
#   that encoding (outputs likewise through QuantizeLinear); a float input keeps a float QNN input
#   and a Quantize op inside the graph. QNN I/O order = creation order in the EP's JSON dump =
#   the ONNX model's input / output declaration order.
# - Shared contexts (ep.share_ep_contexts): the graphs' I/O names must all differ ("Failed to
#   pre-register input"); HTP weight sharing is always on, and the x86 simulator cannot load such
#   a binary ("Shared weights buffer isn't supported on this platform"; ONNX Runtime may crash).
# - io_name_overrides "<wrapper name>=<binary name>;...": identity overrides bind by name in any
#   declaration order; renamed tensors declared in another order than the graph's crash ONNX
#   Runtime, so the bridge only ever uses identity overrides (bind by name) or none (by position).
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
PACKAGES_HINT = "pip install onnxruntime-qnn==2.7.0"


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
# ONNX protobuf, just enough for EPContext models: decode to {field: [values]}, encode from parts.

ONNX_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
              "float16": 10, "float64": 11, "uint32": 12, "uint64": 13}
ONNX_TYPE_NAMES = {v: k for k, v in ONNX_TYPES.items()}


def pb_varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def pb_decode(buf):
    fields, i = {}, 0
    while i < len(buf):
        key, i = pb_varint(buf, i)
        wire = key & 7
        if wire == 0:
            v, i = pb_varint(buf, i)
        elif wire == 2:
            n, i = pb_varint(buf, i)
            v = bytes(buf[i:i + n])
            i += n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            v = bytes(buf[i:i + n])
            i += n
        else:
            raise ValueError(f"protobuf wire type {wire}")
        fields.setdefault(key >> 3, []).append(v)
    return fields


def pb_key(field, wire):
    return pb_uvarint((field << 3) | wire)


def pb_uvarint(v):
    out = bytearray()
    while True:
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7


def pb_int(field, v):
    return pb_key(field, 0) + pb_uvarint(v)


def pb_bytes(field, b):
    b = b.encode("utf-8") if isinstance(b, str) else b
    return pb_key(field, 2) + pb_uvarint(len(b)) + b


def pb_str(fields, f, default=""):
    return fields.get(f, [default.encode()])[0].decode("utf-8")


def onnx_value_info(name, dtype, shape):  # ValueInfoProto{name, TypeProto{tensor_type{elem_type, shape}}}
    dims = b"".join(pb_bytes(1, pb_int(1, int(d))) for d in shape)
    tensor = pb_int(1, ONNX_TYPES[dtype]) + pb_bytes(2, dims)
    return pb_bytes(1, name) + pb_bytes(2, pb_bytes(1, tensor))


def onnx_epcontext_model(graph_name, attrs, inputs, outputs):
    """ModelProto (IR 10, opsets "" 21 and com.microsoft 1) with one EPContext node."""
    node = b"".join(pb_bytes(1, t["name"]) for t in inputs) + b"".join(pb_bytes(2, t["name"]) for t in outputs)
    node += pb_bytes(3, graph_name) + pb_bytes(4, "EPContext") + pb_bytes(7, "com.microsoft")
    for k, v in attrs.items():  # AttributeProto{name 1, i 3 | s 4, type 20: INT 2, STRING 3}
        a = pb_bytes(1, k) + (pb_int(3, v) + pb_int(20, 2) if isinstance(v, int) else pb_bytes(4, v) + pb_int(20, 3))
        node += pb_bytes(5, a)
    graph = pb_bytes(1, node) + pb_bytes(2, graph_name + "_wrapper")
    graph += b"".join(pb_bytes(11, onnx_value_info(t["name"], t["dtype"], t["shape"])) for t in inputs)
    graph += b"".join(pb_bytes(12, onnx_value_info(t["name"], t["dtype"], t["shape"])) for t in outputs)
    opsets = pb_bytes(8, pb_bytes(1, "") + pb_int(2, 21)) + pb_bytes(8, pb_bytes(1, "com.microsoft") + pb_int(2, 1))
    return pb_int(1, 10) + opsets + pb_bytes(7, graph)


def onnx_read_epcontext_model(data):
    """The nodes ({name, op_type, inputs, outputs, attrs}) and the I/O {name: {name, dtype, shape}}."""
    graph = pb_decode(pb_decode(data).get(7, [b""])[0])
    nodes = []
    for nb in graph.get(1, []):
        n = pb_decode(nb)
        attrs = {}
        for ab in n.get(5, []):
            a = pb_decode(ab)
            attrs[pb_str(a, 1)] = a[4][0].decode("utf-8", "replace") if 4 in a else a.get(3, [0])[0]
        nodes.append({"name": pb_str(n, 3), "op_type": pb_str(n, 4), "attrs": attrs,
                      "inputs": [x.decode() for x in n.get(1, [])], "outputs": [x.decode() for x in n.get(2, [])]})
    io = {}
    for vb in graph.get(11, []) + graph.get(12, []):
        v = pb_decode(vb)
        t = pb_decode(pb_decode(v.get(2, [b""])[0]).get(1, [b""])[0])
        dims = [pb_decode(d) for d in pb_decode(t.get(2, [b""])[0]).get(1, [])]
        name = pb_str(v, 1)
        io[name] = {"name": name, "dtype": ONNX_TYPE_NAMES.get(t.get(1, [0])[0], f"onnx_type_{t.get(1, [0])[0]}"),
                    "shape": [d.get(1, [-1])[0] for d in dims]}
    return nodes, io


# ---------------------------------------------------------------------------------------------
# ONNX Runtime, engaged as a plugin EP (the reference: providers=[...] silently runs on the CPU).

_ort = None


def missing_packages():
    missing = []
    for module, package in (("onnxruntime", "onnxruntime"), ("onnxruntime_qnn", "onnxruntime-qnn"),
                            ("numpy", "numpy")):
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
        import onnxruntime
        import onnxruntime_qnn
        onnxruntime.set_default_logger_severity(3)  # errors only; warnings are noise here
        onnxruntime.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
        devices = [d for d in onnxruntime.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
        if not devices:
            raise BridgeFailure("ONNX Runtime lists no QNNExecutionProvider device after registering the plugin")
        _ort = (onnxruntime, onnxruntime_qnn, numpy, devices)
    return _ort


def session_options(provider_options, config):
    ort, qnn, _, devices = ort_modules()
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
    for module in ("onnxruntime", "onnxruntime_qnn", "numpy"):
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


def model_with_external_data(work, i, blob, external, blobs, n_models, what):
    """Writes model i and its external initializers into a folder of their own; returns the
    model's path."""
    if not isinstance(external, dict):
        raise BadInput(f"{what}: external data {external!r} is not an object")
    k, location = external.get("blob"), external.get("location", "")
    if not isinstance(k, int) or not n_models <= k < len(blobs):
        raise BadInput(f"{what}: external data names blob {k!r}, not one of {n_models}..{len(blobs) - 1}")
    if not isinstance(location, str) or not location or os.path.basename(location) != location \
            or location.startswith("."):
        raise BadInput(f"{what}: external data file {location!r} is not a plain file name")
    folder = os.path.join(work, f"source{i}")
    os.makedirs(folder)
    with open(os.path.join(folder, location), "wb") as f:
        f.write(blobs[k])
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(blob)
    return path


def do_compile(header, blobs):
    ort, qnn, numpy, _ = ort_modules()
    models = header.get("models", [])
    if len(blobs) < len(models) or not models:
        raise BadInput(f"compile: {len(models)} model descriptions for {len(blobs)} blobs")
    share = bool(header.get("share_context", True)) and len(models) > 1
    work = work_dir("compile")
    try:
        results, files = [], []
        for i, (desc, blob) in enumerate(zip(models, blobs)):
            what = f"compile of model {i} ('{desc.get('name', '')}')"
            model_input, external = bytes(blob), desc.get("external_data")
            if external is not None:  # initializers in a file beside the model: ONNX Runtime reads both by path
                model_input = model_with_external_data(work, i, blob, external, blobs, len(models), what)
            json_dir = os.path.join(work, f"json{i}")
            ctx_model = os.path.join(work, f"model{i}.onnx")
            config = {"ep.context_enable": "1", "ep.context_file_path": ctx_model, "ep.context_embed_mode": "0"}
            if share:
                config["ep.share_ep_contexts"] = "1"
                if i == len(models) - 1:
                    config["ep.stop_share_ep_contexts"] = "1"
            dump_dir = os.environ.get("GENAI_QNN_DUMP_DIR")  # debugging: keep the ONNX models compiled
            if dump_dir:
                os.makedirs(dump_dir, exist_ok=True)
                with open(os.path.join(dump_dir, f"{desc.get('name', i)}.onnx"), "wb") as f:
                    f.write(bytes(blob))
                if external is not None:
                    shutil.copyfile(os.path.join(os.path.dirname(model_input), external["location"]),
                                    os.path.join(dump_dir, external["location"]))
            po = dict(header.get("provider_options", {}))
            po.update({"dump_json_qnn_graph": "1", "json_qnn_graph_dir": json_dir})
            start = time.monotonic()
            session = create_session(model_input, session_options(po, config), what, capture=True)
            seconds = time.monotonic() - start
            del session
            if not os.path.exists(ctx_model):
                raise BridgeFailure(f"{what}: ONNX Runtime wrote no EPContext model")
            with open(ctx_model, "rb") as f:
                all_nodes, io = onnx_read_epcontext_model(f.read())
            nodes = [n for n in all_nodes if n["op_type"] == "EPContext"]
            if len(nodes) != 1 or len(all_nodes) != 1:
                raise BadInput(f"{what}: the model became {len(nodes)} QNN graphs and "
                               f"{len(all_nodes) - len(nodes)} other nodes; it must become exactly one QNN graph")
            node = nodes[0]
            attrs = node["attrs"]
            ordered = qnn_graph_io(json_dir, node["name"], io)
            source = "qnn_json_dump"
            if ordered is None:  # no dump: the EPContext model's order, which the EP keeps
                source = "epcontext_model"
                ordered = {"inputs": [io[n] for n in node["inputs"]], "outputs": [io[n] for n in node["outputs"]]}
            binfile = attrs.get("ep_cache_context", "")
            if binfile not in files:
                files.append(binfile)
            results.append({"name": desc.get("name", ""), "graph": node["name"], "binary": files.index(binfile),
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
    ort, qnn, numpy, _ = ort_modules()
    methods = header.get("methods", [])
    if not blobs or not methods:
        raise BadInput("load: no context binary or no method")
    work = work_dir("load")
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
            for t in ins + outs:
                if t.get("dtype") not in ONNX_TYPES:
                    raise BadInput(f"{what}: tensor '{t.get('name')}' has a type ONNX Runtime cannot take here: "
                                   f"{t.get('dtype')}")
            attrs = {"main_context": 1, "ep_cache_context": f"ctx{k}.bin", "embed_mode": 0, "source": "QNN",
                     "partition_name": graph}
            if by_name:
                # Bind by name, never by position (the reference, §4): "<model name>=<binary name>;".
                attrs["io_name_overrides"] = "".join(f"{t['name']}={t['name']};" for t in ins + outs)
            model = onnx_epcontext_model(graph, attrs, ins, outs)
            path = os.path.join(work, f"method{j}.onnx")  # beside the binary: ep_cache_context is relative
            with open(path, "wb") as f:
                f.write(model)
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
    ort, qnn, numpy, _ = ort_modules()
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


def work_dir(kind):
    """A work folder named after this process: a bridge killed meanwhile (the callers' tests kill
    bridges on purpose) leaves it, and the next bridge removes it."""
    return tempfile.mkdtemp(prefix=f"genai_qnn_{kind}_{os.getpid()}_")


def remove_orphaned_work_dirs():
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        m = re.fullmatch(r"genai_qnn_(?:compile|load)_(\d+)_.+", name)
        if not m:
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:  # its bridge is gone; a live one (or another user's) keeps it
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
        except (PermissionError, OverflowError):
            pass


def main():
    remove_orphaned_work_dirs()
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
