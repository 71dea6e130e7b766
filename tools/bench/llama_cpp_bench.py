#!/usr/bin/env python3
"""llama.cpp's side of bench/generate: prefill and decode tokens/s on a GGUF file.

Reads one JSON object on stdin (bench_generate writes it, so both engines see the same token ids):

    {"model": "/path/model.gguf", "threads": 2, "runs": 5,
     "prefill_prompt": [ids...],              # one prompt, timed as one batch
     "decode_prompts": [[ids...], ...],       # batch-1 decode uses decode_prompts[0]; batch-N all
     "decode_tokens": 64}

and prints one JSON object on stdout:

    {"llama_cpp_version": "0.3.36", "threads": 2,
     "prefill":    {"median": tok/s, "min": ..., "max": ..., "runs": [...]},
     "decode_b1":  {...}, "decode_bN": {...}, "batch": N,
     "decode_b1_tokens": [the greedy ids of the batch-1 run]}

or {"error": "..."} (exit 1) when llama_cpp cannot be imported or the model does not load.

The measurements follow bench_generate's definitions (greedy = argmax of the logits, lowest id on
ties, as plinth's temperature 0):
  prefill    len(prompt) / (time to decode the prompt in one batch and pick the first token)
  decode_b1  (decode_tokens - 1) / (time from the first token to the last), one sequence
  decode_bN  N prompts prefilled in one llama_decode batch; the first token of each is picked (t0);
             then decode_tokens - 1 steps, each one llama_decode of N tokens (one per sequence);
             tokens/s = N * (decode_tokens - 1) / (t_end - t0)
Each figure is the median over `runs` after one warm-up run. The context uses llama.cpp's low-level
API (llama_decode with a llama_batch, n_seq_max = N, unified KV cache, n_batch = n_ubatch = 512).
"""

import ctypes
import json
import statistics
import sys
import time


def summary(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": values}


class LlamaRunner:
    """One llama.cpp model + context; every measurement starts from an empty KV cache."""

    def __init__(self, lc, model_path, threads, n_seq_max, n_ctx):
        import numpy as np  # noqa: F401  (fail early, before loading the model)

        self.lc = lc
        # Silence llama.cpp's log (it writes to stderr otherwise); keep the callback alive.
        self._log_cb = lc.llama_log_callback(lambda level, text, user: None)
        lc.llama_log_set(self._log_cb, ctypes.c_void_p(0))
        lc.llama_backend_init()
        mparams = lc.llama_model_default_params()
        mparams.n_gpu_layers = 0
        self.model = lc.llama_model_load_from_file(model_path.encode(), mparams)
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load {model_path}")
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = 512
        cparams.n_ubatch = 512
        cparams.n_seq_max = n_seq_max
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        cparams.kv_unified = True
        cparams.no_perf = True
        self.ctx = lc.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise RuntimeError("llama.cpp could not create a context")
        vocab = lc.llama_model_get_vocab(self.model)
        self.n_vocab = lc.llama_vocab_n_tokens(vocab)
        self.batch = lc.llama_batch_init(512, 0, 1)

    def close(self):
        self.lc.llama_batch_free(self.batch)
        self.lc.llama_free(self.ctx)
        self.lc.llama_model_free(self.model)

    def clear(self):
        self.lc.llama_memory_clear(self.lc.llama_get_memory(self.ctx), True)

    def decode(self, entries):
        """entries: [(token, pos, seq, wants_logits)], at most 512. Returns the batch indices whose
        logits were asked for, in order."""
        b = self.batch
        out = []
        for i, (tok, pos, seq, logits) in enumerate(entries):
            b.token[i] = tok
            b.pos[i] = pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = 1 if logits else 0
            if logits:
                out.append(i)
        b.n_tokens = len(entries)
        rc = self.lc.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        return out

    def argmax(self, i):
        import numpy as np

        ptr = self.lc.llama_get_logits_ith(self.ctx, i)
        return int(np.argmax(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))))

    def prefill(self, prompt):
        """Seconds to decode `prompt` (one sequence, chunks of 512) and pick the first token."""
        self.clear()
        t = time.perf_counter()
        for start in range(0, len(prompt), 512):
            chunk = prompt[start:start + 512]
            last = start + len(chunk) == len(prompt)
            self.decode([(tok, start + j, 0, last and j == len(chunk) - 1)
                         for j, tok in enumerate(chunk)])
        self.argmax(len(prompt) - 1 - (len(prompt) - 1) // 512 * 512)
        return time.perf_counter() - t

    def decode_batch(self, prompts, n_gen):
        """Prefills all prompts in one batch, then n_gen - 1 greedy steps of one token per
        sequence. Returns (tokens generated after t0, seconds from t0 to the end, the greedy
        tokens of sequence 0)."""
        self.clear()
        entries = []
        for s, p in enumerate(prompts):
            entries += [(tok, j, s, j == len(p) - 1) for j, tok in enumerate(p)]
        if len(entries) > 512:
            raise RuntimeError("decode prompts exceed one 512-token batch")
        rows = self.decode(entries)
        last = [self.argmax(r) for r in rows]
        seq0 = [last[0]]
        pos = [len(p) for p in prompts]
        t0 = time.perf_counter()
        for _ in range(n_gen - 1):
            rows = self.decode([(last[s], pos[s], s, True) for s in range(len(prompts))])
            last = [self.argmax(r) for r in rows]
            seq0.append(last[0])
            pos = [q + 1 for q in pos]
        return len(prompts) * (n_gen - 1), time.perf_counter() - t0, seq0


def main():
    spec = json.load(sys.stdin)
    try:
        import llama_cpp as lc
    except Exception as e:  # ImportError, or a broken native library
        print(json.dumps({"error": f"import llama_cpp failed: {e}"}))
        return 1
    prefill_prompt = spec["prefill_prompt"]
    prompts = spec["decode_prompts"]
    n_gen = int(spec["decode_tokens"])
    runs = int(spec["runs"])
    threads = int(spec["threads"])
    n_ctx = max(4096, len(prefill_prompt) + 8, sum(len(p) + n_gen for p in prompts) + 8)
    try:
        runner = LlamaRunner(lc, spec["model"], threads, len(prompts), n_ctx)
    except Exception as e:
        print(json.dumps({"error": str(e)}))
        return 1
    try:
        prefill, b1, bn = [], [], []
        for r in range(runs + 1):  # run 0 is the warm-up
            t = runner.prefill(prefill_prompt)
            n1, t1, b1_tokens = runner.decode_batch(prompts[:1], n_gen)
            nn, tn, _ = runner.decode_batch(prompts, n_gen)
            if r > 0:
                prefill.append(len(prefill_prompt) / t)
                b1.append(n1 / t1)
                bn.append(nn / tn)
        result = {"llama_cpp_version": lc.__version__, "threads": threads,
                  "system_info": lc.llama_print_system_info().decode(errors="replace").strip(),
                  "batch": len(prompts), "prefill": summary(prefill),
                  "decode_b1": summary(b1), "decode_bN": summary(bn),
                  "decode_b1_tokens": b1_tokens}
    except Exception as e:
        print(json.dumps({"error": f"llama.cpp run failed: {e}"}))
        return 1
    finally:
        runner.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
