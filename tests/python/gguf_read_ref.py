#!/usr/bin/env python3
"""Reads a GGUF file with llama.cpp's `gguf` package and prints JSON: scalar/array metadata,
and per tensor its type name, row-major shape and the sum of its dequantized values.
Usage: gguf_read_ref.py FILE.gguf"""
import json
import sys

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType


def main() -> None:
    r = GGUFReader(sys.argv[1])
    meta = {}
    for name, field in r.fields.items():
        if name.startswith("GGUF."):
            continue
        t = field.types[0]
        if t == GGUFValueType.ARRAY and (len(field.types) < 2 or field.types[1] == GGUFValueType.ARRAY):
            continue  # empty or nested arrays: the package's contents() does not render them
        meta[name] = field.contents()
    tensors = {}
    for t in r.tensors:
        values = gguf.quants.dequantize(t.data, t.tensor_type)
        tensors[t.name] = {
            "type": t.tensor_type.name,
            "shape": [int(d) for d in reversed(t.shape)],
            "sum": float(np.asarray(values, dtype=np.float64).sum()),
        }
    print(json.dumps({"metadata": meta, "tensors": tensors}, ensure_ascii=False, default=float))


if __name__ == "__main__":
    main()
