#!/usr/bin/env python3
"""The grammar plugin's schema rewrite checked by Python `jsonschema` (an independent validator):
the JSON Schema Test Suite (draft 7, Debian json-schema-test-suite; its optional/format date and
date-time files wrapped in {"type": "string", ...}) and the committed JSONSchemaBench sample are
written as JSONSchemaBench files, bench_grammar --subset-only --dump-rewritten rewrites each schema
the plugin accepts, and bench/grammar/check_rewrite.py validates every instance against the
schema as given and as rewritten: the rewrite must never accept what the schema as given refuses.

  python3 tests/plugins/grammar_xgrammar/rewrite_vs_jsonschema.py --bench build/bench/bench_grammar \
      --model models/SmolLM2-135M-Instruct.Q4_1.gguf --suite /usr/share/json-schema-test-suite/tests/draft7 \
      --sample tests/fixtures/grammar/jsonschemabench_sample

Exit 77 (skipped) without the model, the suite or jsonschema."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bench", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--suite", required=True)
    p.add_argument("--sample", required=True)
    p.add_argument("--checker", required=True)
    a = p.parse_args()
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        print("SKIP: jsonschema is not installed (tools/requirements-test.txt)")
        return 77
    if not os.path.exists(a.model) or not os.path.isdir(a.suite):
        print(f"SKIP: {a.model} or {a.suite} is missing")
        return 77
    work = tempfile.mkdtemp(prefix="plinth-rewrite-")
    try:
        data, out = os.path.join(work, "data"), os.path.join(work, "rewritten")
        os.makedirs(data)
        os.makedirs(out)
        n = 0
        groups = []
        for name in sorted(os.listdir(a.suite)):
            if name.endswith(".json"):
                with open(os.path.join(a.suite, name)) as f:
                    groups += [(name, g) for g in json.load(f)]
        for name in ("date.json", "date-time.json"):
            with open(os.path.join(a.suite, "optional", "format", name)) as f:
                for g in json.load(f):
                    g["schema"] = dict(g["schema"], type="string")
                    g["tests"] = [t for t in g["tests"] if isinstance(t["data"], str)]
                    groups.append((name, g))
        for name, g in groups:
            n += 1
            if isinstance(g["schema"], dict) and "$schema" not in g["schema"]:
                g["schema"] = {"$schema": "http://json-schema.org/draft-07/schema#", **g["schema"]}
            with open(os.path.join(data, f"suite_{n:04d}.json"), "w") as f:
                json.dump({"schema": g["schema"], "tests": g["tests"],
                           "description": f"{name}: {g.get('description', '')}"}, f)
        for name in sorted(os.listdir(a.sample)):
            if name.endswith(".json"):
                shutil.copy(os.path.join(a.sample, name), os.path.join(data, name))
        r = subprocess.run([a.bench, "--data", data, "--model", a.model, "--subset-only",
                            "--dump-rewritten", out], capture_output=True, text=True)
        print(r.stdout.strip())
        if r.returncode != 0:
            print(r.stderr)
            return 1
        rewritten = len(os.listdir(out))
        print(f"{rewritten} of {len(os.listdir(data))} schemas accepted and rewritten")
        if rewritten < 95:
            print("FAIL: fewer schemas accepted than measured (103 of 157 suite + sample files)")
            return 1
        r = subprocess.run([sys.executable, a.checker, "--data", data, "--rewritten", out],
                           capture_output=True, text=True)
        lines = r.stdout.strip().splitlines()
        print("\n".join(line for line in lines if not line.startswith("STRICTER")))
        return r.returncode
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    sys.exit(main())
