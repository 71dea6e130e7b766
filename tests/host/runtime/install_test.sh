#!/usr/bin/env bash
# An installed plinth as a user sees it (README.md, "Install"; docs/server.md, "Embedding"): install this build
# into a temporary prefix and check that
#   - no path of the build or source tree is left in bin/plinth or lib/libplinth.so
#   - bin/plinth finds its plugins in the prefix (plugins list, manifest check of the installed
#     share/plinth/manifests/cpu.json, whose model is relative to the manifest), and still does
#     after the prefix is moved to another folder
#   - examples/embedded_server, copied out of the tree, builds against the moved prefix
#     (find_package(plinth), plinth::server, no path into the source tree) and serves a completion
#     (tools/server_tests/test_embedded.py)
#   install_test.sh <build dir> <source dir> <model file>
set -euo pipefail
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd) MODEL=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset PLINTH_PLUGIN_PATH
PREFIX=$WORK/prefix

cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
for f in bin/plinth lib/libplinth.so include/plinth/embed/engine.hpp include/plinth/embed/server.hpp \
         share/plinth/manifests/cpu.json lib/plinth/plugins/libplinth_backend_cpu.so; do
  test -e "$PREFIX/$f" || { echo "not installed: $f" >&2; exit 1; }
done
for bin in "$PREFIX/bin/plinth" "$PREFIX"/lib/libplinth.so "$PREFIX"/lib/plinth/plugins/*.so; do
  for dir in "$BUILD" "$SRC" "$PREFIX"; do
    if strings "$bin" | grep -qF "$dir"; then
      echo "$bin holds the path $dir:" >&2
      strings "$bin" | grep -F "$dir" >&2
      exit 1
    fi
  done
done
# The installed manifests name ../models/<file>: the model goes into share/plinth/models.
mkdir -p "$PREFIX/share/plinth/models"
ln -s "$(realpath "$MODEL")" "$PREFIX/share/plinth/models/$(basename "$MODEL")"

check_prefix() {  # check_prefix PREFIX: the installed plinth finds its own plugins
  local p=$1 plugins=$1/lib/plinth/plugins list out
  list=$(cd / && "$p/bin/plinth" plugins list)
  echo "$list"
  for name in backend_cpu kv_paged scheduler_continuous; do
    echo "$list" | grep -Eq "^$name .* $plugins/libplinth_$name\.so$" ||
      { echo "plugins list from $p: no $name in $plugins" >&2; exit 1; }
  done
  if echo "$list" | grep -qF "$BUILD"; then echo "plugins list reached the build tree" >&2; exit 1; fi
  out=$(cd / && "$p/bin/plinth" manifest check "$p/share/plinth/manifests/cpu.json")
  echo "$out"
  echo "$out" | grep -qF "$plugins/libplinth_backend_cpu.so" ||
    { echo "manifest check from $p: backend_cpu not found in $plugins" >&2; exit 1; }
  echo "$out" | grep -qF "model $p/share/plinth/manifests/../models/$(basename "$MODEL")" ||
    echo "$out" | grep -qF "model $p/share/plinth/models/$(basename "$MODEL")" ||
    { echo "manifest check from $p: the model relative to the manifest was not used" >&2; exit 1; }
}
check_prefix "$PREFIX"
mkdir "$WORK/elsewhere"
mv "$PREFIX" "$WORK/elsewhere/moved"
PREFIX=$WORK/elsewhere/moved
check_prefix "$PREFIX"

# The embedding example, outside the source tree, against the moved prefix.
cp -r "$SRC/examples/embedded_server" "$WORK/embedded"
cmake -S "$WORK/embedded" -B "$WORK/embedded/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$WORK/embedded/build" -j 2
if grep -qF -e "$SRC" -e "$BUILD" "$WORK/embedded/build/compile_commands.json"; then
  echo "the out-of-tree example reached into the plinth tree:" >&2
  cat "$WORK/embedded/build/compile_commands.json" >&2
  exit 1
fi
python3 "$SRC/tools/server_tests/test_embedded.py" --binary "$WORK/embedded/build/embedded_server" \
  --manifest "$PREFIX/share/plinth/manifests/cpu.json"
echo "install: OK"
