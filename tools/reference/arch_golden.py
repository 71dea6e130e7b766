#!/usr/bin/env python3
"""Writes tests/fixtures/golden/arch_reference.json: the float64 logits of arch_reference.py at
every position of three prompts on each synthetic architecture model of `plinth synth-model --arch`.

    OPENBLAS_NUM_THREADS=1 python3 tools/reference/arch_golden.py [--plinth build/plinth]

For each architecture the model is written by plinth (seed 7, f32 matrices); the fixture records the
file's FNV-1a 64 hash, so the C++ test (tests/plugins/backend_cpu/test_arch_reference.cpp), which
writes the same file itself, knows it compares against logits of the same bytes. Logits are stored
as base64 of little-endian float32 (the float64 values rounded once), row-major [positions, vocab].
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch_reference import ArchModel  # noqa: E402

ARCHS = ["llama", "llama3", "qwen2", "qwen3", "gemma3", "phi3", "granite", "olmo2", "smollm3"]
SEED = 7
LENGTHS = [5, 11, 19]  # 19 > gemma3's window of 8: the sliding window masks


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plinth", default="build/plinth")
    ap.add_argument("--out", default="tests/fixtures/golden/arch_reference.json")
    ap.add_argument("--models-dir", help="read <arch>.gguf files written earlier (seed 7) instead")
    a = ap.parse_args()
    out = {"command": "OPENBLAS_NUM_THREADS=1 python3 tools/reference/arch_golden.py",
           "seed": SEED, "models": []}
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHS:
            path = os.path.join(tmp, arch + ".gguf")
            if a.models_dir:
                path = os.path.join(a.models_dir, arch + ".gguf")
            else:
                subprocess.run([a.plinth, "synth-model", "--arch", arch, "--seed", str(SEED),
                                "--output", path], check=True, stdout=subprocess.DEVNULL)
            with open(path, "rb") as f:
                digest = fnv1a64(f.read())
            m = ArchModel.load(path)
            rng = np.random.default_rng(1000 + ARCHS.index(arch))
            prompts = []
            for n in LENGTHS:
                ids = [int(x) for x in rng.integers(3, m.d.vocab, size=n)]
                logits = m.logits(ids).astype("<f4")
                prompts.append({"ids": ids,
                                "logits_f32_b64": base64.b64encode(logits.tobytes()).decode()})
            out["models"].append({"arch": arch, "fnv1a64": f"{digest:016x}", "vocab": m.d.vocab,
                                  "prompts": prompts})
            print(f"{arch}: vocab {m.d.vocab}, hash {digest:016x}", file=sys.stderr)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
