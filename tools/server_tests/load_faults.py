"""Load and fault test of `plinth serve` (loopback only), three repetitions of:
  N requests (default 2,000) at concurrency 64: streamed completions with small max_tokens, a tenth
  of them cancelled mid-stream (the client closes the connection after the first chunk), one in 20
  a malformed body (bad JSON / wrong type / n out of range).
Checks: zero 5xx and every valid, uncancelled response complete (usage / [DONE]); malformed ones
get 4xx; after each repetition /metrics shows 0 KV blocks in use and 0 requests running; resident
memory after repetition 3 is not more than 10% (+16 MiB) above repetition 1.

  python3 tools/server_tests/load_faults.py --plinth build/plinth --manifest manifests/cpu.json"""
import argparse
import asyncio
import json
import random
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer  # noqa: E402


async def one(host, port, kind, i, stats):
    body = {"prompt": f"Request {i}: the weather today is", "max_tokens": 4 if kind != "cancel"
            else 64, "temperature": 0.7, "seed": i, "stream": True, "ignore_eos": True}
    raw = json.dumps(body).encode()
    if kind == "malformed":
        raw = random.Random(i).choice([b"{not json", b'{"prompt": 5}', b'{"prompt": "x", "n": 0}',
                                       b'{"prompt": "x", "max_tokens": "a"}'])
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(raw)}\r\nConnection: close\r\n\r\n".encode() + raw)
    await writer.drain()
    status_line = await reader.readline()
    status = int(status_line.split()[1]) if status_line else 0
    if kind == "cancel" and status == 200:
        await reader.readuntil(b"data: ")  # first chunk arrived: leave mid-stream
        writer.close()
        stats["cancelled"] += 1
        return
    data = await reader.read()
    writer.close()
    if status >= 500 or status == 0:
        stats["5xx"] += 1
        return
    if kind == "malformed":
        stats["4xx_ok" if 400 <= status < 500 else "malformed_not_4xx"] += 1
        return
    complete = status == 200 and b"data: [DONE]" in data and b'"finish_reason":"length"' in data
    stats["complete" if complete else "incomplete"] += 1


async def repetition(server, n, concurrency, rep):
    host, port = server.url[len("http://"):].split(":")
    rng = random.Random(rep)
    kinds = ["cancel" if rng.random() < 0.1 else "malformed" if rng.random() < 0.05 else "valid"
             for _ in range(n)]
    stats = {k: 0 for k in ("complete", "incomplete", "cancelled", "5xx", "4xx_ok",
                            "malformed_not_4xx")}
    sem = asyncio.Semaphore(concurrency)

    async def guarded(kind, i):
        async with sem:
            try:
                await one(host, int(port), kind, i, stats)
            except Exception as e:  # noqa: BLE001
                stats.setdefault("client_errors", 0)
                stats["client_errors"] += 1
                stats.setdefault("last_error", repr(e))
    await asyncio.gather(*(guarded(k, i) for i, k in enumerate(kinds)))
    return kinds, stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--plinth", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--repetitions", type=int, default=3)
    a = p.parse_args()
    ok = True
    rss = []
    with PlinthServer(a.plinth, a.manifest, "--max-pending", "1024") as server:
        for rep in range(a.repetitions):
            t0 = time.time()
            kinds, stats = asyncio.run(repetition(server, a.requests, a.concurrency, rep))
            time.sleep(0.5)
            m = server.metrics()
            rss.append(server.rss_kib())
            print(f"repetition {rep + 1}: {time.time() - t0:.1f} s, {stats}, kv blocks used "
                  f"{m['plinth_kv_cache_used_blocks']:.0f}, running "
                  f"{m['plinth_num_requests_running']:.0f}, RSS {rss[-1] / 1024:.1f} MiB",
                  flush=True)
            valid = kinds.count("valid")
            ok &= stats["5xx"] == 0 and stats["incomplete"] == 0 and stats["complete"] == valid
            ok &= stats["malformed_not_4xx"] == 0 and "client_errors" not in stats
            ok &= m["plinth_kv_cache_used_blocks"] == 0 and m["plinth_num_requests_running"] == 0
        ok &= rss[-1] <= rss[0] * 1.10 + 16 * 1024
        ok &= server.stop() == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
