#!/usr/bin/env python3
"""Writes tests/fixtures/golden/arch_llama_cpp.json: natively built llama.cpp (the llama.cpp that
llama-cpp-python 0.3.36 vendors, tools/bench/build_llama_cpp.sh) on the synthetic architecture
models of `plinth synth-model --arch` (seed 7, the files of arch_reference.json), teacher-forced:
each prompt of arch_reference.json evaluated in one pass with logits at every position, F32 KV
cache. Per position it records llama.cpp's top-1 id and its top-1/top-2 margin, and per
architecture the largest |llama.cpp - float64 reference| logit difference (for information:
llama.cpp's own numerics are no tight oracle -- its CPU GELU reads an f16 table, its RoPE angles
are float powers).

    C=~/.cache/plinth/llama.cpp-0.3.36
    python3 -m venv /tmp/lc && CMAKE_ARGS=-DLLAMA_BUILD=OFF /tmp/lc/bin/pip install \
        $C/download/llama_cpp_python-0.3.36.tar.gz      # the Python package alone (or $C/venv)
    /tmp/lc/bin/python tools/reference/arch_llama_cpp.py --lib $C/build/bin --plinth build/plinth

Measured (2026-12-04; granite, olmo2, smollm3 2026-12-05): max |llama.cpp - float64 reference|
over every logit of every position is 1.5e-5 (llama, qwen2, qwen3, smollm3), 1.2e-6 (llama3),
1.4e-6 (phi3), 1.9e-6 (granite), 1.5e-6 (olmo2) and 3.2e-3 (gemma3: GELU).

tests/plugins/backend_cpu/test_arch_reference.cpp then checks that plinth's greedy id equals
llama.cpp's at every position whose margin is clear.
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="llama.cpp's build/bin (libllama.so)")
    ap.add_argument("--plinth", default="build/plinth")
    ap.add_argument("--golden", default="tests/fixtures/golden/arch_reference.json")
    ap.add_argument("--out", default="tests/fixtures/golden/arch_llama_cpp.json")
    a = ap.parse_args()
    os.environ["LLAMA_CPP_LIB_PATH"] = os.path.abspath(os.path.expanduser(a.lib))
    import llama_cpp  # noqa: E402  (after LLAMA_CPP_LIB_PATH)

    golden = json.load(open(a.golden))
    out = {"command": "C=~/.cache/plinth/llama.cpp-0.3.36; PY=<python with llama-cpp-python "
                      "0.3.36, LLAMA_BUILD=OFF>; $PY tools/reference/arch_llama_cpp.py --lib "
                      "$C/build/bin --plinth build/plinth",
           "llama_cpp_python": llama_cpp.__version__, "seed": golden["seed"], "models": []}
    with tempfile.TemporaryDirectory() as tmp:
        for m in golden["models"]:
            arch = m["arch"]
            path = os.path.join(tmp, arch + ".gguf")
            subprocess.run([a.plinth, "synth-model", "--arch", arch, "--seed",
                            str(golden["seed"]), "--output", path], check=True,
                           stdout=subprocess.DEVNULL)
            llm = llama_cpp.Llama(model_path=path, n_ctx=256, n_batch=256, logits_all=True,
                                  n_threads=2, type_k=0, type_v=0, verbose=False)
            vocab = m["vocab"]
            prompts, worst = [], 0.0
            for p in m["prompts"]:
                ids = p["ids"]
                llm.reset()
                llm.eval(ids)
                got = np.array(llm.scores[: len(ids)], dtype=np.float64)
                ref = np.frombuffer(base64.b64decode(p["logits_f32_b64"]), dtype="<f4").reshape(
                    len(ids), vocab)
                worst = max(worst, float(np.max(np.abs(got - ref))))
                order = np.argsort(-got, axis=1, kind="stable")
                top1 = [int(i) for i in order[:, 0]]
                margin = [float(got[t, order[t, 0]] - got[t, order[t, 1]]) for t in range(len(ids))]
                prompts.append({"ids": ids, "top1": top1, "margin": margin})
            del llm
            out["models"].append({"arch": arch, "fnv1a64": m["fnv1a64"], "prompts": prompts,
                                  "max_abs_diff_vs_float64_reference": worst})
            print(f"{arch}: max |llama.cpp - reference| = {worst:.3g}", file=sys.stderr)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
