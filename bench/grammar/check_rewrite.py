#!/usr/bin/env python3
"""Checks the grammar plugin's schema rewrite (plugins/grammar_xgrammar/schema_rewrite.hpp) with
an independent validator, Python `jsonschema`: every instance the rewritten schema accepts must be
accepted by the schema as given (the rewrite may be stricter, never looser).

  build/bench/bench_grammar --data DIR --subset-only --dump-rewritten /tmp/rw
  python3 bench/grammar/check_rewrite.py --data DIR --rewritten /tmp/rw

DIR holds JSONSchemaBench files ({"schema", "tests": [{"valid", "data"}]}). Prints the instances
judged (of the schemas the rewrite changed), how many the rewrite made stricter (valid as given, refused rewritten), and each looser
verdict (the rewrite accepts what the schema as given refuses); exit 1 when there is one."""
import argparse
import json
import os
import sys

import jsonschema


def validator(schema, like):
    like = like if isinstance(like, dict) else {}
    cls = jsonschema.validators.validator_for(like, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--rewritten", required=True)
    a = p.parse_args()
    judged = stricter = looser = schemas = skipped = unchanged = 0
    for name in sorted(os.listdir(a.rewritten)):
        with open(os.path.join(a.data, name)) as f:
            doc = json.load(f)
        with open(os.path.join(a.rewritten, name)) as f:
            rewritten = json.load(f)
        if rewritten == doc["schema"]:
            unchanged += 1  # nothing rewritten: nothing to check
            continue
        try:
            given = validator(doc["schema"], doc["schema"])
            # the rewrite's vocabulary (prefixItems, $defs) is 2020-12's
            ours = validator(rewritten, {})
        except Exception as e:  # noqa: BLE001 - a schema jsonschema itself cannot load
            skipped += 1
            print(f"SKIP {name}: {e}"[:200])
            continue
        schemas += 1
        for t in doc.get("tests", []):
            try:
                v_given = given.is_valid(t["data"])
                v_ours = ours.is_valid(t["data"])
            except Exception as e:  # noqa: BLE001 - e.g. a pattern Python's re cannot compile
                skipped += 1
                print(f"SKIP {name}: {e}"[:200])
                continue
            judged += 1
            if v_ours and not v_given:
                looser += 1
                print(f"LOOSER {name}: {json.dumps(t['data'])[:200]}")
            elif v_given and not v_ours:
                stricter += 1
                print(f"STRICTER {name}: {json.dumps(t['data'])[:200]}")
    print(f"schemas rewritten {schemas} (unchanged {unchanged}), instances {judged}: looser "
          f"{looser}, stricter {stricter}, skipped {skipped}")
    return 1 if looser else 0


if __name__ == "__main__":
    sys.exit(main())
