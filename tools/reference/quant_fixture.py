#!/usr/bin/env python3
"""Writes the weight-format fixtures of the CPU kernels tests (tests/fixtures/quant/).

For each type (F32, F16, BF16, Q8_0, Q4_0, Q4_1) random float rows are quantized with gguf-py
(gguf.quants.quantize) and dequantized back with gguf.quants.dequantize, the independent
reference the C++ dequantize must match bit for bit. Activation rows x are stored as f32 together
with their gguf Q8_0 quantization, which the C++ activation quantizer must match too.

Regenerate (deterministic, seed fixed):
    python3 tools/reference/quant_fixture.py --out tests/fixtures/quant
"""
import argparse
import importlib.metadata
import json
import pathlib

import gguf
import numpy as np

ROWS = 19  # odd: not a multiple of the thread count
COLS = 160  # 5 blocks of 32
N = 7  # activation rows: one group of 4 + a remainder of 3
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1"]


def weights(rng: np.random.Generator) -> np.ndarray:
    w = rng.standard_normal((ROWS, COLS)).astype(np.float32) * 0.05
    w[1, :32] = 0.0  # an all-zero block: d = 0
    w[2, 32:64] += 0.5  # an offset block: Q4_1's minimum matters
    w[3, :32] = rng.uniform(1e-7, 5e-6, 32)  # f16 subnormals
    w[4] *= 40.0  # a large-range row
    return w


def activations(rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((N, COLS)).astype(np.float32)
    x[1, :32] = 0.0  # an all-zero block
    # exact halves after scaling (amax 127 → d = 1): roundf must round away from zero
    x[2, :32] = np.array([127.0, -127.0] + [k + 0.5 for k in range(-15, 15)], dtype=np.float32)
    x[3] *= 1e3
    x[4] *= 1e-3
    return x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="tests/fixtures/quant")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    index = {
        "generator": "python3 tools/reference/quant_fixture.py --out tests/fixtures/quant",
        "gguf_version": importlib.metadata.version("gguf"),
        "seed": args.seed,
        "rows": ROWS,
        "cols": COLS,
        "n": N,
        "x": "x.f32",
        "x_q8_0": "x.q8_0",
        "types": {},
    }
    x = activations(rng)
    x.tofile(out / "x.f32")
    gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q8_0).tofile(out / "x.q8_0")

    for name in TYPES:
        qtype = gguf.GGMLQuantizationType[name]
        w = weights(rng)
        q = np.ascontiguousarray(gguf.quants.quantize(w, qtype))
        deq = gguf.quants.dequantize(q, qtype).astype(np.float32, copy=False).reshape(ROWS, COLS)
        raw = q.view(np.uint8).tobytes()
        (out / f"w_{name}.bin").write_bytes(raw)
        deq.tofile(out / f"w_{name}.deq.f32")
        index["types"][name] = {"weights": f"w_{name}.bin", "bytes": len(raw), "dequantized": f"w_{name}.deq.f32"}

    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {len(list(out.iterdir()))} files, {total} bytes to {out}")


if __name__ == "__main__":
    main()
