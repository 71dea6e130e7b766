#!/usr/bin/env python3
"""Writes tests/fixtures/golden/kquant_llama_cpp.json and kquant_synthetic_llama_cpp.json.

kquant_synthetic_llama_cpp.json (for CI, which has neither llama.cpp nor the requantized files):
natively built llama.cpp teacher-forced on `plinth synth-model --arch llama --quant-mix --seed 7`
(hidden 256, its matrices cycling through every quantized type plinth reads as random well-formed
blocks: host/model/synthetic_arch.hpp), F32 KV cache, on 4 fixed random token sequences; per
position llama.cpp's top-1 id and top-1/top-2 margin, and the file's FNV-1a 64 (the test rebuilds
the file and checks it is the same). tests/plugins/backend_cpu/test_kquant_synthetic.cpp compares.

kquant_llama_cpp.json: natively built llama.cpp (the llama.cpp that
llama-cpp-python 0.3.36 vendors, tools/bench/build_llama_cpp.sh) teacher-forced on SmolLM2-135M-
Instruct requantized by its own llama-quantize into the K-quant / Q5 / IQ4 recipes (Q4_K_M, Q5_K_M,
Q6_K, Q3_K_M, Q2_K, IQ4_XS: `tools/bench/build_llama_cpp.sh --quantize
models/SmolLM2-135M-Instruct.Q4_1.gguf`), F16 KV cache (llama.cpp's default). The token sequences
are the 10 prompts of tests/fixtures/golden/smollm2_greedy.json followed by their 32 greedy ids
(natural text the model continues), each evaluated in one pass with logits at every position.
Per position it records llama.cpp's top-1 id and its top-1/top-2 margin; per file its size and
SHA-256 (the bytes the ids were computed on: another llama-quantize may write other bytes).

    C=~/.cache/plinth/llama.cpp-0.3.36
    $C/venv/bin/python tools/reference/kquant_llama_cpp.py --lib $C/build/bin --plinth build/plinth

tests/plugins/backend_cpu/test_kquant_llama_cpp.cpp then checks, for each file that is present
with those bytes, that plinth's greedy id equals llama.cpp's wherever llama.cpp's margin is clear.
llama.cpp pairs K-quant weights with Q8_K activations (one scale per 256 values) and plinth's
int8 path with Q8 per 32 (its float path with f32 activations), so their logits differ by a few
tenths: only clear margins are compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

RECIPES = ["Q4_K_M", "Q5_K_M", "Q6_K", "Q3_K_M", "Q2_K", "IQ4_XS"]


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fnv1a64(path: str) -> str:
    h = 0xCBF29CE484222325
    for b in open(path, "rb").read():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def teacher_forced(llama_cpp, path: str, seqs: list[list[int]], **kw) -> tuple[list, list]:
    llm = llama_cpp.Llama(model_path=path, n_ctx=256, n_batch=256, logits_all=True, n_threads=2,
                          verbose=False, **kw)
    top1, margin = [], []
    for ids in seqs:
        llm.reset()
        llm.eval(ids)
        got = np.array(llm.scores[: len(ids)], dtype=np.float64)
        order = np.argsort(-got, axis=1, kind="stable")
        top1.append([int(i) for i in order[:, 0]])
        margin.append([round(float(got[t, order[t, 0]] - got[t, order[t, 1]]), 5)
                       for t in range(len(ids))])
    del llm
    return top1, margin


def synthetic(llama_cpp, plinth: str, out_path: str) -> None:
    rng = np.random.default_rng(7)
    seqs = [[int(i) for i in rng.integers(3, 512, size=n)] for n in (8, 16, 24, 32)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "quant_mix.gguf")
        cmd = [plinth, "synth-model", "--arch", "llama", "--quant-mix", "--seed", "7", "--output",
               path]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        top1, margin = teacher_forced(llama_cpp, path, seqs, type_k=0, type_v=0)
        out = {"command": "C=~/.cache/plinth/llama.cpp-0.3.36; $C/venv/bin/python "
                          "tools/reference/kquant_llama_cpp.py --lib $C/build/bin --plinth "
                          "build/plinth",
               "llama_cpp_python": llama_cpp.__version__,
               "synth_model": " ".join(cmd[1:-1]), "fnv1a64": fnv1a64(path),
               "sequences": seqs, "top1": top1, "margin": margin}
    with open(out_path, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("synthetic quant mix: done", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="llama.cpp's build/bin (libllama.so)")
    ap.add_argument("--models", default="models", help="folder of SmolLM2-135M-Instruct.<R>.gguf")
    ap.add_argument("--golden", default="tests/fixtures/golden/smollm2_greedy.json")
    ap.add_argument("--out", default="tests/fixtures/golden/kquant_llama_cpp.json")
    ap.add_argument("--recipes", default=",".join(RECIPES))
    ap.add_argument("--plinth", default="build/plinth", help="for synth-model")
    ap.add_argument("--only", choices=["synthetic", "files"], help="write one of the two fixtures")
    ap.add_argument("--synthetic-out",
                    default="tests/fixtures/golden/kquant_synthetic_llama_cpp.json")
    a = ap.parse_args()
    os.environ["LLAMA_CPP_LIB_PATH"] = os.path.abspath(os.path.expanduser(a.lib))
    import llama_cpp  # noqa: E402  (after LLAMA_CPP_LIB_PATH)

    if a.only != "files":
        synthetic(llama_cpp, a.plinth, a.synthetic_out)
    if a.only == "synthetic":
        return 0
    golden = json.load(open(a.golden))
    seqs = [p["prompt_ids"] + p["greedy_ids"] for p in golden["prompts"]]
    out = {
        "command": "C=~/.cache/plinth/llama.cpp-0.3.36; $C/venv/bin/python "
                   "tools/reference/kquant_llama_cpp.py --lib $C/build/bin",
        "llama_cpp_python": llama_cpp.__version__,
        "make_files": "tools/bench/build_llama_cpp.sh --quantize "
                      "models/SmolLM2-135M-Instruct.Q4_1.gguf",
        "sequences": seqs,
        "files": [],
    }
    for recipe in a.recipes.split(","):
        name = f"SmolLM2-135M-Instruct.{recipe}.gguf"
        path = os.path.join(a.models, name)
        if not os.path.exists(path):
            print(f"{name}: absent, skipped", file=sys.stderr)
            continue
        top1, margin = teacher_forced(llama_cpp, path, seqs)
        out["files"].append({"recipe": recipe, "file": name, "bytes": os.path.getsize(path),
                             "sha256": sha256(path), "top1": top1, "margin": margin})
        print(f"{recipe}: done", file=sys.stderr)
    if not out["files"]:
        print("no file present: kept " + a.out, file=sys.stderr)
        return 1
    with open(a.out, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
