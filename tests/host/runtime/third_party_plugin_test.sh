#!/usr/bin/env bash
# The SDK as a third party sees it: install this build into a temporary prefix, build
# examples/third_party_plugin against it (find_package(plinth), no path into the source tree),
# then list the plugin and check a manifest that uses it with the installed `plinth`.
#   third_party_plugin_test.sh <build dir> <source dir> <test plugin dir>
set -euo pipefail
BUILD=$1 SRC=$2 TEST_PLUGINS=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
test -f "$PREFIX/include/plinth/plugin.hpp"
test -f "$PREFIX/lib/cmake/plinth/plinthConfig.cmake"
# A copy outside the source tree, so nothing can reach into it by a relative path.
cp -r "$SRC/examples/third_party_plugin" "$WORK/src"
cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$WORK/build" -j 2
cmake --install "$WORK/build" --prefix "$PREFIX" >/dev/null
PLUGINS=$PREFIX/lib/plinth/plugins
test -f "$PLUGINS/libplinth_scheduler_fcfs.so"

PLINTH=$PREFIX/bin/plinth
list=$("$PLINTH" plugins list --path "$PLUGINS")
echo "$list"
echo "$list" | grep -Eq "^scheduler_fcfs +scheduler +0\.1\.0 +1\.0 +$PLUGINS/libplinth_scheduler_fcfs\.so$"

cat >"$WORK/manifest.json" <<JSON
{"plugins": [
  {"kind": "backend", "library": "test_backend"},
  {"kind": "kv_cache", "library": "test_kv"},
  {"kind": "scheduler", "library": "scheduler_fcfs", "config": {"max_num_seqs": 8}}]}
JSON
out=$(PLINTH_PLUGIN_PATH="$PLUGINS:$TEST_PLUGINS" "$PLINTH" manifest check "$WORK/manifest.json")
echo "$out"
echo "$out" | grep -q "scheduler_fcfs: scheduler_fcfs 0.1.0, ABI 1.0, $PLUGINS/libplinth_scheduler_fcfs.so"
echo "$out" | grep -q 'config {"max_num_batched_tokens":512,"max_num_seqs":8}'

# Its published schema is enforced: exit 2 with the JSON path.
sed -i 's/"max_num_seqs": 8/"max_num_seqs": 0/' "$WORK/manifest.json"
set +e
err=$(PLINTH_PLUGIN_PATH="$PLUGINS:$TEST_PLUGINS" "$PLINTH" manifest check "$WORK/manifest.json" 2>&1 >/dev/null)
rc=$?
set -e
echo "$err"
test "$rc" -eq 2
echo "$err" | grep -q "plugins\[2\].config.max_num_seqs: must be between 1 and 1024, got 0"
echo "third-party plugin: OK"
