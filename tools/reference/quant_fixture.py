#!/usr/bin/env python3
"""Writes the weight-format fixtures of the CPU kernels tests (tests/fixtures/quant/).

For each type gguf-py can write (F32, F16, BF16, Q8_0, Q4_0, Q4_1) random float rows are quantized
with gguf-py (gguf.quants.quantize) and dequantized back with gguf.quants.dequantize, the
independent reference the C++ dequantize must match bit for bit. For the types plinth only reads
(Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS: gguf-py has no quantizer for most)
the blocks are random bytes whose f16 fields (d, dmin, m) are drawn from zero (either sign), f16
subnormals, normal values and negative normal values, and gguf.quants.dequantize decodes them. Activation rows x are stored as f32 together
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
COLS = 512  # 16 blocks of 32, 2 super-blocks of 256
N = 7  # activation rows: one group of 4 + a remainder of 3
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1"]
# Read-only types: byte offsets of the f16 fields in one block (ggml-common.h).
RANDOM_TYPES = {
    "Q5_0": [0],
    "Q5_1": [0, 2],
    "Q2_K": [80, 82],
    "Q3_K": [108],
    "Q4_K": [0, 2],
    "Q5_K": [0, 2],
    "Q6_K": [208],
    "IQ4_NL": [0],
    "IQ4_XS": [0],
}


def f16_field(rng: np.random.Generator, count: int) -> np.ndarray:
    """f16 values: 10% zero (either sign), 10% subnormal, 60% normal, 20% negative normal."""
    kind = rng.choice(4, size=count, p=[0.1, 0.1, 0.6, 0.2])
    normal = rng.uniform(1e-3, 0.05, count).astype(np.float16).view(np.uint16)
    subnormal = rng.integers(1, 0x400, count, dtype=np.uint16) | (rng.integers(0, 2, count, dtype=np.uint16) << 15)
    zero = rng.integers(0, 2, count, dtype=np.uint16) << 15
    out = np.where(kind == 0, zero, np.where(kind == 1, subnormal, normal))
    return np.where(kind == 3, normal | np.uint16(0x8000), out).astype(np.uint16)


def random_blocks(rng: np.random.Generator, qtype, fields: list) -> np.ndarray:
    block_elems, block_bytes = gguf.constants.GGML_QUANT_SIZES[qtype]
    nblocks = ROWS * COLS // block_elems
    raw = rng.integers(0, 256, size=(nblocks, block_bytes), dtype=np.uint8)
    for off in fields:
        raw[:, off:off + 2] = f16_field(rng, nblocks).view(np.uint8).reshape(nblocks, 2)
    return raw.reshape(ROWS, -1)


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

    for name, fields in RANDOM_TYPES.items():
        qtype = gguf.GGMLQuantizationType[name]
        q = random_blocks(rng, qtype, fields)
        deq = gguf.quants.dequantize(q, qtype).astype(np.float32, copy=False).reshape(ROWS, COLS)
        raw = q.tobytes()
        (out / f"w_{name}.bin").write_bytes(raw)
        deq.tofile(out / f"w_{name}.deq.f32")
        index["types"][name] = {"weights": f"w_{name}.bin", "bytes": len(raw), "dequantized": f"w_{name}.deq.f32",
                                "source": "random bytes, f16 fields drawn from zero/subnormal/normal/negative"}

    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"wrote {len(list(out.iterdir()))} files, {total} bytes to {out}")


if __name__ == "__main__":
    main()
