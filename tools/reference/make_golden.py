#!/usr/bin/env python3
"""Write tests/fixtures/golden/smollm2_greedy.json: greedy continuations and top-k logits from the
NumPy reference (reference.py, float64), cross-checked against llama.cpp (llama-cpp-python).

Run from the repository root:
    OPENBLAS_NUM_THREADS=1 python3 tools/reference/make_golden.py

Per prompt it records: the text, the prompt ids (llama.cpp's tokenizer), the 32 greedy ids of the
reference, the chosen token's logit and the top1-top2 margin at every step, the top-5 (id, logit)
at steps 0, 8, 16, 31 (step k = the logits that chose generated token k; step 0 = last prompt
position), the max |logit| difference of a float32 run of the same reference, and llama.cpp's
agreement (greedy ids, first difference, logits difference on the reference's token sequence).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import json
import os
import platform
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import Model  # noqa: E402

N_GENERATE = 32
TOP_K = 5
TOP_STEPS = [0, 8, 16, 31]
RECOMMENDED_TOL = 1e-3  # max |logit| difference for a float32 implementation; see "tolerance"
SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chatml(turns) -> str:
    """ChatML as in the model's tokenizer.chat_template, default system message, generation prompt."""
    msgs = [("system", SYSTEM)] + list(turns)
    return "".join(f"<|im_start|>{r}\n{c}<|im_end|>\n" for r, c in msgs) + "<|im_start|>assistant\n"


PRINTING = (
    "The history of the printing press begins in the fifteenth century, when Johannes Gutenberg "
    "developed a system of movable metal type in Mainz. Before this invention, books were copied by "
    "hand, a slow and expensive process that limited the spread of knowledge. Within a few decades, "
    "printing shops appeared in cities across Europe, and the number of books in circulation grew "
    "from thousands to millions. Scholars could now compare identical copies of a text, which helped "
    "to standardize spelling and grammar, and ideas travelled faster than ever before. Governments, churches and merchants "
    "soon relied on printed forms, maps and records. In summary,")

# (name, chat, text). chat=True: the <|im_start|>/<|im_end|> markers are special tokens.
PROMPTS = [
    ("plain_short", False, "The capital of France is"),
    ("plain_story", False, "Once upon a time, in a small village by the sea,"),
    ("plain_code", False, 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'),
    ("plain_french", False, "La ville de Paris est célèbre pour"),
    ("plain_counting", False, "1, 2, 3, 4, 5, 6,"),
    ("plain_long", False, PRINTING),
    ("chat_capital", True, chatml([("user", "What is the capital of France?")])),
    ("chat_code", True, chatml([("user", "Write a Python function that checks whether a number is prime.")])),
    ("chat_french", True, chatml([("user", "Explique-moi en deux phrases ce qu'est la photosynthèse.")])),
    ("chat_multiturn", True, chatml([
        ("user", "I have three apples and I buy five more. How many apples do I have?"),
        ("assistant", "You have eight apples."),
        ("user", "Now I give two of them to my sister. How many are left? Explain step by step.")])),
]


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def top_k(logits: np.ndarray, k: int):
    idx = np.argsort(-logits, kind="stable")[:k]
    return [[int(i), round(float(logits[i]), 5)] for i in idx]


def margin(logits: np.ndarray) -> float:
    a = np.partition(logits, -2)[-2:]
    return float(a[1] - a[0])


def first_diff(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


class LlamaCpp:
    """llama.cpp through llama-cpp-python: full-precision logits of every evaluated position.
    f32_kv: keep the KV cache in F32 without flash attention (default llama.cpp uses F16)."""

    def __init__(self, model_path: str, f32_kv: bool = False):
        from llama_cpp import Llama
        kw = dict(type_k=0, type_v=0, flash_attn=False) if f32_kv else {}
        self.llm = Llama(model_path=model_path, logits_all=True, n_ctx=2048, n_threads=2, verbose=False, **kw)

    def logits(self, ids) -> np.ndarray:  # (len(ids), vocab) float32
        self.llm.reset()
        self.llm.eval(list(ids))
        return np.array(self.llm.scores[: len(ids)], dtype=np.float32)

    def greedy(self, prompt_ids, n: int):
        self.llm.reset()
        self.llm.eval(list(prompt_ids))
        out = []
        for k in range(n):
            tok = int(np.argmax(self.llm.scores[self.llm.n_tokens - 1]))
            out.append(tok)
            if k + 1 < n:
                self.llm.eval([tok])
        return out


def make_f32_copy(model_path: str, out_path: str) -> None:
    """Requantize to ALL_F32 with llama.cpp's own tool: every tensor becomes its exact dequantized
    value, so llama.cpp computes with float activations (no Q8 quantization of the dot products)."""
    import ctypes
    import llama_cpp
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = llama_cpp.LLAMA_FTYPE_ALL_F32
    p.allow_requantize = True
    p.nthread = 2
    if llama_cpp.llama_model_quantize(model_path.encode(), out_path.encode(), ctypes.byref(p)) != 0:
        raise RuntimeError(f"llama_model_quantize {model_path} -> {out_path} failed")


def llama_cpp_check(lcp: LlamaCpp, ids, out, steps):
    """Logits difference on the reference's own tokens (teacher-forced) and llama.cpp's greedy run."""
    lg = lcp.logits(ids + out[:-1])[len(ids) - 1:]  # (32, vocab)
    dl = np.abs(lg.astype(np.float64) - steps).max(axis=1)
    lcp_out = lcp.greedy(ids, N_GENERATE)
    fd = first_diff(out, lcp_out)
    rec = {"greedy_agree": fd is None, "greedy_first_diff": fd}
    if fd is not None:
        rec["greedy_ids"] = lcp_out
    rec["max_abs_logit_diff_step0"] = float(f"{dl[0]:.3g}")
    rec["max_abs_logit_diff_all_steps"] = float(f"{dl.max():.3g}")
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--out", default="tests/fixtures/golden/smollm2_greedy.json")
    a = ap.parse_args()

    import llama_cpp
    from llama_cpp import Llama
    vocab = Llama(model_path=a.model, vocab_only=True, verbose=False)
    lcp = LlamaCpp(a.model)
    f32_dir = tempfile.mkdtemp(prefix="plinth_ref_")
    f32_path = os.path.join(f32_dir, "model_f32.gguf")
    make_f32_copy(a.model, f32_path)
    lcp32 = LlamaCpp(f32_path, f32_kv=True)
    ref64 = Model.load(a.model, np.float64)
    ref32 = Model.load(a.model, np.float32)

    records, worst32, worst_lcp, worst_lcp0, worst_f32w = [], 0.0, 0.0, 0.0, 0.0
    all_f32w_agree, min_margin = True, float("inf")
    total_gen_s = 0.0
    for name, chat, text in PROMPTS:
        ids = [int(t) for t in vocab.tokenize(text.encode(), add_bos=False, special=chat)]
        t0 = time.time()
        out, steps = ref64.generate_greedy(ids, N_GENERATE)
        gen_s = time.time() - t0
        total_gen_s += gen_s
        steps = np.stack(steps)  # (32, vocab) float64
        out32, steps32 = ref32.generate_greedy(ids, N_GENERATE)
        n_same32 = first_diff(out, out32)
        # compare float32 logits only while both runs follow the same tokens
        upto = N_GENERATE if n_same32 is None else n_same32 + 1
        d32 = float(np.max(np.abs(np.stack(steps32[:upto]) - steps[:upto])))

        q = llama_cpp_check(lcp, ids, out, steps)
        f = llama_cpp_check(lcp32, ids, out, steps)
        worst32 = max(worst32, d32)
        worst_lcp0 = max(worst_lcp0, q["max_abs_logit_diff_step0"])
        worst_lcp = max(worst_lcp, q["max_abs_logit_diff_all_steps"])
        worst_f32w = max(worst_f32w, f["max_abs_logit_diff_all_steps"])
        all_f32w_agree &= f["greedy_agree"]
        min_margin = min(min_margin, min(margin(x) for x in steps))
        print(f"{name:15s} n_prompt={len(ids):3d} gen {gen_s:5.2f}s  f32 ref max|d|={d32:.2e}  "
              f"llama.cpp Q4_1: step0 {q['max_abs_logit_diff_step0']:.3f} all {q['max_abs_logit_diff_all_steps']:.3f}"
              f" greedy {'agree' if q['greedy_agree'] else 'differ at %d' % q['greedy_first_diff']};  "
              f"F32 weights: all {f['max_abs_logit_diff_all_steps']:.2e} greedy "
              f"{'agree' if f['greedy_agree'] else 'differ at %d' % f['greedy_first_diff']}  "
              f"{ref64.detokenize(out)!r}", flush=True)
        records.append({
            "name": name,
            "chat": chat,
            "text": text,
            "prompt_ids": ids,
            "greedy_ids": out,
            "greedy_text": ref64.detokenize(out),
            "greedy_logits": [round(float(steps[k, t]), 5) for k, t in enumerate(out)],
            "greedy_margin": [round(margin(s), 5) for s in steps],
            "top": [{"step": k, "top": top_k(steps[k], TOP_K)} for k in TOP_STEPS],
            "float32_reference": {"max_abs_logit_diff": float(f"{d32:.3g}"),
                                  "greedy_first_diff": n_same32},
            "llama_cpp_q4_1": q,
            "llama_cpp_f32_weights": f,
        })

    doc = {
        "description": "Greedy (temperature 0) continuations and top-k logits of SmolLM2-135M-Instruct "
                       "Q4_1 from the NumPy reference tools/reference/reference.py (float64 "
                       "activations over the exactly dequantized weights), cross-checked with llama.cpp.",
        "command": "OPENBLAS_NUM_THREADS=1 python3 tools/reference/make_golden.py "
                   f"--model {a.model} --out {a.out}",
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     "gguf": md.version("gguf"), "llama_cpp_python": llama_cpp.__version__},
        "model": {"path": a.model, "sha256": sha256(a.model)},
        "tokenizer": f"llama.cpp (llama-cpp-python {llama_cpp.__version__}) Llama(vocab_only=True)."
                     "tokenize(text, add_bos=False, special=chat)",
        "reference": {"dtype": "float64", "rope": "norm (adjacent pairs, GGML LLAMA_ROPE_TYPE_NORM)",
                      "add_bos": False},
        "n_generate": N_GENERATE,
        "step_definition": "step k = logits that chose generated token k; step 0 = last prompt position; "
                           "step k >= 1 = after feeding generated tokens 0..k-1",
        "top_k": TOP_K,
        "top_steps": TOP_STEPS,
        "logits_rounding": "logits are rounded to 5 decimals",
        "cross_checks": {
            "llama_cpp_q4_1": "llama.cpp on the Q4_1 file as shipped (default F16 KV cache). It "
                              "quantizes activations to Q8_1/Q8_0 for its dot products, which moves "
                              "logits by ~0.5-2: structure check only, greedy ids may differ.",
            "llama_cpp_f32_weights": "llama.cpp on an ALL_F32 copy made by llama_model_quantize "
                                     "(every tensor equal to its exact dequantized value), F32 KV "
                                     "cache, no flash attention: a float32 implementation of the "
                                     "same math as this reference.",
        },
        "tolerance": {
            "float32_reference_max_abs_logit_diff": float(f"{worst32:.3g}"),
            "llama_cpp_f32_weights_max_abs_logit_diff": float(f"{worst_f32w:.3g}"),
            "llama_cpp_f32_weights_greedy_agree_all": all_f32w_agree,
            "llama_cpp_q4_1_max_abs_logit_diff_step0": float(f"{worst_lcp0:.3g}"),
            "llama_cpp_q4_1_max_abs_logit_diff_all_steps": float(f"{worst_lcp:.3g}"),
            "min_greedy_margin": round(min_margin, 5),
            "recommended_float32_max_abs_logit_diff": RECOMMENDED_TOL,
            "why": "Two float32 implementations of this math differ from the float64 reference by "
                   f"at most {max(worst32, worst_f32w):.2g} here (NumPy/BLAS float32, llama.cpp "
                   "with F32 weights); a float32 loop with naive sequential sums measured 1.5e-4. "
                   f"{RECOMMENDED_TOL:g} leaves ~6x headroom over the naive case and longer contexts, "
                   "while real bugs move logits by far more (rms eps 1e-6 instead of 1e-5: 3e-2; "
                   "ffn_down rounded to f16: 2e-2; Q8 activations: ~1; RoPE theta 1e4: 15). "
                   "Greedy ids can be compared exactly where the top1-top2 margin (greedy_margin) "
                   "exceeds 2x the tolerance: logits within tolerance cannot swap the top two there. "
                   "min_greedy_margin is the smallest margin over all prompts and steps.",
        },
        "prompts": records,
    }
    shutil.rmtree(f32_dir, ignore_errors=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes); reference generation {total_gen_s:.1f} s "
          f"for {len(PROMPTS)} x {N_GENERATE} tokens; worst: float32 ref {worst32:.2e}, llama.cpp F32 "
          f"weights {worst_f32w:.2e} (greedy all agree: {all_f32w_agree}), llama.cpp Q4_1 step0 "
          f"{worst_lcp0:.3f} all {worst_lcp:.3f}; min greedy margin {min_margin:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
