#!/usr/bin/env bash
# The SDK as a third party sees it: install this build into a temporary prefix, build
# examples/third_party_plugin against it (find_package(plinth), no path into the source tree),
# check that plinth_plugin() built it like an in-tree plugin (-fvisibility=hidden, the version
# script: only plinth_plugin_entry exported; --no-undefined), then list the plugin and check a
# manifest that uses it with the installed `plinth`.
#   third_party_plugin_test.sh <build dir> <source dir> <test plugin dir>
set -euo pipefail
BUILD=$1 SRC=$2 TEST_PLUGINS=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
test -f "$PREFIX/include/plinth/plugin.hpp"
test -f "$PREFIX/lib/cmake/plinth/plinthConfig.cmake"
test -f "$PREFIX/lib/cmake/plinth/plugin.map"
# The ABI version of the installed headers, as the plugin will declare it.
ABI=$(awk '$1 == "#define" && $2 == "PLINTH_ABI_MAJOR" {M = $3}
           $1 == "#define" && $2 == "PLINTH_ABI_MINOR" {m = $3} END {print M "." m}' \
      "$PREFIX/include/plinth/abi.h")
echo "$ABI" | grep -Eq '^[0-9]+\.[0-9]+$'
# A copy outside the source tree, so nothing can reach into it by a relative path.
cp -r "$SRC/examples/third_party_plugin" "$WORK/src"
cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$WORK/build" -j 2
grep -q -- '-fvisibility=hidden' "$WORK/build/compile_commands.json"
cmake --install "$WORK/build" --prefix "$PREFIX" >/dev/null
PLUGINS=$PREFIX/lib/plinth/plugins
test -f "$PLUGINS/libplinth_scheduler_fcfs.so"

# Only the entry symbol leaves the library (the example links nlohmann_json and the C++ standard
# library, whose template instantiations would otherwise be exported).
exported=$(nm -D --defined-only "$PLUGINS/libplinth_scheduler_fcfs.so" | awk '{print $NF}' | sort -u)
if [ "$exported" != "plinth_plugin_entry" ]; then
  echo "libplinth_scheduler_fcfs.so exports more than plinth_plugin_entry:" >&2
  echo "$exported" >&2
  exit 1
fi

# --no-undefined: a plugin calling a function nothing links fails to link.
mkdir -p "$WORK/undef"
cat >"$WORK/undef/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(plinth_undefined_symbol LANGUAGES CXX)
find_package(plinth REQUIRED)
plinth_plugin(undefined_symbol SOURCES undef.cpp NO_INSTALL)
CMAKE
cat >"$WORK/undef/undef.cpp" <<'CPP'
#include <plinth/plugin.hpp>
extern "C" int plinth_test_symbol_nobody_defines(void);
extern "C" PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {
  return plinth_test_symbol_nobody_defines() != 0 ? nullptr : nullptr;
}
CPP
cmake -S "$WORK/undef" -B "$WORK/undef/build" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
set +e
undef_log=$(cmake --build "$WORK/undef/build" 2>&1)
undef_rc=$?
set -e
if [ "$undef_rc" -eq 0 ] || ! echo "$undef_log" | grep -q plinth_test_symbol_nobody_defines; then
  echo "a plugin with an undefined symbol was linked (no --no-undefined?):" >&2
  echo "$undef_log" >&2
  exit 1
fi

PLINTH=$PREFIX/bin/plinth
list=$("$PLINTH" plugins list --path "$PLUGINS")
echo "$list"
echo "$list" | grep -Eq "^scheduler_fcfs +scheduler +0\.1\.0 +${ABI//./\\.} +$PLUGINS/libplinth_scheduler_fcfs\.so$"

cat >"$WORK/manifest.json" <<JSON
{"plugins": [
  {"kind": "backend", "library": "test_backend"},
  {"kind": "kv_cache", "library": "test_kv"},
  {"kind": "scheduler", "library": "scheduler_fcfs", "config": {"max_num_seqs": 8}}]}
JSON
out=$(PLINTH_PLUGIN_PATH="$PLUGINS:$TEST_PLUGINS" "$PLINTH" manifest check "$WORK/manifest.json")
echo "$out"
echo "$out" | grep -qF "scheduler_fcfs: scheduler_fcfs 0.1.0, ABI $ABI, $PLUGINS/libplinth_scheduler_fcfs.so"
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
