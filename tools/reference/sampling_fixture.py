#!/usr/bin/env python3
"""Golden filtered distributions for host/sampling (tests/host/sampling/test_sampler.cpp).

For fixed logit vectors and parameter sets, computes with NumPy the exact distribution a token is
drawn from after penalties -> temperature -> top-k -> top-p -> min-p -> softmax, written the way
vLLM's sampler writes it (masks over an ascending sort for top-p, HF's CTRL repetition penalty,
OpenAI presence/frequency penalties). Penalties run in float32 like the engine's logits; the rest
in float64. Each case is checked to be well-conditioned: no top-p or min-p decision lies within
1e-6 of its threshold, so float rounding cannot flip which tokens survive.

Regenerate:
    python3 tools/reference/sampling_fixture.py > tests/fixtures/sampling/sampling_fixture.json
"""
import json
import sys

import numpy as np

COMMAND = "python3 tools/reference/sampling_fixture.py > tests/fixtures/sampling/sampling_fixture.json"
MARGIN = 1e-6


def penalize(logits, prompt, output, p):
    l = np.array(logits, dtype=np.float32)
    rep = np.float32(p.get("repetition_penalty", 1.0))
    if rep != 1.0:
        toks = np.unique(np.array(prompt + output, dtype=np.int64))
        if toks.size:
            sel = l[toks]
            l[toks] = np.where(sel > 0, sel / rep, sel * rep)
    counts = np.bincount(np.array(output, dtype=np.int64), minlength=l.size).astype(np.float32)
    l = l - np.float32(p.get("frequency_penalty", 0.0)) * counts
    l = l - np.float32(p.get("presence_penalty", 0.0)) * (counts > 0).astype(np.float32)
    return l


def softmax_masked(x, mask):
    z = np.where(mask, x, -np.inf)
    z = z - z[mask].max()
    e = np.where(mask, np.exp(z), 0.0)
    return e / e.sum()


def filtered_probs(logits, prompt, output, p):
    l = penalize(logits, prompt, output, p)
    vocab = l.size
    temperature = p.get("temperature", 1.0)
    if temperature == 0.0:
        out = np.zeros(vocab)
        out[int(np.argmax(l))] = 1.0  # np.argmax: first (lowest id) maximum
        return out
    x = l.astype(np.float64) / temperature
    ids = np.arange(vocab)
    mask = np.ones(vocab, dtype=bool)

    k = p.get("top_k", 0)
    if 0 < k < vocab:
        order = np.lexsort((ids, -x))  # logit descending, id ascending
        mask[:] = False
        mask[order[:k]] = True

    top_p = p.get("top_p", 1.0)
    if top_p < 1.0:
        probs = softmax_masked(x, mask)
        asc = np.lexsort((-ids, x))  # ascending; among ties the higher id first
        asc = asc[mask[asc]]
        cum = np.cumsum(probs[asc])
        drop = cum <= 1.0 - top_p  # vLLM apply_top_k_top_p
        drop[-1] = False
        assert np.all(np.abs(cum[:-1] - (1.0 - top_p)) > MARGIN), "top-p boundary too close"
        mask[asc[drop]] = False

    min_p = p.get("min_p", 0.0)
    if min_p > 0.0:
        probs = softmax_masked(x, mask)
        threshold = min_p * probs.max()
        live = probs[mask]
        assert np.all(np.abs(live - threshold) > MARGIN * threshold), "min-p boundary too close"
        mask &= probs >= threshold

    return softmax_masked(x, mask)


def f32_list(a):
    return [float(np.float32(v)) for v in a]


def main():
    rng = np.random.default_rng(20240607)
    small = rng.normal(0.0, 1.0, 32).astype(np.float32)
    mixed = np.concatenate([rng.normal(1.0, 1.5, 24), -rng.uniform(0.5, 3.0, 8)]).astype(np.float32)
    tied = np.array([3.0, 1.0, 2.5, 2.5, 0.5, 2.5, -1.0, 0.0, 1.5, 2.5], dtype=np.float32)
    wide = rng.normal(0.0, 0.7, 1000).astype(np.float32)  # flat: the nucleus holds hundreds of tokens
    prompt = [3, 5, 5, 7, 26, 30]
    output = [1, 5, 9, 9, 9, 12, 26, 28, 28]

    cases = [
        ("plain", small, [], [], {}),
        ("temperature_0.7", small, [], [], {"temperature": 0.7}),
        ("temperature_1.6", small, [], [], {"temperature": 1.6}),
        ("top_k_5", small, [], [], {"top_k": 5}),
        ("top_k_above_vocab", small, [], [], {"top_k": 100, "temperature": 0.9}),
        ("top_p_0.9_t0.8", small, [], [], {"top_p": 0.9, "temperature": 0.8}),
        ("top_p_0.6", small, [], [], {"top_p": 0.6}),
        ("min_p_0.1_t1.2", small, [], [], {"min_p": 0.1, "temperature": 1.2}),
        ("top_k_top_p_min_p", small, [], [],
         {"top_k": 10, "top_p": 0.8, "min_p": 0.05, "temperature": 0.9}),
        ("repetition_1.3", mixed, prompt, output, {"repetition_penalty": 1.3}),
        ("repetition_0.8", mixed, prompt, output, {"repetition_penalty": 0.8}),
        ("presence_frequency", mixed, prompt, output,
         {"presence_penalty": 0.5, "frequency_penalty": 0.3}),
        ("negative_presence_frequency", mixed, prompt, output,
         {"presence_penalty": -1.0, "frequency_penalty": -0.4, "temperature": 0.8}),
        ("all_penalties_all_filters", mixed, prompt, output,
         {"repetition_penalty": 1.2, "presence_penalty": 0.4, "frequency_penalty": 0.6,
          "temperature": 0.7, "top_k": 12, "top_p": 0.85, "min_p": 0.02}),
        ("greedy_penalized", mixed, prompt, output,
         {"temperature": 0.0, "repetition_penalty": 1.5, "frequency_penalty": 0.5}),
        ("greedy_tie_lowest_id", tied, [], [], {"temperature": 0.0, "presence_penalty": 0.0}),
        ("top_k_tie_lower_ids", tied, [], [], {"top_k": 3}),
        ("top_k_tie_after_penalty", tied, [], [0], {"top_k": 3, "presence_penalty": 0.5}),
        ("wide_top_p_0.95", wide, [], [], {"top_p": 0.95}),
        ("wide_top_p_0.5_min_p", wide, [], [], {"top_p": 0.5, "min_p": 0.3, "temperature": 1.1}),
    ]
    out = {"command": COMMAND, "cases": []}
    for name, logits, pr, ou, params in cases:
        probs = filtered_probs(logits, pr, ou, params)
        out["cases"].append({
            "name": name,
            "params": params,
            "logits": f32_list(logits),
            "prompt": pr,
            "output": ou,
            "probs": [float(v) for v in probs],
            "kept": int(np.count_nonzero(probs)),
        })
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
