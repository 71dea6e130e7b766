#!/usr/bin/env python3
"""Checks a draft model written by `plinth draft-model` with the `gguf` Python package
(gguf.GGUFReader, pinned in tools/reference/requirements.txt), a reader independent of plinth's:
every metadata field of the source with the same type and value, except <arch>.block_count (the
draft's layer count) and general.name (suffixed " (first L layers)"); no other field; exactly the
source's tensors outside blocks L.. in the source's order, with the same type, shape and bytes;
data at offsets aligned to general.alignment (default 32).

Usage: check_draft_model.py --source IN.gguf --draft OUT.gguf --layers L
Exit 0: agrees; 1: a difference (printed); 77: skipped (gguf or numpy not importable, or a file
missing), as ctest's SKIP_RETURN_CODE.
"""
import argparse
import os
import re
import sys

SKIP = 77


def field_bytes(field):
    """A field's value as (types, raw bytes of each value part), comparable exactly."""
    return [int(t) for t in field.types], [bytes(field.parts[i]) for i in field.data]


def block_index(name):
    m = re.match(r"blk\.(\d+)\.", name)
    return int(m.group(1)) if m else -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--draft", required=True)
    ap.add_argument("--layers", type=int, required=True)
    args = ap.parse_args()
    try:
        import numpy as np
        from gguf import GGUFReader
    except ImportError as e:
        print(f"skipped: the independent check needs the `gguf` package ({e}); install it with "
              "pip install -r tools/reference/requirements.txt", file=sys.stderr)
        return SKIP
    for path in (args.source, args.draft):
        if not os.path.exists(path):
            print(f"skipped: {path} is missing (tools/fetch_model fetches the model)",
                  file=sys.stderr)
            return SKIP

    src, draft = GGUFReader(args.source), GGUFReader(args.draft)
    errors = []
    arch = bytes(src.fields["general.architecture"].parts[-1]).decode()
    block_key = f"{arch}.block_count"
    src_fields = {k: f for k, f in src.fields.items() if not k.startswith("GGUF.")}
    draft_fields = {k: f for k, f in draft.fields.items() if not k.startswith("GGUF.")}
    if list(src_fields) != list(draft_fields):
        errors.append(f"metadata keys differ: {sorted(set(src_fields) ^ set(draft_fields))} "
                      "or their order")
    for key, f in src_fields.items():
        if key not in draft_fields:
            continue
        d = draft_fields[key]
        if key == block_key:
            got = int(d.parts[d.data[0]][0])
            if [int(t) for t in d.types] != [int(t) for t in f.types] or got != args.layers:
                errors.append(f"{key}: {got}, expected {args.layers} of the source's type")
        elif key == "general.name":
            want = bytes(f.parts[f.data[0]]).decode() + f" (first {args.layers} layers)"
            got = bytes(d.parts[d.data[0]]).decode()
            if got != want:
                errors.append(f"general.name: {got!r}, expected {want!r}")
        elif field_bytes(f) != field_bytes(d):
            errors.append(f"{key}: value differs from the source's")

    want = [t for t in src.tensors if block_index(t.name) < args.layers]
    got_names, want_names = [t.name for t in draft.tensors], [t.name for t in want]
    if got_names != want_names:
        extra = [n for n in got_names if n not in want_names]
        missing = [n for n in want_names if n not in got_names]
        errors.append(f"tensors differ from the source's first {args.layers} layers: extra "
                      f"{extra}, missing {missing} (or another order)")
    by_name = {t.name: t for t in draft.tensors}
    align_field = src.fields.get("general.alignment")
    alignment = int(align_field.parts[align_field.data[0]][0]) if align_field else 32
    for s in want:
        d = by_name.get(s.name)
        if d is None:
            continue
        if int(d.tensor_type) != int(s.tensor_type) or list(d.shape) != list(s.shape):
            errors.append(f"{s.name}: type/shape {d.tensor_type}/{list(d.shape)}, expected "
                          f"{s.tensor_type}/{list(s.shape)}")
        elif not np.array_equal(np.asarray(d.data).view(np.uint8).reshape(-1),
                                np.asarray(s.data).view(np.uint8).reshape(-1)):
            errors.append(f"{s.name}: data bytes differ from the source's")
        if d.data_offset % alignment != 0:
            errors.append(f"{s.name}: data at {d.data_offset}, not aligned to {alignment}")

    for e in errors:
        print("error:", e, file=sys.stderr)
    if not errors:
        print(f"ok: {args.draft}: {len(draft_fields)} metadata fields, {len(draft.tensors)} tensors "
              f"agree with {args.source} (first {args.layers} layers), per gguf.GGUFReader")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
