#!/usr/bin/env python3
"""End-to-end cost of structured outputs in one `plinth serve` run (a grammar plugin in the
manifest, e.g. manifests/cpu_structured.json), interleaved so that a change of machine load hits
every mode alike:

  - unconstrained: chat requests without a constraint (ignore_eos, max_tokens tokens each);
  - constrained: the same prompts under a JSON Schema with long property names, forced-token
    drafting off (`speculative: false`): the grammar's own cost (masks, matcher);
  - constrained + forced drafts: the same with forced-token drafting on (the default).

Each round runs, for each concurrency (--concurrency, default 1 and 16), one batch of requests
per mode, the modes in a rotated order per round. Every request streams (stream_options.
include_usage); TPOT = (last content chunk - first content chunk) / (completion tokens - 1), per
request, vLLM's definition. At concurrency 1 the requests run one at a time, and /metrics'
plinth_iteration_tokens_count (engine steps) read around each gives its forwards: tokens per
forward = completion tokens / steps (the prefill step included). Prints medians per cell, the
ratios constrained / unconstrained, and the forced-draft counters. Standard library only.

  build/plinth serve --manifest manifests/cpu_structured.json --port 8123 &
  python3 bench/grammar_e2e/grammar_e2e_bench.py --base-url http://127.0.0.1:8123 --rounds 3

Figures, not pass/fail: exit 1 only when a request fails."""
import argparse
import concurrent.futures
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse

SCHEMA = {
    "type": "object",
    "properties": {
        "customer_full_legal_name": {"type": "string", "maxLength": 24},
        "customer_primary_email_address": {"type": "string", "maxLength": 32},
        "number_of_previous_orders_placed": {"type": "integer", "minimum": 0, "maximum": 1000},
        "preferred_delivery_time_window": {"type": "string",
                                           "enum": ["morning", "afternoon", "evening"]},
        "customer_loyalty_program_membership_level": {"type": "string",
                                                      "enum": ["bronze", "silver", "gold"]},
        "additional_delivery_instructions_for_courier": {"type": "string", "maxLength": 40},
    },
    "required": ["customer_full_legal_name", "customer_primary_email_address",
                 "number_of_previous_orders_placed", "preferred_delivery_time_window",
                 "customer_loyalty_program_membership_level",
                 "additional_delivery_instructions_for_courier"],
    "additionalProperties": False,
}
MODES = ("unconstrained", "constrained", "constrained+forced")


def body(mode, i, max_tokens):
    b = {"messages": [{"role": "user",
                       "content": f"Write the record of customer number {i} as JSON."}],
         "max_tokens": max_tokens, "temperature": 0, "stream": True,
         "stream_options": {"include_usage": True}}
    if mode == "unconstrained":
        b["ignore_eos"] = True
    else:
        b["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "customer", "schema": SCHEMA, "strict": True}}
        b["speculative"] = mode == "constrained+forced"
    return b


def stream(url, b):
    """(tpot seconds or None, completion tokens) of one streamed chat request."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    conn.request("POST", "/v1/chat/completions", json.dumps(b),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:300]!r}")
    first = last = None
    tokens = 0
    for raw in resp:
        line = raw.strip()
        if not line.startswith(b"data: ") or line == b"data: [DONE]":
            continue
        j = json.loads(line[6:])
        if j.get("usage"):
            tokens = j["usage"]["completion_tokens"]
        for c in j.get("choices", []):
            if c.get("delta", {}).get("content"):
                last = time.perf_counter()
                first = first or last
    conn.close()
    tpot = (last - first) / (tokens - 1) if tokens > 1 and first is not None else None
    return tpot, tokens


def metrics(url):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("GET", "/metrics")
    out = {}
    for line in conn.getresponse().read().decode().splitlines():
        if line and not line.startswith("#") and "_bucket" not in line:
            series, value = line.rsplit(" ", 1)
            out[series.split("{")[0]] = out.get(series.split("{")[0], 0.0) + float(value)
    conn.close()
    return out


def run_cell(args, mode, concurrency, first_index):
    """One batch of `concurrency` (at least --min-requests) requests: per-request TPOTs, and at
    concurrency 1 per-request tokens per forward."""
    n = max(concurrency, args.min_requests)
    tpots, tpf = [], []
    if concurrency == 1:
        for i in range(n):
            steps0 = metrics(args.base_url).get("plinth_iteration_tokens_count", 0)
            tpot, tokens = stream(args.base_url, body(mode, first_index + i, args.max_tokens))
            steps = metrics(args.base_url).get("plinth_iteration_tokens_count", 0) - steps0
            if tpot is not None:
                tpots.append(tpot)
            if steps > 0:
                tpf.append(tokens / steps)
        return tpots, tpf
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        futures = [pool.submit(stream, args.base_url, body(mode, first_index + i, args.max_tokens))
                   for i in range(n)]
        for f in futures:
            tpot, _ = f.result()
            if tpot is not None:
                tpots.append(tpot)
    return tpots, tpf


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base-url", default="http://127.0.0.1:8000")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    p.add_argument("--min-requests", type=int, default=4,
                   help="requests per cell at least (a cell at concurrency C sends max(C, this))")
    p.add_argument("--max-tokens", type=int, default=160)
    args = p.parse_args()

    stream(args.base_url, body("constrained", 0, 8))  # warm-up: compiles the schema once
    load0 = os.getloadavg()
    cells = {(m, c): ([], []) for m in MODES for c in args.concurrency}
    m0 = metrics(args.base_url)
    t0 = time.time()
    index = 1
    for r in range(args.rounds):
        for c in args.concurrency:
            for k in range(len(MODES)):
                mode = MODES[(k + r) % len(MODES)]
                tpots, tpf = run_cell(args, mode, c, index)
                index += max(c, args.min_requests)
                cells[(mode, c)][0].extend(tpots)
                cells[(mode, c)][1].extend(tpf)
                print(f"round {r} c={c} {mode}: {len(tpots)} requests", file=sys.stderr)
    m1 = metrics(args.base_url)
    load1 = os.getloadavg()
    print(f"grammar e2e bench: {args.rounds} rounds, max_tokens {args.max_tokens}, "
          f"{time.time() - t0:.0f} s; load average (1 min) {load0[0]:.2f} before, "
          f"{load1[0]:.2f} after ({os.cpu_count()} CPUs; the bench itself adds about 1)")
    print("| concurrency | mode | requests | TPOT median (ms) | tokens / forward (median) | "
          "TPOT / unconstrained |")
    print("|---|---|---|---|---|---|")
    for c in args.concurrency:
        base = statistics.median(cells[("unconstrained", c)][0])
        for m in MODES:
            tpots, tpf = cells[(m, c)]
            med = statistics.median(tpots)
            tpf_s = f"{statistics.median(tpf):.2f}" if tpf else "-"
            print(f"| {c} | {m} | {len(tpots)} | {med * 1e3:.1f} | {tpf_s} | {med / base:.3f} |")
    grew = lambda k: m1.get(k, 0) - m0.get(k, 0)  # noqa: E731
    drafted = grew('plinth_grammar_forced_draft_tokens_total')
    accepted = grew('plinth_grammar_forced_accepted_tokens_total')
    print(f"forced drafts: {drafted:.0f} draft tokens, {accepted:.0f} accepted "
          f"({100 * accepted / max(1, drafted):.0f} %); mask fills "
          f"{grew('plinth_grammar_mask_seconds_count'):.0f}, mean "
          f"{1e6 * grew('plinth_grammar_mask_seconds_sum') / max(1, grew('plinth_grammar_mask_seconds_count')):.1f} us")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # a failed request: the figures would be wrong
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
