#!/usr/bin/env python3
"""Writes a teacher-forced llama.cpp fixture for a real GGUF file (default: Gemma 3 270M Q4_K_M,
tests/fixtures/golden/gemma3_270m_llama_cpp.json): natively built llama.cpp (the llama.cpp that
llama-cpp-python 0.3.36 vendors, tools/bench/build_llama_cpp.sh), F32 KV cache, on the file as
shipped. For each prompt, llama.cpp tokenizes it (with BOS, special tokens parsed), decodes
`--generate` greedy tokens after it (the prompt as one batch, then one token per step), and the
fixture records the whole sequence (prompt + llama.cpp's continuation) with, at every position
from `first` on, llama.cpp's top-1 id, its top-1/top-2 margin and its top-5 (id, logit) pairs.
One prompt is longer than Gemma 3 270M's sliding window (512): the start of docs/architecture.md,
~650 tokens, recorded from 48 positions before its end, so the local layers' window is exercised
at every recorded position.

tests/plugins/backend_cpu/test_gemma3.cpp feeds each sequence to backend_cpu in one prefill
(teacher-forced: both engines see the same prefix at every position) and checks that its greedy
id equals llama.cpp's wherever llama.cpp's margin is clear. llama.cpp is no tight oracle on a
quantized file (it quantizes activations to Q8_K / Q8_0 for its dot products, its CPU GELU reads
an f16 table), hence the margin.

    C=~/.cache/plinth/llama.cpp-0.3.36
    LLAMA_CPP_LIB_PATH=$C/build/bin $C/venv/bin/python tools/reference/real_llama_cpp.py \\
        --lib $C/build/bin --model models/gemma-3-270m-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

import numpy as np

# Plain text, a Gemma chat turn (the chat template's own markup), code, French, a list.
PROMPTS = [
    ("plain_capital", "The capital of France is"),
    ("chat_capital", "<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n"
                     "<start_of_turn>model\n"),
    ("story", "Once upon a time, in a small village at the edge of a great forest, there lived"),
    ("code", "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n"),
    ("french", "La tour Eiffel est un monument situé à"),
    ("chat_haiku", "<start_of_turn>user\nWrite a haiku about the sea.<end_of_turn>\n"
                   "<start_of_turn>model\n"),
]
TOP_K = 5
LONG_CHARS = 2600  # of docs/architecture.md: ~650 Gemma 3 tokens
RECORD_LONG = 48  # positions recorded before the end of a long prompt


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="llama.cpp's build/bin (libllama.so)")
    ap.add_argument("--model", default="models/gemma-3-270m-q4_k_m.gguf")
    ap.add_argument("--generate", type=int, default=24, help="greedy tokens after each prompt")
    ap.add_argument("--out", default="tests/fixtures/golden/gemma3_270m_llama_cpp.json")
    a = ap.parse_args()
    os.environ["LLAMA_CPP_LIB_PATH"] = os.path.abspath(os.path.expanduser(a.lib))
    import llama_cpp  # noqa: E402  (after LLAMA_CPP_LIB_PATH)

    llm = llama_cpp.Llama(model_path=a.model, n_ctx=1024, n_batch=1024, logits_all=True,
                          n_threads=2, type_k=0, type_v=0, verbose=False)
    out = {"command": "C=~/.cache/plinth/llama.cpp-0.3.36; LLAMA_CPP_LIB_PATH=$C/build/bin "
                      "$C/venv/bin/python tools/reference/real_llama_cpp.py --lib $C/build/bin "
                      f"--model {a.model} --generate {a.generate}",
           "llama_cpp_python": llama_cpp.__version__, "model": os.path.basename(a.model),
           "model_sha256": sha256(a.model), "model_bytes": os.path.getsize(a.model),
           "kv_type": "f32", "prompts": []}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                           "architecture.md"), encoding="utf-8") as f:
        long_text = f.read()[:LONG_CHARS]
    for name, text in PROMPTS + [("long_swa", long_text)]:
        prompt = llm.tokenize(text.encode(), add_bos=True, special=True)
        llm.reset()
        llm.eval(prompt)
        ids = list(prompt)
        for _ in range(a.generate):
            nxt = int(np.argmax(llm.scores[len(ids) - 1]))
            ids.append(nxt)
            llm.eval([nxt])
        # Logits at every position from `first` but the last fed token's (which chose nothing).
        first = max(0, len(prompt) - RECORD_LONG) if len(prompt) > 2 * RECORD_LONG else 0
        got = np.array(llm.scores[first: len(ids) - 1], dtype=np.float64)
        order = np.argsort(-got, axis=1, kind="stable")
        top1 = [int(i) for i in order[:, 0]]
        margin = [float(got[t, order[t, 0]] - got[t, order[t, 1]]) for t in range(len(got))]
        top = [[[int(i), float(got[t, i])] for i in order[t, :TOP_K]] for t in range(len(got))]
        out["prompts"].append({"name": name, "text": text, "n_prompt": len(prompt), "ids": ids,
                               "first": first, "top1": top1, "margin": margin, "top": top})
        cont = llm.detokenize(ids[len(prompt):]).decode("utf-8", "replace")
        print(f"{name}: {len(prompt)} prompt + {a.generate} tokens (from {first}), min margin "
              f"{min(margin):.3f}: {cont!r}", file=sys.stderr)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
