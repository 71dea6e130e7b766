#!/usr/bin/env bash
# Builds llama.cpp natively (-march=native via GGML_NATIVE, OpenMP, Release) from the llama.cpp that
# the llama-cpp-python source package on PyPI vendors, into a cache folder outside the tree:
#
#   ~/.cache/plinth/llama.cpp-<version>/{src,build}
#
# Targets: llama-bench, llama-quantize, llama-server, llama-cli and the shared libraries
# (build/bin/libllama.so, libggml*.so; llama-cpp-python can load them with
# LLAMA_CPP_LIB_PATH=<cache>/build/bin), and llama-cpp-python's Python package alone (built with
# LLAMA_BUILD=OFF) in <cache>/venv for bench_generate --python <cache>/venv/bin/python
# --llama-cpp-lib <cache>/build/bin. Prints the flags used and ggml's system info.
#
#   tools/bench/build_llama_cpp.sh [--version 0.3.36] [--jobs 2] [--quantize MODEL.gguf]
#                                  [--types "Q4_0 Q8_0"]
#
# --quantize F.gguf also writes F's siblings of each llama-quantize type in --types (default Q4_0
# and Q8_0: models/*.Q4_0.gguf, *.Q8_0.gguf; the K-quant mixes too, e.g. --types "Q4_K_M Q5_K_M
# Q6_K Q3_K_M Q2_K IQ4_XS", whose rows not a multiple of 256 fall back to Q5_0 / Q5_1 / Q8_0 /
# Q4_0 / IQ4_NL) with llama-quantize --allow-requantize. Caveat: they are requantized from the Q4_1
# weights, not made from the f16/f32 original, so they carry Q4_1's rounding error plus their own;
# fine for speed and for comparing two engines on the same file, not for quality comparisons.
#
# Environment: PLINTH_CACHE (default ~/.cache/plinth). Needs pip, cmake, a C++ compiler; the build
# takes ~20-40 minutes on 2 cores (run it under nice). Idempotent: an existing build is reused.
set -euo pipefail

version=0.3.36   # the version tools/bench/llama_cpp_bench.py and bench/generate pin
jobs=2
quantize=""
types="Q4_0 Q8_0"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --quantize) quantize="$2"; shift 2 ;;
    --types) types="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "build_llama_cpp.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

cache="${PLINTH_CACHE:-$HOME/.cache/plinth}/llama.cpp-$version"
src="$cache/src"
build="$cache/build"
mkdir -p "$cache"

if [[ ! -f "$src/CMakeLists.txt" ]]; then
  echo "== downloading llama-cpp-python==$version (source package) from the configured pip index"
  dl="$cache/download"
  mkdir -p "$dl"
  # Only llama-cpp-python itself from source: with --no-binary :all: its build dependencies
  # (scikit-build-core, cmake, ...) are compiled from source too, which takes tens of minutes.
  python3 -m pip download --no-binary llama-cpp-python --no-deps "llama-cpp-python==$version" -d "$dl"
  tarball=$(ls "$dl"/llama_cpp_python-"$version".tar.gz)
  rm -rf "$cache/extract" && mkdir -p "$cache/extract"
  tar -xzf "$tarball" -C "$cache/extract"
  vendored="$cache/extract/llama_cpp_python-$version/vendor/llama.cpp"
  if [[ ! -f "$vendored/CMakeLists.txt" ]]; then
    echo "build_llama_cpp.sh: $tarball has no vendor/llama.cpp; pick another --version" >&2
    exit 1
  fi
  rm -rf "$src" && mv "$vendored" "$src" && rm -rf "$cache/extract"
fi

flags=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_OPENMP=ON -DLLAMA_CURL=OFF
       -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
       -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON)
echo "== llama.cpp (llama-cpp-python $version vendored) at $src"
echo "== cmake flags: ${flags[*]}"
cmake -S "$src" -B "$build" "${flags[@]}" > "$cache/configure.log"
# llama-bench and llama-quantize first (what the speed comparison needs), then the rest.
ninja -C "$build" -j"$jobs" llama-bench llama-quantize

if [[ -n "$quantize" ]]; then
  base="${quantize%.gguf}"
  base="${base%.Q4_1}"
  for type in $types; do
    out="$base.$type.gguf"
    if [[ -f "$out" ]]; then echo "== $out exists"; continue; fi
    echo "== $out (requantized from $quantize: Q4_1 rounding error included)"
    "$build/bin/llama-quantize" --allow-requantize "$quantize" "$out" "$type" > "$cache/quantize-$type.log" 2>&1 \
      || { echo "llama-quantize failed; see $cache/quantize-$type.log" >&2; exit 1; }
  done
fi

ninja -C "$build" -j"$jobs" llama-server llama-cli llama ggml
echo "== build info and ggml system info"
"$build/bin/llama-cli" --version 2>&1 | head -5 || true
grep -E '^GGML_(NATIVE|AVX[A-Z0-9_]*|OPENMP|LLAMAFILE|CPU_REPACK|AMX[A-Z0-9_]*):' "$build/CMakeCache.txt" || true
if [[ -n "$quantize" ]]; then
  # llama-bench prints ggml's system info line (the CPU features this build uses) at -v.
  "$build/bin/llama-bench" -m "$quantize" -p 8 -n 0 -r 1 -t 1 -v 2>&1 | grep -m1 -i 'system_info' || true
fi
# llama-cpp-python's Python package without its own native build (LLAMA_BUILD=OFF), in a venv of
# the cache folder, so that bench_generate's llama.cpp side loads these native libraries through
# LLAMA_CPP_LIB_PATH.
venv="$cache/venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import llama_cpp.llama_cpp" 2>/dev/null; then
  echo "== llama-cpp-python $version (Python only, LLAMA_BUILD=OFF) into $venv"
  python3 -m venv "$venv"
  CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" "$venv/bin/pip" install -q \
    "$cache/download/llama_cpp_python-$version.tar.gz"
fi
echo "== binaries in $build/bin"
echo "== bench_generate against this build:"
echo "   bench_generate --python $venv/bin/python --llama-cpp-lib $build/bin ..."
