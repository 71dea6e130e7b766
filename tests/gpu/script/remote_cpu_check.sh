#!/usr/bin/env bash
# tests/gpu/remote on this (GPU-less) machine against a stage made of the build tree's own
# binaries (symbolic links, no copy): the synthetic models are made, the GPU steps skip, and
# summary.json says "skipped" with the device check's reason. Exit 77 (skipped) on a machine with
# a GPU, where tests/gpu/remote should be run for real.
# Usage: remote_cpu_check.sh REMOTE PLINTH GPU_TESTS BENCH PLUGIN_DIR WORK_DIR
set -euo pipefail
remote=$1 plinth=$2 gpu_tests=$3 bench=$4 plugins=$5 work=$6
if env -u PLINTH_GPU_MODEL "$gpu_tests" >/dev/null 2>&1; [ $? -ne 77 ]; then
  echo "skipped: a CUDA device is present; run tests/gpu/prepare and tests/gpu/remote instead"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work/stage/bin" "$work/stage/lib"
ln -s "$plinth" "$gpu_tests" "$bench" "$work/stage/bin/"
ln -s "$plugins" "$work/stage/plugins"
PLINTH_STAGE="$work/stage" SYNTH_LAYERS=1 "$remote" "$work/out"
python3 - "$work/out" <<'PY'
import json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "summary.json")))
steps = {x["name"]: x for x in s["steps"]}
assert s["status"] == "skipped", s
assert s["reason"].startswith("no CUDA device: "), s["reason"]
assert steps["model"]["status"] == "ok", steps["model"]
for name in ("arch", "gpu_tests", "bench", "sanitizer"):
    assert steps[name]["status"] == "skipped", steps[name]
    assert steps[name]["reason"].startswith("no CUDA device: "), steps[name]
assert steps["gpu_units"]["status"] == "skipped", steps["gpu_units"]
assert steps["real_model"]["status"] == "skipped", steps["real_model"]
assert s["bench"]["skipped"].startswith("no CUDA device: "), s["bench"]
assert os.path.getsize(os.path.join(out, "log.txt")) > 0
print("summary.json: skipped:", s["reason"])
PY
