#!/usr/bin/env python3
"""Serving benchmark for OpenAI-compatible servers (plinth serve, llama-cpp-python, vLLM ...), in
the style of vLLM's benchmark_serving.py: a fixed-seed prompt set sent at a request rate (Poisson
arrivals) or a fixed concurrency, streamed through POST /v1/completions; prints request throughput,
output tokens/s, TTFT / TPOT / ITL / end-to-end latency (mean, p50, p90, p99) and failures.

  python3 bench/serving/serving_bench.py --base-url http://127.0.0.1:8000 --concurrency 8 \
      --num-prompts 32 --input-len 64 --output-len 32 --seed 0

--dataset shared-prefix sends a prompt set shaped like SGLang's generated-shared-prefix benchmark
instead: --groups G groups x --questions Q questions, each prompt a group's system prompt
(--system-words random words, the same for the whole group) followed by a question of --input-len
random words, in a shuffled order (fixed seed); G x Q prompts (--num-prompts is ignored). It
measures what a prefix cache saves; its warm-up request shares no prefix with any group.

Token counts come from the server's usage (stream_options.include_usage) when it sends one, else
from the number of streamed chunks carrying text. TPOT = (e2e - TTFT) / (output tokens - 1);
ITL = gaps between successive text chunks. Never fails on a time (exit 1 only when every request
failed)."""
import argparse
import asyncio
import json
import random
import statistics
import sys
import time

import urllib.parse
import urllib.request

WORDS = ("the of and to in is was for on that with as by at from his her it an were are which "
         "this be or has had one their not but all its they new more also two first after time "
         "city people world river house music school water story light north small game night "
         "dragon garden letter market winter summer forest bridge island castle").split()


def make_prompts(n, input_len, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(input_len)) for _ in range(n)]


def make_shared_prefix_prompts(groups, questions, system_words, question_words, seed):
    """groups x questions prompts "<group's system prompt>\n\n<question>", shuffled."""
    rng = random.Random(seed)
    words = lambda n: " ".join(rng.choice(WORDS) for _ in range(n))  # noqa: E731
    prompts = []
    for _ in range(groups):
        system = words(system_words)
        prompts += [system + "\n\n" + words(question_words) for _ in range(questions)]
    rng.shuffle(prompts)
    return prompts


def make_dataset(args):
    """(prompts, warm-up prompt)."""
    if args.dataset == "shared-prefix":
        prompts = make_shared_prefix_prompts(args.groups, args.questions, args.system_words,
                                             args.input_len, args.seed)
        # Its own words, so the warm-up caches no group's system prompt.
        warm_up = make_prompts(1, args.input_len, args.seed + 2)[0]
        return prompts, warm_up
    prompts = make_prompts(args.num_prompts, args.input_len, args.seed)
    return prompts, prompts[0]


class Result:
    __slots__ = ("ok", "error", "ttft", "e2e", "itl", "output_tokens")

    def __init__(self):
        self.ok, self.error, self.ttft, self.e2e, self.itl, self.output_tokens = \
            False, "", 0.0, 0.0, [], 0


async def read_body_events(reader, chunked):
    """Yields SSE data payloads from an HTTP/1.1 body (chunked or until EOF)."""
    buf = b""
    while True:
        if chunked:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            data = await reader.readexactly(size + 2)
            data = data[:-2]
        else:
            data = await reader.read(65536)
            if not data:
                break
        buf += data
        while b"\n\n" in buf:
            frame, buf = buf.split(b"\n\n", 1)
            for line in frame.split(b"\n"):
                if line.startswith(b"data: "):
                    yield line[6:].decode()


async def one_request(args, prompt):
    """One streamed completion over a fresh connection (stdlib only, so it runs anywhere)."""
    r = Result()
    body = {"model": args.model, "prompt": prompt, "max_tokens": args.output_len,
            "temperature": args.temperature, "stream": True,
            "stream_options": {"include_usage": True}}
    if args.ignore_eos:
        body["ignore_eos"] = True
    raw = json.dumps(body).encode()
    u = urllib.parse.urlparse(args.base_url)
    auth = f"Authorization: Bearer {args.api_key}\r\n" if args.api_key else ""
    start = time.perf_counter()
    last = None
    chunks = 0
    try:
        reader, writer = await asyncio.open_connection(u.hostname, u.port or 80)
        writer.write(f"POST {u.path.rstrip('/')}/v1/completions HTTP/1.1\r\nHost: {u.netloc}\r\n"
                     f"Content-Type: application/json\r\n{auth}Content-Length: {len(raw)}\r\n"
                     "Connection: close\r\n\r\n".encode() + raw)
        await writer.drain()
        status = int((await reader.readline()).split()[1])
        chunked = False
        while True:
            h = (await reader.readline()).strip().lower()
            if not h:
                break
            if h.startswith(b"transfer-encoding:") and b"chunked" in h:
                chunked = True
        if status != 200:
            r.error = f"HTTP {status}: {(await reader.read(200))!r}"
            writer.close()
            return r
        async for data in read_body_events(reader, chunked):
            if data == "[DONE]":
                break
            j = json.loads(data)
            if j.get("usage"):
                r.output_tokens = j["usage"]["completion_tokens"]
            if j.get("choices") and j["choices"][0].get("text"):
                now = time.perf_counter()
                if last is None:
                    r.ttft = now - start
                else:
                    r.itl.append(now - last)
                last = now
                chunks += 1
        writer.close()
        r.e2e = time.perf_counter() - start
        r.output_tokens = r.output_tokens or chunks
        r.ok = last is not None
        if not r.ok:
            r.error = "no text streamed"
    except Exception as e:  # noqa: BLE001 - a failed request is a figure, not a crash
        r.error = f"{type(e).__name__}: {e}"
    return r


async def run(args):
    prompts, warm_up = make_dataset(args)
    if not args.model:
        with urllib.request.urlopen(args.base_url + "/v1/models", timeout=30) as resp:
            args.model = json.loads(resp.read())["data"][0]["id"]
    sem = asyncio.Semaphore(args.concurrency) if args.concurrency else None
    rng = random.Random(args.seed + 1)

    async def guarded(p):
        if sem is None:
            return await one_request(args, p)
        async with sem:
            return await one_request(args, p)

    await one_request(args, warm_up)  # warm-up, not counted
    start = time.perf_counter()
    tasks = []
    for p in prompts:
        tasks.append(asyncio.create_task(guarded(p)))
        if args.request_rate != float("inf"):
            await asyncio.sleep(rng.expovariate(args.request_rate))
    results = await asyncio.gather(*tasks)
    return prompts, results, time.perf_counter() - start


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    f = int(k)
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def report(args, prompts, results, duration):
    ok = [r for r in results if r.ok]
    failed = [r for r in results if not r.ok]
    out_tokens = sum(r.output_tokens for r in ok)
    print(f"============ Serving Benchmark Result ============")
    print(f"{'Server':<36}{args.base_url}")
    mode = f"concurrency {args.concurrency}" if args.concurrency else f"rate {args.request_rate}/s"
    if args.dataset == "shared-prefix":
        data = (f"shared-prefix: {args.groups} groups x {args.questions} questions = "
                f"{len(prompts)} prompts, system prompt {args.system_words} words + question "
                f"{args.input_len} words")
    else:
        data = f"{len(prompts)} prompts x {args.input_len} words"
    print(f"{'Load':<36}{mode}, {data}, max_tokens {args.output_len}, seed {args.seed}")
    print(f"{'Successful requests':<36}{len(ok)}")
    print(f"{'Failed requests':<36}{len(failed)}")
    print(f"{'Benchmark duration (s)':<36}{duration:.2f}")
    print(f"{'Total generated tokens':<36}{out_tokens}")
    print(f"{'Request throughput (req/s)':<36}{len(ok) / duration:.2f}")
    print(f"{'Output token throughput (tok/s)':<36}{out_tokens / duration:.2f}")
    series = {
        "TTFT (ms)": [r.ttft * 1e3 for r in ok],
        "TPOT (ms)": [(r.e2e - r.ttft) / (r.output_tokens - 1) * 1e3 for r in ok
                      if r.output_tokens > 1],
        "ITL (ms)": [x * 1e3 for r in ok for x in r.itl],
        "E2E latency (ms)": [r.e2e * 1e3 for r in ok],
    }
    for name, vals in series.items():
        mean = statistics.fmean(vals) if vals else float("nan")
        print(f"{name:<18} mean {mean:9.1f}  p50 {pct(vals, 50):9.1f}  p90 {pct(vals, 90):9.1f}"
              f"  p99 {pct(vals, 99):9.1f}")
    for r in failed[:5]:
        print(f"failure: {r.error}")
    print("=" * 50)
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default="http://127.0.0.1:8000")
    p.add_argument("--model", default="", help="default: the first of /v1/models")
    p.add_argument("--api-key", default="")
    p.add_argument("--num-prompts", type=int, default=32)
    p.add_argument("--input-len", type=int, default=64,
                   help="words per prompt (shared-prefix: per question)")
    p.add_argument("--dataset", choices=("random", "shared-prefix"), default="random",
                   help="random: --num-prompts prompts of random words; shared-prefix: --groups x "
                        "--questions prompts, a group's system prompt + a question")
    p.add_argument("--groups", type=int, default=4, help="shared-prefix: groups")
    p.add_argument("--questions", type=int, default=8, help="shared-prefix: questions per group")
    p.add_argument("--system-words", type=int, default=512,
                   help="shared-prefix: words of each group's system prompt")
    p.add_argument("--output-len", type=int, default=32, help="max_tokens")
    p.add_argument("--concurrency", type=int, default=0, help="requests in flight at most")
    p.add_argument("--request-rate", type=float, default=float("inf"),
                   help="Poisson arrivals per second (inf = all at once)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--ignore-eos", action="store_true", help="send ignore_eos (vLLM/plinth)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    for name in ("num_prompts", "input_len", "groups", "questions", "system_words"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    prompts, results, duration = asyncio.run(run(args))
    sys.exit(report(args, prompts, results, duration))


if __name__ == "__main__":
    main()
