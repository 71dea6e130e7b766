#!/usr/bin/env bash
# Builds vocab_tool (main.cpp): llama.cpp's llama_vocab from the sources tools/bench/build_llama_cpp.sh
# unpacks into ~/.cache/plinth/llama.cpp-<version>/src, linked against the libggml-base.so that
# build writes first (build/bin). Compiles eight of llama.cpp's files and two here (about a minute); prints the
# tool's path.
#
#   tools/reference/llama_vocab_tool/build.sh [--version 0.3.36]
set -euo pipefail
version=0.3.36
[[ "${1:-}" == "--version" ]] && version=$2
here=$(cd "$(dirname "$0")" && pwd)
cache="${PLINTH_CACHE:-$HOME/.cache/plinth}/llama.cpp-$version"
src=$cache/src
lib=$cache/build/bin
out=$cache/vocab-tool
if [[ ! -f $src/src/llama-vocab.cpp || ! -e $lib/libggml-base.so ]]; then
  echo "build.sh: needs $src (llama.cpp's sources) and $lib/libggml-base.so: run tools/bench/build_llama_cpp.sh" >&2
  exit 1
fi
mkdir -p "$out"
flags=(-std=c++17 -O1 -I"$src/include" -I"$src/src" -I"$src/ggml/include")
objs=()
for f in "$here/main.cpp" "$here/stubs.cpp" "$src"/src/{llama-vocab,unicode,unicode-data,llama-model-loader,llama-arch,llama-impl,llama-mmap,llama-hparams}.cpp; do
  o=$out/$(basename "$f" .cpp).o
  [[ $o -nt $f ]] || g++ "${flags[@]}" -c "$f" -o "$o"
  objs+=("$o")
done
g++ -o "$out/vocab_tool" "${objs[@]}" -L"$lib" -lggml-base -Wl,-rpath,"$lib" -lpthread
echo "$out/vocab_tool"
