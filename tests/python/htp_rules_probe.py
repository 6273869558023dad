"""Probes the QNN HTP simulator's arithmetic on single ops (test side only; docs/quantization.md,
"HTP rules", quotes what it prints).

usage: htp_rules_probe.py [rmsnorm] [linear] [qk] [pv] [add] [softmax] [mul] [sigmoid] [rope] [convert]
       (default: all; V75 / SM8650)

Each probe builds a one-op ONNX QDQ model, runs it on the simulator through ONNX Runtime's QNN EP
(CPU fallback off) and compares the output codes with candidate integer rules computed in numpy:
- rmsnorm: round half to even against floor of the normalised result.
- linear: the exact accumulator, the accumulator floored to a multiple of 256, and the HTP's
  accumulator as the emulation computes it (kernels::htp_accumulator: the sum centred on 32768
  floored, the zero-point correction rounded, ties down), for int8 and int4 weights, several K and
  zero points, with a tight output encoding.
- qk: a uint16 operand on several zero points times a symmetric uint8 one, the same candidates.
- add: two uint16 tensors on random scales and zero points: the float sum against the HTP's
  integer add as the emulation computes it (kernels/quantized_add.h: fixed-point multipliers with
  a shift of at most 16 that keeps them below 2^15, rounding half up).
- pv: probabilities (zero point 0) times a symmetric uint8 V: the mean signed difference.
- softmax: uint16 in, probabilities on 1/65535 out, on the masked-score scale of our graphs (two
  live columns at every code distance d, and random rows): round half to even and floor of the
  exact result against a fixed-point form (exp as e = floor(2^15 exp(-d s)) of the code distance
  to the row's maximum, the sum's reciprocal rounded to 15 significant bits, the product floored
  onto 2^-16).
- mul: two uint16 tensors (a symmetric x times a cos-like table, x times a [0, 1] sigmoid, random
  encodings): the exact product rounded half to even, floored, and the float32 product rounded
  (kernels/quantized_mul.h takes the first).
- sigmoid: every uint16 code onto the [0, 1] grid (scale 1/65535, zero point 0): the exact result
  rounded against twice floor(2^15 sigmoid) (kernels/quantized_silu.h takes the second).
- rope: the qnn lowering's rope form (x*cos + rotate_half(x)*sin, the rotated x and both products
  on one symmetric uint16 encoding over x's range, tables tiled over the heads): the float result
  rounded once against the four quantized steps of kernels/quantized_rope.h; prints a few inputs
  where the two differ, with the simulator's code (tests/kernels/quantized_rope_test.cpp pins them).
- convert: every uint16 code requantized onto another uint16 encoding (DQ -> Concat -> Q), random
  encodings: rounding the exact value against the partial form found (the code difference from
  32768 times M = rne(r·2^18), r the scale ratio, plus one offset per encoding pair): whether one
  offset fits every code, and that offset minus (32768 - zp_in)·M/2^18 + zp_out, in 1/16 steps.
"""
import sys

import numpy as np
import onnxruntime as ort
import onnxruntime_qnn
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
rng = np.random.default_rng(0)


def run_on_htp(nodes, inputs, outputs, inits, feeds):
    g = h.make_graph(nodes, "probe", inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
    m.ir_version = 11
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
    so.add_provider_for_devices(devices, {"backend_path": onnxruntime_qnn.get_qnn_htp_path(), "htp_arch": "75",
                                          "soc_model": "57"})
    return ort.InferenceSession(m.SerializeToString(), so).run(None, feeds)[0].astype(np.int64)


def params(name, scale, zero_point, dtype):
    return [nh.from_array(np.array(scale, np.float32), name + ".s"), nh.from_array(np.array(zero_point, dtype), name + ".z")]


def report(label, got, candidates):
    for rule, want in candidates.items():
        d = got - want
        print(f"{label:34s} {rule:22s} exact {100 * np.mean(d == 0):5.1f}%  max {np.abs(d).max():3.0f}  mean {d.mean():+.3f}")


def rmsnorm(rows=64, dim=256):
    sx, zx, sy, zy = 8.0 / 65535, 32768, 12.0 / 65535, 32768
    gamma = (rng.random(dim) * 2).astype(np.float32)
    sg = float(gamma.max()) / 65535
    qg = np.round(gamma / sg).astype(np.uint16)
    inits = params("x", sx, zx, np.uint16) + params("y", sy, zy, np.uint16) + [
        nh.from_array(qg, "g"), nh.from_array(np.array(sg, np.float32), "g.s"), nh.from_array(np.array(0, np.uint16), "g.z")]
    nodes = [h.make_node("DequantizeLinear", ["x", "x.s", "x.z"], ["xf"]),
             h.make_node("DequantizeLinear", ["g", "g.s", "g.z"], ["gf"]),
             h.make_node("RMSNormalization", ["xf", "gf"], ["yf"], axis=-1, epsilon=1e-5),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    x = rng.integers(20000, 45000, size=(rows, dim)).astype(np.uint16)
    got = run_on_htp(nodes, [h.make_tensor_value_info("x", T.UINT16, [rows, dim])],
                     [h.make_tensor_value_info("y", T.UINT16, [rows, dim])], inits, {"x": x})
    xf = (x.astype(np.float64) - zx) * np.float32(sx)
    t = xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-5) * (qg.astype(np.float64) * sg) / np.float32(sy) + zy
    report("rms_norm", got, {"round half to even": np.clip(np.rint(t), 0, 65535), "floor": np.clip(np.floor(t), 0, 65535)})


def linear(bits, K, zx, rows=8, N=48):
    sx = 8.0 / 65535
    lim = 2 ** (bits - 1)
    qw = rng.integers(-lim, lim, size=(K, N)).astype(np.int8)
    sw = ((rng.random(N) * 0.01 + 0.005) * (128 / lim)).astype(np.float32)
    x = rng.integers(0, 65536, size=(rows, K)).astype(np.uint16)
    acc = (x.astype(np.int64) - zx) @ qw.astype(np.int64)
    real = acc * (np.float64(np.float32(sx)) * sw.astype(np.float64))
    lo, hi = min(real.min(), 0.0), max(real.max(), 0.0)
    sy = np.float32((hi - lo) / 65535)  # a tight output encoding, as calibration gives
    zy = int(np.rint(-lo / sy))
    if bits == 4:
        w, wz = h.make_tensor("w", T.INT4, [K, N], qw.flatten().tolist()), h.make_tensor("w.z", T.INT4, [N], [0] * N)
    else:
        w, wz = nh.from_array(qw, "w"), nh.from_array(np.zeros(N, np.int8), "w.z")
    inits = params("x", sx, zx, np.uint16) + params("y", sy, zy, np.uint16) + [w, nh.from_array(sw, "w.s"), wz]
    nodes = [h.make_node("DequantizeLinear", ["x", "x.s", "x.z"], ["xf"]),
             h.make_node("DequantizeLinear", ["w", "w.s", "w.z"], ["wf"], axis=1),
             h.make_node("MatMul", ["xf", "wf"], ["yf"]),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    got = run_on_htp(nodes, [h.make_tensor_value_info("x", T.UINT16, [rows, K])],
                     [h.make_tensor_value_info("y", T.UINT16, [rows, N])], inits, {"x": x})
    m = np.float64(np.float32(sx)) * sw.astype(np.float64) / np.float64(sy)
    report(f"linear int{bits} K {K} zero point {zx}", got, candidates(acc, qw.astype(np.int64).sum(0), zx, m, zy))


def htp_accumulator(acc, bsum, zp):
    """kernels::htp_accumulator: floor((acc - C) / 256) * 256 + ceil((C - 128) / 256) * 256."""
    c = (32768 - zp) * bsum
    return (((acc - c) >> 8) << 8) - (((128 - c) >> 8) << 8)


def candidates(acc, bsum, zp, m, zy):
    requant = lambda a: np.clip(np.rint(a * m + zy), 0, 65535)
    return {"exact sum": requant(acc), "floor(acc/256)*256": requant((acc >> 8) << 8),
            "htp accumulator": requant(htp_accumulator(acc, bsum, zp))}


def qk(za, B=2, M=16, K=64, N=96):
    sa, sb = 6.0 / 65535, 0.03
    a = rng.integers(0, 65536, size=(1, B, M, K)).astype(np.uint16)
    b = rng.integers(0, 256, size=(1, B, K, N)).astype(np.uint8)
    acc = (a.astype(np.int64) - za) @ (b.astype(np.int64) - 128)
    real = acc * (np.float64(np.float32(sa)) * np.float64(np.float32(sb)))
    lo, hi = min(real.min(), 0.0) * 0.3, max(real.max(), 0.0) * 0.3  # tight: 1/m is hundreds of units
    sy = np.float32((hi - lo) / 65535)
    zy = int(np.rint(-lo / sy))
    inits = params("a", sa, za, np.uint16) + params("b", sb, 128, np.uint8) + params("y", sy, zy, np.uint16)
    nodes = [h.make_node("DequantizeLinear", ["a", "a.s", "a.z"], ["af"]),
             h.make_node("DequantizeLinear", ["b", "b.s", "b.z"], ["bf"]),
             h.make_node("MatMul", ["af", "bf"], ["yf"]),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    got = run_on_htp(nodes, [h.make_tensor_value_info("a", T.UINT16, [1, B, M, K]),
                             h.make_tensor_value_info("b", T.UINT8, [1, B, K, N])],
                     [h.make_tensor_value_info("y", T.UINT16, [1, B, M, N])], inits, {"a": a, "b": b})
    m = np.float64(np.float32(sa)) * np.float64(np.float32(sb)) / np.float64(sy)
    bsum = (b.astype(np.int64) - 128).sum(-2, keepdims=True)
    inside = (got > 0) & (got < 65535)  # clamped outputs say nothing about the accumulator
    report(f"q.k zero point {za}", got[inside], {k: v[inside] for k, v in candidates(acc, bsum, za, m, zy).items()})


def pv(B=3, M=16, K=128, N=64):
    sa, sb, sy, zy = 1.0 / 65535, 0.05, 4.0 / 65535, 32768
    inits = params("a", sa, 0, np.uint16) + params("b", sb, 128, np.uint8) + params("y", sy, zy, np.uint16)
    nodes = [h.make_node("DequantizeLinear", ["a", "a.s", "a.z"], ["af"]),
             h.make_node("DequantizeLinear", ["b", "b.s", "b.z"], ["bf"]),
             h.make_node("MatMul", ["af", "bf"], ["yf"]),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    a = rng.integers(0, 600, size=(1, B, M, K)).astype(np.uint16)
    b = rng.integers(0, 256, size=(1, B, K, N)).astype(np.uint8)
    got = run_on_htp(nodes, [h.make_tensor_value_info("a", T.UINT16, [1, B, M, K]),
                             h.make_tensor_value_info("b", T.UINT8, [1, B, K, N])],
                     [h.make_tensor_value_info("y", T.UINT16, [1, B, M, N])], inits, {"a": a, "b": b})
    acc = a.astype(np.int64) @ (b.astype(np.int64) - 128)
    t = acc * (np.float64(np.float32(sa)) * np.float64(np.float32(sb))) / np.float64(np.float32(sy)) + zy
    report("P.V (zero point 0 x symmetric u8)", got, {"round half to even": np.clip(np.rint(t), 0, 65535)})


def htp_add(qa, za, ra, qb, zb, rb, zy):
    """kernels::htp_add_code; ra, rb: float32 scale ratios to the result's."""
    shift = 0
    while shift < 16 and max(ra, rb) * 2.0 ** (shift + 1) < 32768:
        shift += 1
    ma, mb = np.rint(np.float64(ra) * 2.0 ** shift).astype(np.int64), np.rint(np.float64(rb) * 2.0 ** shift).astype(np.int64)
    acc = (qa.astype(np.int64) - za) * ma + (qb.astype(np.int64) - zb) * mb
    return np.clip(((acc + (1 << (shift - 1))) >> shift) + zy, 0, 65535)


def binary_u16(op, sa, za, sb, zb, sy, zy, n):
    """One ONNX binary op (Add, Mul) of two random uint16 tensors onto a uint16 result, on the HTP:
    the inputs and the simulator's codes."""
    inits = params("a", sa, za, np.uint16) + params("b", sb, zb, np.uint16) + params("y", sy, zy, np.uint16)
    nodes = [h.make_node("DequantizeLinear", ["a", "a.s", "a.z"], ["af"]),
             h.make_node("DequantizeLinear", ["b", "b.s", "b.z"], ["bf"]),
             h.make_node(op, ["af", "bf"], ["yf"]),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    a = rng.integers(0, 65536, size=(1, n)).astype(np.uint16)
    b = rng.integers(0, 65536, size=(1, n)).astype(np.uint16)
    got = run_on_htp(nodes, [h.make_tensor_value_info("a", T.UINT16, [1, n]), h.make_tensor_value_info("b", T.UINT16, [1, n])],
                     [h.make_tensor_value_info("y", T.UINT16, [1, n])], inits, {"a": a, "b": b})
    return a, b, got


def add(sa, za, sb, zb, sy, zy, n=8192):
    a, b, got = binary_u16("Add", sa, za, sb, zb, sy, zy, n)
    f32 = np.float32
    ra, rb = f32(f32(sa) / f32(sy)), f32(f32(sb) / f32(sy))
    fsum = ((a.astype(np.int64) - za) * np.float64(f32(sa)) + (b.astype(np.int64) - zb) * np.float64(f32(sb))) / np.float64(f32(sy))
    report(f"add, ratios {ra:.4f} {rb:.4f}", got, {"float sum": np.clip(np.rint(fsum) + zy, 0, 65535),
                                                    "htp integer add": htp_add(a, za, ra, b, zb, rb, zy)})


def softmax_fixed_point(codes, sx):
    d = codes.max(-1, keepdims=True).astype(np.int64) - codes.astype(np.int64)
    e = np.floor(np.exp(-d * np.float64(np.float32(sx))) * 32768)
    total = e.sum(-1, keepdims=True)
    shift = np.floor(np.log2(total)).astype(np.int64) + 15  # the reciprocal in [2^14, 2^15)
    recip = np.minimum(np.rint(2.0 ** shift / total), 32767)  # a signed 16-bit value
    return np.minimum(np.floor(e * recip * 2.0 ** (16 - shift)), 65535)


def softmax(label, x, sx, zx):
    sy = np.float32(1.0 / 65535)
    rows, n = x.shape
    inits = params("x", sx, zx, np.uint16) + params("y", sy, 0, np.uint16)
    nodes = [h.make_node("DequantizeLinear", ["x", "x.s", "x.z"], ["xf"]),
             h.make_node("Softmax", ["xf"], ["yf"], axis=-1),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    got = run_on_htp(nodes, [h.make_tensor_value_info("x", T.UINT16, [rows, n])],
                     [h.make_tensor_value_info("y", T.UINT16, [rows, n])], inits, {"x": x})
    xf = (x.astype(np.float64) - x.max(-1, keepdims=True)) * np.float64(np.float32(sx))
    t = np.exp(xf) / np.exp(xf).sum(-1, keepdims=True) / np.float64(sy)
    report(label, got, {"round half to even": np.rint(t), "floor": np.floor(t),
                        "fixed point": softmax_fixed_point(x, sx)})


def softmax_probes():
    sx, zx = np.float32(280 / 65535), 61000  # a masked-score range of [-260.6, 19.4]
    pairs = np.zeros((4096, 8), np.uint16)
    pairs[:, 0] = zx
    pairs[:, 1] = zx - np.arange(4096)
    softmax("softmax, 2 live of 8, d 0-4095", pairs, sx, zx)
    softmax("softmax, 64 random, 0.5 wide", rng.integers(47151, 49152, size=(256, 64)).astype(np.uint16),
            np.float32(16 / 65535), 49151)
    softmax("softmax, 128 random, 8 wide", rng.integers(zx - 1900, zx + 1, size=(256, 128)).astype(np.uint16), sx, zx)


def mul(label, sa, za, sb, zb, sy, zy, n=8192):
    a, b, got = binary_u16("Mul", sa, za, sb, zb, sy, zy, n)
    f32 = np.float32
    da, db = a.astype(np.int64) - za, b.astype(np.int64) - zb
    t = da * db * (np.float64(f32(sa)) * np.float64(f32(sb)) / np.float64(f32(sy)))
    tf = (da * f32(sa)).astype(f32) * (db * f32(sb)).astype(f32) / f32(sy)
    report(label, got, {"exact, half to even": np.clip(np.rint(t) + zy, 0, 65535),
                        "exact, floor": np.clip(np.floor(t) + zy, 0, 65535),
                        "float32, half to even": np.clip(np.rint(tf) + zy, 0, 65535)})


def sigmoid(sx, zx):
    inits = params("x", sx, zx, np.uint16) + params("y", np.float32(1 / 65535), 0, np.uint16)
    nodes = [h.make_node("DequantizeLinear", ["x", "x.s", "x.z"], ["xf"]),
             h.make_node("Sigmoid", ["xf"], ["yf"]),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    x = np.arange(65536).astype(np.uint16).reshape(1, -1)
    got = run_on_htp(nodes, [h.make_tensor_value_info("x", T.UINT16, [1, 65536])],
                     [h.make_tensor_value_info("y", T.UINT16, [1, 65536])], inits, {"x": x})
    s = 1 / (1 + np.exp(-(x.astype(np.int64) - zx) * np.float64(np.float32(sx))))
    report(f"sigmoid, scale {sx * 65535:.1f}/65535", got, {"half to even": np.rint(s * 65535),
                                                            "2 floor(2^15 s)": np.minimum(2 * np.floor(s * 32768), 65535)})
    print(f"{'':34s} odd codes: {np.mean(got % 2 == 1) * 100:.1f}%")


def rope_sym(sx, zx):
    """kernels::htp_rope_intermediate: [-m, m] over x's range, as quant::asymmetric_encoding."""
    f32 = np.float32
    m = max(abs(f32(0 - zx) * f32(sx)), abs(f32(65535 - zx) * f32(sx)))
    s = max(f32(f32(m + m) / f32(65535)), f32(1e-9))
    return s, int(np.clip(0 - np.rint(f32(-m) / s), 0, 65535))


def rope(sx, zx, sc, zc, sy, zy, S=4, D=16, H=2):
    f32 = np.float32
    ss, zs = rope_sym(sx, zx)
    inits = params("x", sx, zx, np.uint16) + params("c", sc, zc, np.uint16) + params("sn", sc, zc, np.uint16) + \
        params("y", sy, zy, np.uint16) + params("sym", ss, zs, np.uint16) + params("neg", sx, 65535 - zx, np.uint16)
    ints = lambda name, v: nh.from_array(np.array(v, np.int64), name)
    inits += [ints("h0", [0]), ints("h1", [D // 2]), ints("h2", [D]), ints("ax", [-1]), ints("reps", [1, H, 1, 1]),
              ints("tshape", [1, 1, S, D])]
    q = lambda x, e: [h.make_node("QuantizeLinear", [x, e + ".s", e + ".z"], [x + ".q"]),
                      h.make_node("DequantizeLinear", [x + ".q", e + ".s", e + ".z"], [x + ".dq"])]
    nodes = [h.make_node("DequantizeLinear", ["x", "x.s", "x.z"], ["xf"]),
             h.make_node("DequantizeLinear", ["c", "c.s", "c.z"], ["cf"]),
             h.make_node("DequantizeLinear", ["sn", "sn.s", "sn.z"], ["sf"]),
             h.make_node("Slice", ["xf", "h0", "h1", "ax"], ["x1"]), *q("x1", "x"),
             h.make_node("Slice", ["xf", "h1", "h2", "ax"], ["x2"]), *q("x2", "x"),
             h.make_node("Neg", ["x2.dq"], ["nx2"]), *q("nx2", "neg"),
             h.make_node("Concat", ["nx2.dq", "x1.dq"], ["rot"], axis=-1), *q("rot", "sym"),
             h.make_node("Reshape", ["cf", "tshape"], ["c4"]), *q("c4", "c"),
             h.make_node("Tile", ["c4.dq", "reps"], ["ct"]), *q("ct", "c"),
             h.make_node("Reshape", ["sf", "tshape"], ["s4"]), *q("s4", "sn"),
             h.make_node("Tile", ["s4.dq", "reps"], ["st"]), *q("st", "sn"),
             h.make_node("Mul", ["xf", "ct.dq"], ["xc"]), *q("xc", "sym"),
             h.make_node("Mul", ["rot.dq", "st.dq"], ["rs"]), *q("rs", "sym"),
             h.make_node("Add", ["xc.dq", "rs.dq"], ["yf"]),
             h.make_node("QuantizeLinear", ["yf", "y.s", "y.z"], ["y"])]
    x = rng.integers(0, 65536, size=(1, H, S, D)).astype(np.uint16)
    ang = rng.uniform(0, 2 * np.pi, size=(1, S, D // 2))
    ang = np.concatenate([ang, ang], -1)
    c = np.clip(np.rint(np.cos(ang) / sc) + zc, 0, 65535).astype(np.uint16)
    sn = np.clip(np.rint(np.sin(ang) / sc) + zc, 0, 65535).astype(np.uint16)
    got = run_on_htp(nodes, [h.make_tensor_value_info("x", T.UINT16, [1, H, S, D]),
                             h.make_tensor_value_info("c", T.UINT16, [1, S, D]),
                             h.make_tensor_value_info("sn", T.UINT16, [1, S, D])],
                     [h.make_tensor_value_info("y", T.UINT16, [1, H, S, D])], inits, {"x": x, "c": c, "sn": sn})
    dx = (x.astype(np.int64) - zx) * np.float64(f32(sx))
    dc = ((c.astype(np.int64) - zc) * np.float64(f32(sc)))[:, None]
    ds = ((sn.astype(np.int64) - zc) * np.float64(f32(sc)))[:, None]
    rot = np.concatenate([-dx[..., D // 2:], dx[..., :D // 2]], -1)
    once = np.clip(np.rint((dx * dc + rot * ds) / np.float64(f32(sy))) + zy, 0, 65535)
    qs = lambda v: np.clip(np.rint(v / np.float64(ss)) + zs, 0, 65535)
    rq = (qs(rot) - zs) * np.float64(ss)
    xc, rs = qs(dx * dc), qs(rq * ds)
    steps = htp_add(xc, zs, f32(ss / f32(sy)), rs, zs, f32(ss / f32(sy)), zy)
    report("rope", got, {"float, rounded once": once, "four quantized steps": steps})
    for i in np.flatnonzero((once != steps).ravel() & (got.ravel() == steps.ravel()))[:4]:
        hh, s, d = np.unravel_index(i, (H, S, D))
        o = d + D // 2 if d < D // 2 else d - D // 2
        print(f"  {'first' if d < D // 2 else 'second'} half: x {x[0, hh, s, d]} x_other {x[0, hh, s, o]} cos {c[0, s, d]} "
              f"sin {sn[0, s, d]} -> simulator "
              f"{got[0, hh, s, d]}, once {once[0, hh, s, d]:.0f}")


def convert(sa, za, sy, zy):
    inits = params("a", sa, za, np.uint16) + params("y", sy, zy, np.uint16)
    nodes = [h.make_node("DequantizeLinear", ["a", "a.s", "a.z"], ["af"]),
             h.make_node("Concat", ["af", "af"], ["cf"], axis=-1),
             h.make_node("QuantizeLinear", ["cf", "y.s", "y.z"], ["y"])]
    a = np.arange(65536).astype(np.uint16).reshape(1, -1)
    got = run_on_htp(nodes, [h.make_tensor_value_info("a", T.UINT16, [1, 65536])],
                     [h.make_tensor_value_info("y", T.UINT16, [1, 131072])], inits, {"a": a})[0, :65536]
    q = np.arange(65536, dtype=np.int64)
    r = np.float64(np.float32(sa)) / np.float64(np.float32(sy))
    inside = (got > 0) & (got < 65535)
    rounded = np.mean((np.clip(np.rint((q - za) * r) + zy, 0, 65535) == got)[inside])
    M = int(np.rint(r * 2.0 ** 18))
    t = (q - 32768) * M  # y = floor((t + B) / 2^18): B in [lo, hi)
    lo = int((2 ** 18 * got[inside] - t[inside]).max())
    hi = int((2 ** 18 * got[inside] + 2 ** 18 - t[inside]).min())
    extra = (lo / 2 ** 18 - zy - (32768 - za) * M / 2 ** 18) * 16
    print(f"convert, ratio {r:7.4f}, zero points {za:5d} -> {zy:5d}: rounded {100 * rounded:5.1f}%; 18-bit multiplier: "
          f"{'one offset fits' if lo < hi else 'no offset fits'}, offset - exact = {extra:.2f}/16")


if __name__ == "__main__":
    which = sys.argv[1:] or ["rmsnorm", "linear", "qk", "pv", "add", "softmax", "mul", "sigmoid", "rope", "convert"]
    if "rmsnorm" in which:
        rmsnorm()
    if "linear" in which:
        for bits in (8, 4):
            for K, zx in ((64, 32768), (576, 32768), (256, 0), (256, 36964), (128, 1000), (512, 12345), (256, 32868)):
                linear(bits, K, zx)
    if "qk" in which:
        for za in (32768, 0, 12345, 31000, 33333):
            qk(za)
    if "pv" in which:
        pv()
    if "add" in which:
        ratios = np.random.default_rng(11)
        for _ in range(10):
            ra, rb = 10 ** ratios.uniform(-2.5, 0.5), 10 ** ratios.uniform(-2.5, 0.5)
            add(0.001 * ra, int(ratios.integers(0, 65536)), 0.001 * rb, int(ratios.integers(0, 65536)), 0.001,
                int(ratios.integers(20000, 45000)))
    if "softmax" in which:
        softmax_probes()
    f32 = np.float32
    if "mul" in which:
        mul("x symmetric * cos", f32(6 / 65535), 32768, f32(2 / 65535), 32768, f32(6 / 65535), 32768)
        mul("x * cos", f32(5 / 65535), 30000, f32(2 / 65535), 32768, f32(6 / 65535), 32768)
        mul("x * sigmoid", f32(20 / 65535), 40000, f32(1 / 65535), 0, f32(12 / 65535), 5000)
        for _ in range(4):
            mul("random", f32(10 ** rng.uniform(-5, -3)), int(rng.integers(0, 65536)), f32(10 ** rng.uniform(-5, -3)),
                int(rng.integers(0, 65536)), f32(10 ** rng.uniform(-5, -3)), int(rng.integers(20000, 45000)))
    if "sigmoid" in which:
        for sx, zx in ((8, 32768), (20, 40000), (30, 20000), (2, 30000), (60, 50000)):
            sigmoid(f32(sx / 65535), zx)
    if "rope" in which:
        rope(f32(6 / 65535), 31000, f32(2.0001 / 65535), 32767, f32(7 / 65535), 33000)
    if "convert" in which:
        for _ in range(6):
            sa = f32(10 ** rng.uniform(-5, -3))
            convert(sa, int(rng.integers(0, 65536)), f32(sa * 10 ** rng.uniform(-1.2, 1.2)), int(rng.integers(0, 65536)))
