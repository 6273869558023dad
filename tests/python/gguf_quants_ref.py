#!/usr/bin/env python3
"""Reference data for the GGUF dequantizers, made with the `gguf` package (llama.cpp's own Python
library). Writes OUT.gguf holding, for every type T in Q8_0 Q4_0 Q4_1 Q4_K Q5_K Q6_K F16 BF16:
  q.T         the quantized tensor (stored as type T)
  expected.T  gguf.quants.dequantize() of it (F32)
  source.T    the float input that was quantized (F32; for the k-quants, which the package cannot
              quantize, the blocks are random bytes with finite scales and source.T is absent)
Usage: gguf_quants_ref.py OUT.gguf
"""
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES

ROWS, COLS = 4, 512


def main() -> None:
    out = sys.argv[1]
    rng = np.random.default_rng(1234)
    w = gguf.GGUFWriter(out, "quants")
    for qt in (T.Q8_0, T.Q4_0, T.Q4_1, T.F16, T.BF16):
        x = (rng.standard_normal((ROWS, COLS)) * 0.05).astype(np.float32)
        x[0, 3] = 0.9  # an outlier sets a block scale
        x[1, 40:72] = 0.0  # an all-zero block
        q = gguf.quants.quantize(x, qt)
        deq = gguf.quants.dequantize(q, qt).astype(np.float32)
        w.add_tensor(f"q.{qt.name}", q, raw_dtype=qt)
        w.add_tensor(f"expected.{qt.name}", deq)
        w.add_tensor(f"source.{qt.name}", x)
    for qt in (T.Q4_K, T.Q5_K, T.Q6_K):
        block, size = GGML_QUANT_SIZES[qt]
        nblocks = ROWS * COLS // block
        raw = rng.integers(0, 256, size=(nblocks, size), dtype=np.uint8)
        halves = (rng.standard_normal((nblocks, 2)) * 0.01).astype(np.float16).view(np.uint8)
        if qt == T.Q6_K:
            raw[:, size - 2:] = halves[:, :2]  # d is the last field
        else:
            raw[:, 0:4] = halves  # d, dmin lead the block
        q = raw.reshape(ROWS, -1)
        deq = gguf.quants.dequantize(q, qt).astype(np.float32)
        w.add_tensor(f"q.{qt.name}", q, raw_dtype=qt)
        w.add_tensor(f"expected.{qt.name}", deq)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
