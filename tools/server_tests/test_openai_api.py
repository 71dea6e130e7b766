"""Integration test of `plinth serve` with real clients: the official `openai` package for the
API, raw HTTP (http.client / sockets) for the error cases, disconnects and SSE framing.

  python3 tools/server_tests/test_openai_api.py --plinth build/plinth --manifest manifests/cpu.json

Exit 77 (ctest SKIP_RETURN_CODE) when `openai` can neither be imported nor pip-installed."""
import http.client
import json
import socket
import sys
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_openai, parse_args, run_tests, skip  # noqa: E402

ARGS = None
SERVER = None
API_KEY = "test-key-123"
openai = None


def client():
    return openai.OpenAI(base_url=SERVER.url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)


def raw(method, path, body=None, headers=None, server=None):
    """One raw HTTP request with the API key; returns (status, headers dict, body bytes)."""
    return (server or SERVER).request(method, path, body,
                                      {"Authorization": f"Bearer {API_KEY}", **(headers or {})})


def sse_payloads(body_bytes):
    """The data payloads of an SSE body, each decoded strictly as UTF-8 (raises on a split char)."""
    out = []
    for frame in body_bytes.split(b"\n\n"):
        if frame.startswith(b"data: "):
            out.append(frame[6:].decode("utf-8", errors="strict"))
    return out


class Api(unittest.TestCase):
    def test_models_and_health(self):
        models = client().models.list()
        self.assertEqual([m.id for m in models.data], [SERVER.model])
        status, _, body = raw("GET", "/health")
        self.assertEqual(status, 200)

    def test_completion(self):
        r = client().completions.create(model=SERVER.model, prompt="The capital of France is",
                                        max_tokens=6, temperature=0)
        self.assertEqual(len(r.choices), 1)
        self.assertEqual(r.choices[0].finish_reason, "length")
        self.assertEqual(r.usage.completion_tokens, 6)
        self.assertEqual(r.usage.prompt_tokens, 5)
        self.assertEqual(r.usage.total_tokens, 11)
        self.assertIn("Paris", r.choices[0].text)

    def test_stream_matches_non_stream(self):
        c = client()
        for prompt in ["Once upon a time", "List three colors:"]:
            full = c.completions.create(model=SERVER.model, prompt=prompt, max_tokens=12,
                                        temperature=0)
            chunks = list(c.completions.create(model=SERVER.model, prompt=prompt, max_tokens=12,
                                               temperature=0, stream=True,
                                               stream_options={"include_usage": True}))
            text = "".join(ch.choices[0].text for ch in chunks if ch.choices)
            self.assertEqual(text, full.choices[0].text)
            self.assertEqual(chunks[-1].usage.completion_tokens, full.usage.completion_tokens)
            self.assertEqual([ch.choices[0].finish_reason for ch in chunks if ch.choices][-1],
                             full.choices[0].finish_reason)

    def test_chat_and_chat_stream(self):
        c = client()
        msgs = [{"role": "system", "content": "You are brief."},
                {"role": "user", "content": "Name a fruit."}]
        full = c.chat.completions.create(model=SERVER.model, messages=msgs, max_tokens=10,
                                         temperature=0)
        self.assertEqual(full.choices[0].message.role, "assistant")
        self.assertTrue(full.choices[0].message.content)
        self.assertIn(full.choices[0].finish_reason, ("stop", "length"))
        stream = c.chat.completions.create(model=SERVER.model, messages=msgs, max_tokens=10,
                                           temperature=0, stream=True)
        text = "".join(ch.choices[0].delta.content or "" for ch in stream if ch.choices)
        self.assertEqual(text, full.choices[0].message.content)
        # max_completion_tokens is honoured like max_tokens.
        r = c.chat.completions.create(model=SERVER.model, messages=msgs, max_completion_tokens=3,
                                      temperature=0)
        self.assertLessEqual(r.usage.completion_tokens, 3)
        # OpenAI's "developer" role (o1 and later) is the system message: same prompt, same text.
        dev = c.chat.completions.create(model=SERVER.model, max_tokens=10, temperature=0,
                                        messages=[{"role": "developer", "content": "You are brief."},
                                                  msgs[1]])
        self.assertEqual(dev.choices[0].message.content, full.choices[0].message.content)
        self.assertEqual(dev.usage.prompt_tokens, full.usage.prompt_tokens)

    def test_n2_and_seed(self):
        c = client()
        kw = dict(model=SERVER.model, prompt="My favourite animal is", max_tokens=8,
                  temperature=1.0, seed=1234, n=2)
        a = c.completions.create(**kw)
        b = c.completions.create(**kw)
        self.assertEqual(sorted(ch.index for ch in a.choices), [0, 1])
        self.assertEqual([ch.text for ch in a.choices], [ch.text for ch in b.choices])
        self.assertEqual(a.usage.completion_tokens, sum(
            8 if ch.finish_reason == "length" else 0 for ch in a.choices) or a.usage.completion_tokens)
        other = c.completions.create(**{**kw, "seed": 99, "n": 1})
        self.assertEqual(len(other.choices), 1)
        # n=2 streamed: both indices appear, each ends with a finish_reason.
        chunks = list(c.completions.create(**kw, stream=True))
        texts = {0: "", 1: ""}
        for ch in chunks:
            for choice in ch.choices:
                texts[choice.index] += choice.text
        self.assertEqual([texts[0], texts[1]], [ch.text for ch in a.choices])

    def test_stop_string(self):
        c = client()
        prompt = "Count: one, two, three,"
        full = c.completions.create(model=SERVER.model, prompt=prompt, max_tokens=12,
                                    temperature=0).choices[0].text
        words = full.split()
        self.assertGreaterEqual(len(words), 3, full)
        stop = words[2]
        cut = full[:full.index(stop)]
        r = c.completions.create(model=SERVER.model, prompt=prompt, max_tokens=12, temperature=0,
                                 stop=[stop])
        self.assertEqual(r.choices[0].text, cut)
        self.assertEqual(r.choices[0].finish_reason, "stop")
        s = c.completions.create(model=SERVER.model, prompt=prompt, max_tokens=12, temperature=0,
                                 stop=stop, stream=True)
        self.assertEqual("".join(ch.choices[0].text for ch in s if ch.choices), cut)

    def test_logprobs(self):
        c = client()
        r = c.chat.completions.create(model=SERVER.model, max_tokens=5, temperature=0,
                                      messages=[{"role": "user", "content": "Hi"}],
                                      logprobs=True, top_logprobs=3)
        content = r.choices[0].logprobs.content
        self.assertEqual(len(content), r.usage.completion_tokens)
        for t in content:
            self.assertLessEqual(t.logprob, 0.0)
            self.assertEqual(len(t.top_logprobs), 3)
            # Greedy: the sampled token is the most likely one.
            self.assertAlmostEqual(t.top_logprobs[0].logprob, t.logprob, places=4)
        r = c.completions.create(model=SERVER.model, prompt="Hello", max_tokens=4, temperature=0,
                                 logprobs=2)
        lp = r.choices[0].logprobs
        self.assertEqual(len(lp.tokens), 4)
        self.assertEqual(len(lp.top_logprobs[0]), 2)

    def test_utf8_never_split(self):
        prompts = ["中文：我今天很高兴，因为", "日本語の文章を書きます。今日は",
                   "Emoji story: 🐱🐶🦊🐼🐨 then", "한국어로 말해 주세요: 안녕하세요"]
        non_ascii = 0
        for prompt in prompts:
            body = {"model": SERVER.model, "prompt": prompt, "max_tokens": 16, "temperature": 0,
                    "stream": True}
            status, _, data = raw("POST", "/v1/completions", body)
            self.assertEqual(status, 200)
            payloads = sse_payloads(data)  # strict UTF-8: raises if a frame splits a character
            self.assertEqual(payloads[-1], "[DONE]")
            pieces = [json.loads(p)["choices"][0]["text"] for p in payloads[:-1]]
            # A length finish inside a character flushes its bytes as one U+FFFD (nothing more will
            # complete it); anywhere else U+FFFD would mean a character was split across frames.
            nonempty = [i for i, piece in enumerate(pieces) if piece]
            for i in nonempty[:-1]:
                self.assertNotIn("\ufffd", pieces[i])
            if nonempty:
                self.assertNotIn("\ufffd", pieces[nonempty[-1]][:-1])
            text = "".join(pieces)
            full = client().completions.create(model=SERVER.model, prompt=prompt, max_tokens=16,
                                               temperature=0).choices[0].text
            self.assertEqual(text, full)
            non_ascii += sum(1 for ch in text if ord(ch) > 127)
        self.assertGreater(non_ascii, 0, "no multi-byte output: the test would prove nothing")


class Errors(unittest.TestCase):
    def assert_error(self, status, expected, body=None, path="/v1/completions", headers=None,
                     method="POST"):
        got, hdrs, data = raw(method, path, body, headers)
        self.assertEqual(got, expected, data)
        err = json.loads(data)["error"]
        self.assertTrue(err["message"])
        self.assertIn("type", err)
        return err, hdrs

    def test_bad_requests(self):
        m = SERVER.model
        self.assert_error(400, 400, "{not json")
        self.assert_error(400, 400, "[1, 2]")
        # Token ids are range-checked before narrowing: 2**32 + 5 must not become token 5.
        for ids in ([2**32 + 5], [-1], [2**31], [-(2**31) - 1]):
            err, _ = self.assert_error(400, 400, {"model": m, "prompt": ids})
            self.assertIn("outside the vocabulary", err["message"], err)
        # OpenAI fields this server does not implement are refused by name, never silently ignored;
        # values that ask for nothing pass (logit_bias, echo, best_of: test_openai_fields.py).
        for field, value in [("suffix", "end"), ("response_format", {"type": "json_object"}),
                             ("tools", [{"type": "function", "function": {"name": "f"}}]),
                             ("tool_choice", "required")]:
            err, _ = self.assert_error(400, 400, {"model": m, "prompt": "x", field: value})
            self.assertEqual(err["param"], field, err)
            self.assertIn("not supported", err["message"])
        got, _, data = raw("POST", "/v1/completions",
                           {"model": m, "prompt": "x", "max_tokens": 1, "echo": False,
                            "best_of": 1, "logit_bias": {}, "response_format": {"type": "text"}})
        self.assertEqual(got, 200, data)
        self.assertEqual(self.assert_error(422, 422, {"model": m, "prompt": 5})[0]["param"],
                         "prompt")
        self.assert_error(422, 422, {"model": m, "prompt": "x", "max_tokens": "ten"})
        self.assert_error(422, 422, {"model": m, "prompt": "x", "temperature": "hot"})
        self.assert_error(422, 422, {"model": m})
        self.assert_error(422, 422, {"model": m, "messages": "hi"}, path="/v1/chat/completions")
        self.assert_error(404, 404, {"model": "gpt-9", "prompt": "x"})
        self.assert_error(400, 400, {"model": m, "prompt": "x", "n": 0})
        self.assert_error(400, 400, {"model": m, "prompt": "x", "n": 1000})
        self.assert_error(400, 400, {"model": m, "prompt": "x", "max_tokens": 0})
        self.assert_error(400, 400, {"model": m, "prompt": "x", "max_tokens": -1})
        self.assert_error(400, 400, {"model": m, "max_completion_tokens": -1,
                                     "messages": [{"role": "user", "content": "x"}]},
                          path="/v1/chat/completions")
        self.assert_error(400, 400, {"model": m, "prompt": "x", "max_tokens": 10**7})
        self.assert_error(400, 400, {"model": m, "prompt": "x", "temperature": 5})
        self.assert_error(400, 400, {"model": m, "prompt": "x", "top_p": 0})
        err, _ = self.assert_error(400, 400, {"model": m, "prompt": "hello " * 9000,
                                              "max_tokens": 1})
        self.assertEqual(err["code"], "context_length_exceeded")
        self.assert_error(413, 413, json.dumps({"model": m, "prompt": "a" * (2 << 20)}))
        self.assert_error(404, 404, path="/v2/nothing", method="GET")
        self.assert_error(405, 405, path="/v1/completions", method="GET")

    def test_api_key(self):
        body = {"model": SERVER.model, "prompt": "x", "max_tokens": 1}
        self.assert_error(401, 401, body, headers={"Authorization": ""})
        self.assert_error(401, 401, body, headers={"Authorization": "Bearer wrong"})
        bad = openai.OpenAI(base_url=SERVER.url + "/v1", api_key="wrong", max_retries=0)
        with self.assertRaises(openai.AuthenticationError):
            bad.models.list()

    def test_server_survives_errors(self):
        r = client().completions.create(model=SERVER.model, prompt="Hi", max_tokens=2,
                                        extra_body={"ignore_eos": True})
        self.assertEqual(r.usage.completion_tokens, 2)


class Disconnect(unittest.TestCase):
    def test_disconnect_mid_stream_frees_kv(self):
        u = urllib.parse.urlparse(SERVER.url)
        before = SERVER.metrics()
        body = json.dumps({"model": SERVER.model, "prompt": "Write a long story about a dragon.",
                           "max_tokens": 400, "temperature": 0, "stream": True,
                           "ignore_eos": True}).encode()
        s = socket.create_connection((u.hostname, u.port), timeout=60)
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  + f"Authorization: Bearer {API_KEY}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                  + body)
        got = b""
        while got.count(b"data: ") < 3:
            data = s.recv(4096)
            self.assertTrue(data, f"server closed the stream early: {got!r}")
            got += data
        during = SERVER.metrics()
        self.assertGreater(during["plinth_kv_cache_used_blocks"], 0)
        s.close()
        deadline = time.time() + 5
        while time.time() < deadline:
            m = SERVER.metrics()
            if m["plinth_kv_cache_used_blocks"] == 0 and m["plinth_num_requests_running"] == 0:
                break
            time.sleep(0.05)
        self.assertEqual(m["plinth_kv_cache_used_blocks"], 0)
        self.assertEqual(m["plinth_request_aborted_total"],
                         before["plinth_request_aborted_total"] + 1)
        self.assertLess(m["plinth_generation_tokens_total"] -
                        before["plinth_generation_tokens_total"], 400)

    def test_metrics_names(self):
        m = SERVER.metrics()
        for name in ["plinth_num_requests_running", "plinth_num_requests_waiting",
                     "plinth_kv_cache_usage_perc", "plinth_time_to_first_token_seconds_count",
                     "plinth_time_per_output_token_seconds_count",
                     "plinth_e2e_request_latency_seconds_count", "plinth_prompt_tokens_total",
                     "plinth_generation_tokens_total", "plinth_num_preemptions_total"]:
            self.assertIn(name, m)


class Limits(unittest.TestCase):
    """A second server with --max-pending 2: a third concurrent request gets 429 + Retry-After;
    SIGINT drains: running requests still complete, then exit 0."""

    def test_queue_bound_and_drain(self):
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--max-pending", "2") as small:
            # Long enough that both are still running when the third arrives on a fast CPU.
            body = {"model": small.model, "prompt": "Tell me a story", "max_tokens": 200,
                    "temperature": 0, "ignore_eos": True}
            results = []

            def one():
                results.append(raw("POST", "/v1/completions", body, server=small))
            threads = [threading.Thread(target=one) for _ in range(2)]
            for t in threads:
                t.start()
            # The third is sent once the server holds both (not after a fixed sleep).
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                m = small.metrics()
                if m["plinth_num_requests_running"] + m["plinth_num_requests_waiting"] >= 2:
                    break
                time.sleep(0.02)
            status, hdrs, data = raw("POST", "/v1/completions", body, server=small)
            self.assertEqual(status, 429, data)
            self.assertIn("retry-after", hdrs)
            self.assertEqual(json.loads(data)["error"]["type"], "rate_limit_error")
            # Drain while both run: they still finish completely.
            small.proc.send_signal(2)
            for t in threads:
                t.join()
            self.assertEqual(small.proc.wait(60), 0)
            for status, _, data in results:
                self.assertEqual(status, 200, data)
                self.assertEqual(json.loads(data)["usage"]["completion_tokens"], body["max_tokens"])

    def test_second_sigint_stops_at_once(self):
        """Ctrl-C during a long stream drains (said at the default log level, with the hint);
        a second Ctrl-C stops at once, exit 0, instead of waiting out --drain-timeout (30 s)."""
        with PlinthServer(ARGS.plinth, ARGS.manifest, capture_stderr=True) as s:
            body = {"model": s.model, "prompt": "Tell me a story", "max_tokens": 4000,
                    "temperature": 0, "ignore_eos": True, "stream": True}

            def one():
                try:
                    raw("POST", "/v1/completions", body, server=s)
                except (OSError, http.client.HTTPException):
                    pass  # the stream is cut by the stop: that is the point
            t = threading.Thread(target=one, daemon=True)
            t.start()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and s.metrics()["plinth_num_requests_running"] < 1:
                time.sleep(0.02)
            s.proc.send_signal(2)
            lines = s.wait_for_stderr(lambda ls: any("Ctrl-C again" in l for l in ls), 10)
            self.assertTrue(any("draining" in l and "Ctrl-C again" in l for l in lines), lines)
            start = time.monotonic()
            s.proc.send_signal(2)
            self.assertEqual(s.proc.wait(10), 0)
            self.assertLess(time.monotonic() - start, 10)
            self.assertTrue(any("stopping now" in l for l in s.wait_for_stderr(
                lambda ls: any("stopping now" in l for l in ls), 5)), s.stderr_lines)
            t.join(10)

    def test_drain_timeout_ends_every_api_cleanly(self):
        """Requests still running at --drain-timeout are aborted and their responses end whole,
        as vLLM ends the requests it aborts: a stream's final chunk with finish_reason "abort"
        then [DONE] (chat, completions), Anthropic's message_delta + message_stop, the Responses
        API's response.incomplete; a non-streamed one a 200 with finish_reason "abort". They
        were cut: no final chunk, no [DONE]."""
        ask = "Count from 1 to 1000, separated by commas."  # greedy: runs to max_tokens
        msgs = [{"role": "user", "content": ask}]
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--drain-timeout", "1") as s:
            bodies = {
                "chat": ("/v1/chat/completions", {"messages": msgs, "max_tokens": 1500,
                                                  "temperature": 0, "stream": True}),
                "chat-whole": ("/v1/chat/completions", {"messages": msgs, "max_tokens": 1500,
                                                        "temperature": 0}),
                "completions": ("/v1/completions", {"prompt": "1, 2, 3, 4,", "max_tokens": 1500,
                                                    "temperature": 0, "ignore_eos": True,
                                                    "stream": True}),
                "anthropic": ("/v1/messages", {"model": s.model, "messages": msgs,
                                               "max_tokens": 1500, "temperature": 0,
                                               "stream": True}),
                "responses": ("/v1/responses", {"model": s.model, "input": ask,
                                                "max_output_tokens": 1500, "temperature": 0,
                                                "stream": True}),
            }
            results = {}

            def one(name):
                path, body = bodies[name]
                results[name] = raw("POST", path, body, server=s)
            threads = [threading.Thread(target=one, args=(n,)) for n in bodies]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 60
            while (time.monotonic() < deadline and
                   s.metrics()["plinth_num_requests_running"] < len(bodies)):
                time.sleep(0.02)
            s.proc.send_signal(2)
            for t in threads:
                t.join(60)
            self.assertEqual(s.proc.wait(30), 0)
        for name, (status, _, data) in results.items():
            self.assertEqual(status, 200, (name, data[-500:]))

        def events(data):  # [(event name or None, parsed data or "[DONE]")]
            out = []
            for frame in data.split(b"\n\n"):
                name, payload = None, None
                for line in frame.decode().splitlines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        payload = line[6:] if line[6:] == "[DONE]" else json.loads(line[6:])
                if payload is not None:
                    out.append((name, payload))
            return out
        for name in ("chat", "completions"):
            ev = events(results[name][2])
            self.assertEqual(ev[-1][1], "[DONE]", name)
            finals = [p["choices"][0]["finish_reason"] for _, p in ev[:-1] if p["choices"]]
            self.assertEqual(finals[-1], "abort", name)
            self.assertTrue(all(f is None for f in finals[:-1]), name)
            self.assertGreater(len(finals), 2, name)
        whole = json.loads(results["chat-whole"][2])
        self.assertEqual(whole["choices"][0]["finish_reason"], "abort", whole)
        self.assertLess(whole["usage"]["completion_tokens"], 1500, whole)
        ev = events(results["anthropic"][2])
        self.assertEqual([n for n, _ in ev[-3:]],
                         ["content_block_stop", "message_delta", "message_stop"], ev[-3:])
        self.assertIsNone(ev[-2][1]["delta"]["stop_reason"])  # Anthropic names no abort
        self.assertLess(ev[-2][1]["usage"]["output_tokens"], 1500)
        ev = events(results["responses"][2])
        self.assertEqual(ev[-1][0], "response.incomplete", ev[-1])
        last = ev[-1][1]["response"]
        self.assertEqual(last["status"], "incomplete", last)
        self.assertEqual(last["incomplete_details"], {"reason": "abort"}, last)
        self.assertLess(last["usage"]["output_tokens"], 1500, last)


def main():
    global ARGS, SERVER, openai
    ARGS, rest = parse_args()
    openai = ensure_openai()
    if openai is None:
        return skip("openai")
    with PlinthServer(ARGS.plinth, ARGS.manifest, "--api-key", API_KEY) as server:
        SERVER = server
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
