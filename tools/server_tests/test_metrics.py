"""`/metrics` and the logs as vLLM users read them (raw HTTP, no openai needed):
  - the text parses with prometheus_client's own parser (exposition format 0.0.4), one family
    per name, `_total` only on counters, every sample with the served `model_name` label;
  - one series per fact: the plugins' duplicates of running / waiting / used blocks /
    preemptions / usage are gone, every ratio (`_perc`, `_ratio`, `_rate`) is in 0..1;
  - the Gateway API Inference Extension's model-server protocol metrics are served with the
    type it requires (TotalQueuedRequests, TotalRunningRequests gauges; KVCacheUtilization gauge
    in 0..1) under vLLM's names, equal to plinth's own;
  - after requests: the latency and token histograms count them, request_success_total by
    finished_reason, plinth_http_requests_total by route and status (a 404 too);
  - one access line per request on the server's stderr (route, status, tokens, TTFT, latency);
  - the gauges agree with the responses: /metrics read the moment a response is complete
    (plain and streamed, 40 times, no polling) shows no request running or waiting and no KV
    block in use, and request_success_total already counts it.

  python3 tools/server_tests/test_metrics.py --plinth build/plinth --manifest manifests/cpu.json

Exit 77 (ctest SKIP_RETURN_CODE) when prometheus_client can neither be imported nor
pip-installed (tools/requirements-test.txt lists it)."""
import re
import sys
import unittest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_package, parse_args, run_tests, skip  # noqa: E402

SERVER = None
ARGS = None
parser = None

# The Gateway API Inference Extension's model-server protocol (docs/proposals/
# 003-model-server-protocol): metric → (type, vLLM's name, plinth's own).
GATEWAY_PROTOCOL = {
    "TotalQueuedRequests": ("gauge", "vllm:num_requests_waiting", "plinth_num_requests_waiting"),
    "TotalRunningRequests": ("gauge", "vllm:num_requests_running", "plinth_num_requests_running"),
    "KVCacheUtilization": ("gauge", "vllm:kv_cache_usage_perc", "plinth_kv_cache_usage_perc"),
}


def raw(method, path, body=None):
    status, _, data = SERVER.request(method, path, body)
    return status, data


def families():
    """{name: family} from prometheus_client's parser (it raises on malformed text)."""
    text = SERVER.metrics_text()
    return {f.name: f for f in parser.text_string_to_metric_families(text)}, text


class Metrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Two completions (both by length: ignore_eos, so an early EOS under the default
        # temperature 1 cannot shorten them; one streamed), a chat, a 404.
        for body in ({"prompt": "The capital of France is", "max_tokens": 6, "ignore_eos": True},
                     {"prompt": "One, two, three,", "max_tokens": 4, "stream": True,
                      "ignore_eos": True}):
            status, data = raw("POST", "/v1/completions", body)
            assert status == 200, data
        status, data = raw("POST", "/v1/chat/completions",
                           {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3})
        assert status == 200, data
        status, _ = raw("GET", "/no/such/route")
        assert status == 404

    def test_text_format_and_naming(self):
        fams, text = families()
        types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
        self.assertEqual(len(types), len(re.findall(r"^# TYPE ", text, re.M)), "one TYPE per name")
        for name, kind in types.items():
            self.assertEqual(name.endswith("_total"), kind == "counter", name)
        for fam in fams.values():
            for s in fam.samples:
                self.assertEqual(s.labels.get("model_name"), SERVER.model, s)
        for gone in ("plinth_kv_cache_usage_percent", "plinth_kv_blocks_used",
                     "plinth_sched_running", "plinth_sched_waiting",
                     "plinth_sched_preemptions_total", "plinth_kv_waste_percent", "plinth_kv_blocks_total"):
            self.assertNotIn(gone, types)
        for name, kind in types.items():
            if kind == "gauge" and re.search(r"_(perc|ratio|rate)$", name):
                for s in fams[name].samples:
                    self.assertTrue(0 <= s.value <= 1, f"{name} = {s.value}, not in 0..1")

    def test_gateway_protocol(self):
        fams, _ = families()
        m = SERVER.metrics()
        for metric, (kind, vllm_name, plinth_name) in GATEWAY_PROTOCOL.items():
            for name in (vllm_name, plinth_name):
                self.assertIn(name, fams, f"{metric}: {name} not served")
                self.assertEqual(fams[name].type, kind, f"{metric}: {name}")
            self.assertEqual(m[vllm_name], m[plinth_name], metric)
        self.assertIn("vllm:gpu_cache_usage_perc", fams)  # the older name EPPs still default to
        self.assertTrue(0 <= m["vllm:kv_cache_usage_perc"] <= 1)

    def test_request_histograms_and_counters(self):
        fams, _ = families()
        m = SERVER.metrics()
        for name in ("plinth_time_to_first_token_seconds", "plinth_e2e_request_latency_seconds",
                     "plinth_request_queue_time_seconds", "plinth_request_prefill_time_seconds",
                     "plinth_request_decode_time_seconds", "plinth_request_inference_time_seconds",
                     "plinth_request_prompt_tokens", "plinth_request_generation_tokens"):
            self.assertEqual(fams[name].type, "histogram", name)
            self.assertGreaterEqual(m[name + "_count"], 3, name)
        for name in ("plinth_inter_token_latency_seconds", "plinth_time_per_output_token_seconds",
                     "plinth_iteration_tokens"):
            self.assertEqual(fams[name].type, "histogram", name)
            self.assertGreater(m[name + "_count"], 0, name)
        # generation tokens per request: 6 + 4 + at most 3, in the histogram's sum and the counter
        self.assertEqual(m["plinth_request_generation_tokens_sum"],
                         m["plinth_generation_tokens_total"])
        self.assertGreaterEqual(m['plinth_request_success_total{finished_reason="length"}'], 2)
        self.assertIn('plinth_request_success_total{finished_reason="stop"}', m)
        self.assertEqual(fams["plinth_request_success"].type, "counter")
        self.assertGreaterEqual(
            m['plinth_http_requests_total{route="/v1/completions",status="200"}'], 2)
        self.assertEqual(
            m['plinth_http_requests_total{route="/v1/chat/completions",status="200"}'], 1)
        self.assertEqual(m['plinth_http_requests_total{route="unmatched",status="404"}'], 1)
        # buckets are cumulative and end in +Inf == _count
        ttft = [s for s in fams["plinth_time_to_first_token_seconds"].samples
                if s.name.endswith("_bucket")]
        self.assertEqual(ttft[-1].labels["le"], "+Inf")
        self.assertEqual(ttft[-1].value, m["plinth_time_to_first_token_seconds_count"])
        self.assertEqual([s.value for s in ttft], sorted(s.value for s in ttft))

    def test_gauges_agree_with_a_completed_response(self):
        # The gauges are set before a response's last event is handed to its connection, so
        # there is nothing to wait for: the server is idle the moment the response is complete.
        length = 'plinth_request_success_total{finished_reason="length"}'
        stale = []
        for i in range(40):
            done = SERVER.metrics().get(length, 0.0)
            status, data = raw("POST", "/v1/completions",
                               {"prompt": "Count: one, two,", "max_tokens": 3, "ignore_eos": True,
                                "stream": i % 2 == 1})
            self.assertEqual(status, 200, data)
            m = SERVER.metrics()
            seen = {k: m[k] for k in ("plinth_num_requests_running", "plinth_num_requests_waiting",
                                      "plinth_kv_cache_used_blocks", "vllm:num_requests_running")}
            if any(seen.values()) or m.get(length, 0.0) != done + 1:
                stale.append((i, seen, m.get(length, 0.0) - done))
        self.assertEqual(stale, [], "/metrics lagged the response (iteration, gauges, finished)")

    def test_access_lines(self):
        line = re.compile(r"POST /v1/completions 200 prompt_tokens=(\d+) generation_tokens=(\d+) "
                          r"ttft=\d+\.\d+s latency=\d+\.\d+s")
        lines = SERVER.wait_for_stderr(lambda ls: (
            sum(1 for x in ls if line.search(x)) >= 2
            and any("POST /v1/chat/completions 200" in x for x in ls)
            and any("GET unmatched 404" in x for x in ls)))
        found = [line.search(x) for x in lines]
        found = [f for f in found if f]
        self.assertEqual(len(found), 2, "".join(SERVER.stderr_lines[-20:]))
        self.assertEqual(sorted(int(f.group(2)) for f in found), [4, 6])
        self.assertTrue(all(int(f.group(1)) > 0 for f in found))
        self.assertTrue(any("POST /v1/chat/completions 200" in x for x in SERVER.stderr_lines))
        self.assertTrue(any(re.search(r"GET unmatched 404 .* ttft=- ", x)
                            for x in SERVER.stderr_lines))


def main():
    global ARGS, SERVER, parser
    ARGS, rest = parse_args()
    parser = ensure_package("prometheus_client.parser", "prometheus_client")
    if parser is None:
        return skip("prometheus_client")
    with PlinthServer(ARGS.plinth, ARGS.manifest, log_level="info",
                      capture_stderr=True) as server:
        SERVER = server
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
