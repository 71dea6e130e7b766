#!/usr/bin/env bash
# Serving output tokens/s of `plinth serve` against llama.cpp's C++ `llama-server` (continuous
# batching, -np slots equal to plinth's max_num_seqs), through bench/serving/serving_bench.py at
# concurrency 1, 8 and 32, one server after the other (never both at once), on the same machine
# and thread count. Prints each run's figures and a table of the ratios.
#
#   tools/bench/serving_vs_llama_server.sh [--plinth build/plinth] [--manifest manifests/cpu.json]
#       [--plinth-model FILE] [--llama-model FILE] [--threads 2] [--slots 64]
#       [--concurrency "1 8 32"] [--input-len 64] [--output-len 32] [--rt]
#
# Defaults: plinth serves the manifest's model; llama-server serves the Q4_0 sibling
# (models/SmolLM2-135M-Instruct.Q4_0.gguf, llama.cpp's fastest format on the CPU, written by
# tools/bench/build_llama_cpp.sh --quantize). llama-server comes from the native build of
# tools/bench/build_llama_cpp.sh (~/.cache/plinth/llama.cpp-0.3.36/build/bin, or $LLAMA_SERVER).
# --rt runs both servers under `chrt -f 50` (real-time priority: near-quiet figures on a machine
# shared with other work; needs root).
set -euo pipefail
cd "$(dirname "$0")/../.."

plinth=build/plinth
manifest=manifests/cpu.json
plinth_model=""
llama_model=models/SmolLM2-135M-Instruct.Q4_0.gguf
threads=2
slots=64
concurrency="1 8 32"
input_len=64
output_len=32
rt=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --plinth) plinth="$2"; shift 2 ;;
    --manifest) manifest="$2"; shift 2 ;;
    --plinth-model) plinth_model="$2"; shift 2 ;;
    --llama-model) llama_model="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --slots) slots="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --input-len) input_len="$2"; shift 2 ;;
    --output-len) output_len="$2"; shift 2 ;;
    --rt) rt=(chrt -f 50); shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "serving_vs_llama_server.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

llama_server="${LLAMA_SERVER:-${PLINTH_CACHE:-$HOME/.cache/plinth}/llama.cpp-0.3.36/build/bin/llama-server}"
for f in "$plinth" "$manifest" "$llama_model" "$llama_server"; do
  if [[ ! -e "$f" ]]; then
    echo "serving_vs_llama_server.sh: $f does not exist (build plinth with ./dev build, llama.cpp" \
         "and the Q4_0 file with tools/bench/build_llama_cpp.sh --quantize MODEL)" >&2
    exit 1
  fi
done

port=$((20000 + RANDOM % 20000))
out=$(mktemp -d)
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT

wait_ready() {  # $1: URL that answers 200 once the server serves
  for _ in $(seq 1 600); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "$1" \
        2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  echo "serving_vs_llama_server.sh: the server at $1 did not come up" >&2
  return 1
}

run_clients() {  # $1: label
  for c in $concurrency; do
    n=$((c * 4 < 16 ? 16 : c * 4))
    echo "== $1, concurrency $c, $n prompts"
    python3 bench/serving/serving_bench.py --base-url "http://127.0.0.1:$port" --concurrency "$c" \
      --num-prompts "$n" --input-len "$input_len" --output-len "$output_len" --ignore-eos \
      --seed 0 | tee "$out/$1.$c.txt"
  done
}

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
model_args=()
[[ -n "$plinth_model" ]] && model_args=(--model "$plinth_model")
"${rt[@]}" "$plinth" serve --manifest "$manifest" "${model_args[@]}" --port "$port" \
  > "$out/plinth.log" 2>&1 &
server_pid=$!
wait_ready "http://127.0.0.1:$port/health"
grep -m3 -E "matmul|serving" "$out/plinth.log" || true
run_clients plinth
kill -INT "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

ctx=$((slots * (input_len * 2 + output_len + 64)))
echo "llama-server: $llama_server -m $llama_model -t $threads -np $slots -c $ctx (continuous batching)"
"${rt[@]}" "$llama_server" -m "$llama_model" -t "$threads" -tb "$threads" -np "$slots" -c "$ctx" \
  --cont-batching --host 127.0.0.1 --port "$port" > "$out/llama.log" 2>&1 &
server_pid=$!
wait_ready "http://127.0.0.1:$port/health"
run_clients llama
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""

echo
echo "| concurrency | plinth output tok/s | llama-server output tok/s | ratio |"
echo "|---|---|---|---|"
for c in $concurrency; do
  p=$(grep -m1 -i "output tok" "$out/plinth.$c.txt" | grep -oE '[0-9]+(\.[0-9]+)?' | tail -1)
  l=$(grep -m1 -i "output tok" "$out/llama.$c.txt" | grep -oE '[0-9]+(\.[0-9]+)?' | tail -1)
  r=$(python3 -c "import sys; print(f'{float(sys.argv[1])/float(sys.argv[2]):.2f}')" "$p" "$l")
  echo "| $c | $p | $l | $r |"
done
