#!/usr/bin/env python3
"""clang-tidy over translation units, skipping those already found clean with the same input.

Usage: tidy_cached.py --db BUILD_DIR --root SOURCE_DIR --config .clang-tidy --header-filter REGEX
                      --jobs N [--fix] [--cache DIR] UNIT...

Each unit's key is the SHA-256 of: the clang-tidy version, the .clang-tidy file, the header
filter, and the unit's text as Clang preprocesses it with its compile command (`clang++ -E`, so
every included header and macro is in it), with the source root's path replaced by a placeholder
in both (so a clone in another folder, as CI makes, reuses the results). A unit
whose key is in the cache was clean with exactly this input, and clang-tidy is a function of
that input, so it is skipped; after a clean run its key is written. A unit with findings is never
cached. --fix runs every unit and caches nothing. Findings go to stdout, unit by unit; the exit
status is 1 when any unit had a finding or clang-tidy failed, else 0.

The cache is a folder of empty files named by key (default ~/.cache/plinth/clang-tidy); delete
it to force a full run.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys

TIDY = "clang-tidy-14"
CLANGXX = "clang++-14"
# Lines clang-tidy prints that are not findings.
NOISE = ("warnings generated", "warning generated", "Suppressed ", "Use -header-filter",
         "Error while processing")


def compile_args(entry):
    """The compile command's arguments without the compiler, the output and the source file."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a == entry["file"]:
            continue
        out.append(a)
    return out


def unit_key(entry, salt, root):
    """SHA-256 of salt + the unit preprocessed by Clang, root path replaced (None on failure)."""
    cmd = [CLANGXX, "-E", "-Wno-unknown-warning-option", *compile_args(entry), entry["file"]]
    r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True)
    if r.returncode != 0:
        return None
    h = hashlib.sha256(salt)
    h.update(r.stdout.replace(root.encode(), b"<root>"))
    return h.hexdigest()


def run_tidy(db_dir, header_filter, fix, unit):
    cmd = [TIDY, "-p", db_dir, "--quiet", "-extra-arg=-Wno-unknown-warning-option",
           "-header-filter=" + header_filter, unit]
    if fix:
        cmd.insert(1, "-fix")
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in (r.stdout + r.stderr).splitlines()
             if l.strip() and not any(n in l for n in NOISE)]
    return r.returncode, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="build dir holding compile_commands.json")
    ap.add_argument("--header-filter", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--fix", action="store_true")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/plinth/clang-tidy"))
    ap.add_argument("--config", required=True, help="the .clang-tidy file")
    ap.add_argument("--root", required=True, help="the source tree's root folder")
    ap.add_argument("units", nargs="+")
    a = ap.parse_args()

    entries = {e["file"]: e for e in json.load(open(os.path.join(a.db, "compile_commands.json")))}
    missing = [u for u in a.units if u not in entries]
    if missing:
        print("tidy_cached: not in the compile database: " + ", ".join(missing), file=sys.stderr)
        return 2
    version = subprocess.run([TIDY, "--version"], capture_output=True, text=True).stdout
    root = os.path.realpath(a.root)
    salt = (version + "\0" + open(a.config).read() + "\0" + a.header_filter.replace(root, "<root>")
            + "\0").encode()
    os.makedirs(a.cache, exist_ok=True)

    def one(unit):
        key = None if a.fix else unit_key(entries[unit], salt, root)
        if key is not None and os.path.exists(os.path.join(a.cache, key)):
            return unit, True, 0, []
        rc, lines = run_tidy(a.db, a.header_filter, a.fix, unit)
        if rc == 0 and not lines and key is not None:
            open(os.path.join(a.cache, key), "w").close()
        return unit, False, rc, lines

    failed = cached = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for unit, hit, rc, lines in pool.map(one, a.units):
            cached += hit
            if rc != 0 or lines:
                failed += 1
                print("\n".join(lines) if lines else f"{unit}: clang-tidy exited {rc}")
                sys.stdout.flush()
    print(f"tidy_cached: {len(a.units)} units, {cached} unchanged since a clean run (skipped), "
          f"{failed} with findings", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
