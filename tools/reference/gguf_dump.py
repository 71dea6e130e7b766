#!/usr/bin/env python3
"""Dump a GGUF file's metadata and tensor table to JSON with the `gguf` package (gguf.GGUFReader),
an implementation independent of plinth's C++ reader. The JSON is the fixture the integration test
tests/host/model/gguf_real_model_test.cpp compares against.

Regenerate the committed fixture (from the repository root):
    python3 tools/reference/gguf_dump.py models/SmolLM2-135M-Instruct.Q4_1.gguf \
        > tests/fixtures/gguf/smollm2-135m-instruct-q4_1.json
"""
import json
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType

ARRAY_HEAD = 8   # array elements kept from the start ...
ARRAY_TAIL = 2   # ... and from the end
SAMPLE_BYTES = 16  # leading data bytes kept per sampled tensor
SAMPLED_TENSORS = ["token_embd.weight", "blk.0.attn_q.weight", "blk.29.ffn_down.weight",
                   "output_norm.weight"]


def scalar(field, idx):
    """Element `idx` of a field's data as a JSON value."""
    part = field.parts[field.data[idx]]
    if field.types[-1] == GGUFValueType.STRING:
        return bytes(part).decode("utf-8")
    v = part.tolist()[0]
    return bool(v) if field.types[-1] == GGUFValueType.BOOL else v


def dump_field(field):
    t = field.types[0]
    if t != GGUFValueType.ARRAY:
        return {"type": t.name.lower(), "value": scalar(field, 0)}
    if len(field.types) > 2 and field.types[1] == GGUFValueType.ARRAY:
        return {"type": "array", "elem_type": "array", "length": len(field.data)}
    n = len(field.data)
    head = [scalar(field, i) for i in range(min(n, ARRAY_HEAD))]
    tail = [scalar(field, i) for i in range(max(n - ARRAY_TAIL, 0), n)]
    return {"type": "array", "elem_type": field.types[1].name.lower(), "length": n,
            "head": head, "tail": tail}


def model_config(meta, tensor_names):
    """LLaMA hyper-parameters from the metadata, as read_model_config should find them."""
    arch = meta["general.architecture"]["value"]
    get = lambda k, d=None: meta[f"{arch}.{k}"]["value"] if f"{arch}.{k}" in meta else d
    hidden, heads = get("embedding_length"), get("attention.head_count")
    vocab = get("vocab_size") or meta["tokenizer.ggml.tokens"]["length"]
    return {
        "architecture": arch,
        "name": meta.get("general.name", {}).get("value", ""),
        "n_layers": get("block_count"), "hidden_size": hidden, "n_heads": heads,
        "n_kv_heads": get("attention.head_count_kv", heads),
        "head_dim": get("rope.dimension_count", hidden // heads),
        "ffn_size": get("feed_forward_length"), "vocab_size": vocab,
        "context_length": get("context_length"),
        "rope_theta": get("rope.freq_base", 10000.0),
        "rms_norm_eps": get("attention.layer_norm_rms_epsilon"),
        "tied_embeddings": "output.weight" not in tensor_names,
    }


def main(path):
    r = GGUFReader(path)
    meta = {}
    for name, field in r.fields.items():
        if not name.startswith("GGUF."):  # the reader's pseudo-fields for the header
            meta[name] = dump_field(field)
    tensors = [{"name": t.name, "type": int(t.tensor_type),
                "dims": [int(d) for d in t.shape],  # ggml order (ne0 first), as in the file
                "offset": int(t.data_offset), "nbytes": int(t.n_bytes)} for t in r.tensors]
    by_name = {t.name: t for t in r.tensors}
    samples = {}
    for name in SAMPLED_TENSORS:
        raw = np.asarray(by_name[name].data).view(np.uint8).reshape(-1)[:SAMPLE_BYTES]
        samples[name] = bytes(raw).hex()
    out = {
        "generator": "tools/reference/gguf_dump.py (gguf.GGUFReader)",
        "version": int(r.fields["GGUF.version"].parts[-1][0]),
        "alignment": int(r.alignment),
        "data_offset": int(r.data_offset),
        "keys": list(meta.keys()),
        "metadata": meta,
        "tensors": tensors,
        "data_first_bytes_hex": samples,
        "config": model_config(meta, by_name),
    }
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
