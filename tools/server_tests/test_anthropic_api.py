"""`plinth serve`'s Anthropic Messages API (POST /v1/messages, /v1/messages/count_tokens) through
the official `anthropic` Python SDK, checked against the server's own /v1/chat/completions (the
same engine path: the same text at temperature 0) and /tokenize (the same prompt tokens):
create, stream (the SDK's accumulated text == the non-streamed text), the system prompt, stop
sequences (stop_reason "stop_sequence" naming the matched one), count_tokens, the API key sent as
x-api-key, Anthropic's error shape for bad input, the per-endpoint metrics, a disconnect aborting
the request (KV blocks back), and the prefix cache and speculative decoding on /v1/messages.

  python3 tools/server_tests/test_anthropic_api.py --plinth build/plinth --manifest manifests/cpu.json

Exit 77 (ctest SKIP_RETURN_CODE) when `anthropic` can neither be imported nor pip-installed."""
import json
import os
import random
import socket
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_package, parse_args, run_tests, skip  # noqa: E402

ARGS = None
SERVER = None
API_KEY = "test-key-anthropic"
anthropic = None
QUESTION = [{"role": "user", "content": "Name three colors of the rainbow."}]
# The SDK has no keyword for the sampling fields any more; they go in the body (extra_body).
T0 = {"temperature": 0}


def client(key=API_KEY, server=None):
    s = server or SERVER
    return anthropic.Anthropic(base_url=s.url, api_key=key, max_retries=0, timeout=120)


def raw(method, path, body=None, headers=None, server=None):
    """One raw HTTP request (x-api-key unless `headers` say otherwise); (status, headers, body)."""
    return (server or SERVER).request(method, path, body,
                                      headers if headers is not None else {"x-api-key": API_KEY})


def chat_text(messages, max_tokens, system=None, stop=None):
    """The same conversation through /v1/chat/completions at temperature 0."""
    msgs = ([{"role": "system", "content": system}] if system else []) + messages
    body = {"messages": msgs, "max_tokens": max_tokens, "temperature": 0}
    if stop:
        body["stop"] = stop
    status, _, data = raw("POST", "/v1/chat/completions", body,
                          {"Authorization": f"Bearer {API_KEY}"})
    assert status == 200, data
    r = json.loads(data)
    return r["choices"][0]["message"]["content"], r


def tokenize_count(messages, system=None):
    msgs = ([{"role": "system", "content": system}] if system else []) + messages
    status, _, data = raw("POST", "/tokenize", {"messages": msgs})
    assert status == 200, data
    return json.loads(data)["count"]


class Messages(unittest.TestCase):
    def test_create_equals_chat_completions(self):
        r = client().messages.create(model=SERVER.model, max_tokens=24, messages=QUESTION,
                                     extra_body=T0)
        self.assertEqual(r.type, "message")
        self.assertEqual(r.role, "assistant")
        self.assertTrue(r.id.startswith("msg_"))
        self.assertEqual(r.model, SERVER.model)
        self.assertEqual(len(r.content), 1)
        self.assertEqual(r.content[0].type, "text")
        text, chat = chat_text(QUESTION, 24)
        self.assertEqual(r.content[0].text, text)
        self.assertTrue(text)
        self.assertEqual(r.usage.input_tokens, chat["usage"]["prompt_tokens"])
        self.assertEqual(r.usage.output_tokens, chat["usage"]["completion_tokens"])
        self.assertEqual(r.stop_reason,
                         {"length": "max_tokens", "stop": "end_turn"}[chat["choices"][0]["finish_reason"]])
        self.assertIsNone(r.stop_sequence)

    def test_end_turn(self):
        # A reply that ends by itself within the budget: end_turn, fewer tokens than max_tokens.
        r = client().messages.create(model=SERVER.model, max_tokens=200, extra_body=T0,
                                     messages=[{"role": "user", "content": "Say hi."}])
        self.assertEqual(r.stop_reason, "end_turn", r)
        self.assertLess(r.usage.output_tokens, 200)

    def test_stream_equals_create(self):
        c = client()
        for messages, max_tokens in [(QUESTION, 32), ([{"role": "user", "content": "Say hi."}], 200)]:
            full = c.messages.create(model=SERVER.model, max_tokens=max_tokens,
                                     messages=messages, extra_body=T0)
            with c.messages.stream(model=SERVER.model, max_tokens=max_tokens, messages=messages,
                                   extra_body=T0) as stream:
                deltas = [t for t in stream.text_stream]
                final = stream.get_final_message()
            self.assertGreater(len(deltas), 1)
            self.assertEqual("".join(deltas), full.content[0].text)
            self.assertEqual(final.content[0].text, full.content[0].text)
            self.assertEqual(final.stop_reason, full.stop_reason)
            self.assertEqual(final.usage.output_tokens, full.usage.output_tokens)
            self.assertEqual(final.usage.input_tokens, full.usage.input_tokens)

    def test_stream_event_names(self):
        events = list(client().messages.create(model=SERVER.model, max_tokens=8,
                                               messages=QUESTION, extra_body=T0, stream=True))
        types = [e.type for e in events]
        self.assertEqual(types[:2], ["message_start", "content_block_start"])
        self.assertEqual(types[-3:], ["content_block_stop", "message_delta", "message_stop"])
        self.assertIn("content_block_delta", types)
        self.assertTrue(all(e.delta.type == "text_delta" for e in events
                            if e.type == "content_block_delta"))
        self.assertEqual(events[-2].delta.stop_reason, "max_tokens")
        self.assertEqual(events[-2].usage.output_tokens, 8)
        # The raw body names every event and includes a ping.
        status, hdrs, data = raw("POST", "/v1/messages",
                                 {"max_tokens": 4, "messages": QUESTION, "stream": True})
        self.assertEqual(status, 200)
        self.assertTrue(hdrs["content-type"].startswith("text/event-stream"))
        frames = [f for f in data.decode().split("\n\n") if f]
        for f in frames:
            name, payload = f.split("\n", 1)
            self.assertTrue(name.startswith("event: "), f)
            self.assertEqual(json.loads(payload[len("data: "):])["type"], name[len("event: "):])
        self.assertIn("event: ping", data.decode())

    def test_system_prompt(self):
        system = "You are a pirate. Answer like a pirate."
        r = client().messages.create(model=SERVER.model, max_tokens=20, messages=QUESTION,
                                     system=system, extra_body=T0)
        text, chat = chat_text(QUESTION, 20, system=system)
        self.assertEqual(r.content[0].text, text)
        self.assertEqual(r.usage.input_tokens, tokenize_count(QUESTION, system))
        # System as a list of text blocks: the same prompt.
        r2 = client().messages.create(model=SERVER.model, max_tokens=20, messages=QUESTION,
                                      system=[{"type": "text", "text": system}], extra_body=T0)
        self.assertEqual(r2.content[0].text, text)
        plain = client().messages.create(model=SERVER.model, max_tokens=20, messages=QUESTION,
                                         extra_body=T0)
        self.assertNotEqual(plain.usage.input_tokens, r.usage.input_tokens)

    def test_stop_sequences(self):
        c = client()
        full = c.messages.create(model=SERVER.model, max_tokens=40, messages=QUESTION,
                                 extra_body=T0).content[0].text
        words = full.split()
        self.assertGreater(len(words), 3, full)
        stop = words[len(words) // 2]
        expected = full[:full.index(stop)]
        r = c.messages.create(model=SERVER.model, max_tokens=40, messages=QUESTION,
                              extra_body=T0, stop_sequences=["zzzz-never", stop])
        self.assertEqual(r.stop_reason, "stop_sequence")
        self.assertEqual(r.stop_sequence, stop)
        self.assertEqual(r.content[0].text, expected)
        with c.messages.stream(model=SERVER.model, max_tokens=40, messages=QUESTION,
                               extra_body=T0, stop_sequences=[stop]) as stream:
            final = stream.get_final_message()
        self.assertEqual(final.content[0].text, expected)
        self.assertEqual(final.stop_reason, "stop_sequence")
        self.assertEqual(final.stop_sequence, stop)
        # The same stop string through chat completions cuts at the same place.
        self.assertEqual(chat_text(QUESTION, 40, stop=[stop])[0], expected)

    def test_count_tokens(self):
        c = client()
        for system in [None, "Be brief."]:
            kw = {"system": system} if system else {}
            n = c.messages.count_tokens(model=SERVER.model, messages=QUESTION, **kw).input_tokens
            self.assertEqual(n, tokenize_count(QUESTION, system))
            r = c.messages.create(model=SERVER.model, max_tokens=1, messages=QUESTION,
                                  extra_body=T0, **kw)
            self.assertEqual(n, r.usage.input_tokens)
        # Content blocks count as their text.
        blocks = [{"role": "user", "content": [{"type": "text", "text": "Name three colors "},
                                               {"type": "text", "text": "of the rainbow."}]}]
        self.assertEqual(c.messages.count_tokens(model=SERVER.model, messages=blocks).input_tokens,
                         tokenize_count(QUESTION))

    def test_multi_turn(self):
        turns = QUESTION + [{"role": "assistant", "content": "Red, green and blue."},
                            {"role": "user", "content": "And two more?"}]
        r = client().messages.create(model=SERVER.model, max_tokens=16, messages=turns,
                                     extra_body=T0)
        self.assertEqual(r.content[0].text, chat_text(turns, 16)[0])


class Errors(unittest.TestCase):
    def assert_error(self, status, data, kind, *words):
        body = json.loads(data)
        self.assertEqual(body["type"], "error", body)
        self.assertEqual(body["error"]["type"], kind, body)
        for w in words:
            self.assertIn(w, body["error"]["message"])
        self.assertEqual(set(body), {"type", "error"})

    def test_missing_max_tokens(self):
        status, _, data = raw("POST", "/v1/messages", {"messages": QUESTION})
        self.assertEqual(status, 400)
        self.assert_error(status, data, "invalid_request_error", "max_tokens", "required")

    def test_sdk_errors(self):
        c = client()
        cases = [
            (dict(messages=[{"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "iVBORw0KGgo="}}]}]), "image"),
            (dict(messages=[{"role": "user", "content": [{"type": "video", "x": 1}]}]),
             "unknown content block type"),
            (dict(messages=QUESTION, tools=[{"name": "f", "description": "d",
                                             "input_schema": {"type": "object"}}]), "tools"),
            (dict(messages=QUESTION, tool_choice={"type": "any"}), "tool_choice"),
            (dict(messages=QUESTION, extra_body={"temperature": 1.5}), "temperature"),
            (dict(messages=QUESTION, extra_body={"top_p": 0}), "top_p"),
            (dict(messages=QUESTION, output_config={"format": {"type": "json_schema", "schema": {
                "type": "object"}}}), "output_config.format"),
            (dict(messages=QUESTION, stop_sequences=[""]), "stop_sequences"),
            (dict(messages=[{"role": "system", "content": "x"}]), "role"),
            (dict(messages=QUESTION + [{"role": "assistant", "content": "Sure"}]), "prefill"),
            (dict(messages=[]), "messages"),
        ]
        for kw, word in cases:
            with self.subTest(word=word):
                with self.assertRaises(anthropic.BadRequestError) as cm:
                    c.messages.create(model=SERVER.model, max_tokens=8, **kw)
                self.assertEqual(cm.exception.status_code, 400)
                self.assertEqual(cm.exception.body["type"], "error")
                self.assertEqual(cm.exception.body["error"]["type"], "invalid_request_error")
                self.assertIn(word, cm.exception.body["error"]["message"])

    def test_wrong_types_and_over_context(self):
        for body, word in [({"max_tokens": "8", "messages": QUESTION}, "max_tokens"),
                           ({"max_tokens": 8, "messages": "hi"}, "messages"),
                           ({"max_tokens": 8, "messages": QUESTION, "stream": "yes"}, "stream"),
                           ({"max_tokens": 10 ** 7, "messages": QUESTION}, "max_tokens"),
                           ({"max_tokens": 8, "messages": [{"role": "user",
                                                            "content": "word " * 20000}]},
                            "context length")]:
            with self.subTest(word=word):
                status, _, data = raw("POST", "/v1/messages", body)
                self.assertEqual(status, 400, data)
                self.assert_error(status, data, "invalid_request_error", word)
        status, _, data = raw("POST", "/v1/messages", "{not json")
        self.assertEqual(status, 400)
        self.assert_error(status, data, "invalid_request_error", "JSON")
        status, _, data = raw("GET", "/v1/messages")
        self.assertEqual(status, 405)
        self.assert_error(status, data, "invalid_request_error", "GET")

    def test_random_bodies(self):
        # Fields of the API set to values of every type, 200 bodies (fixed seed): never a 5xx,
        # always Anthropic's shape, and the server serves on.
        rng = random.Random(29)
        values = [None, True, 0, -1, 1.5, 10 ** 30, "", "x", "none", [], {}, [1], ["x"],
                  {"type": "text"}, {"type": "none"}, {"type": "any"}, {"type": 5},
                  [{"type": "text", "text": "hi"}], [{"type": "text"}], [{"type": 5}], [None],
                  {"format": {"type": 3}}, {"user_id": 5}]
        keys = ["model", "max_tokens", "messages", "system", "stop_sequences", "temperature",
                "top_p", "top_k", "metadata", "stream", "tools", "tool_choice", "thinking",
                "output_config", "container", "mcp_servers", "seed", "cache_salt"]
        for _ in range(200):
            body = {"max_tokens": 2, "messages": QUESTION}
            for k in rng.sample(keys, 3):
                body[k] = rng.choice(values)
            if rng.random() < 0.3:
                body["messages"] = [{"role": rng.choice(["user", "assistant", 5]),
                                     "content": rng.choice(values)}]
            path = rng.choice(["/v1/messages", "/v1/messages/count_tokens"])
            status, _, data = raw("POST", path, body)
            self.assertLess(status, 500, (path, body, data))
            if status != 200:
                err = json.loads(data)
                self.assertEqual(err["type"], "error", data)
                self.assertEqual(set(err["error"]), {"type", "message"}, data)
        self.assertEqual(client().messages.create(model=SERVER.model, max_tokens=2,
                                                  messages=QUESTION).usage.output_tokens, 2)

    def test_oversized_body(self):
        # Over --body-limit (1 MiB): 413 in Anthropic's shape, then the connection closes.
        u = urllib.parse.urlparse(SERVER.url)
        body = b'{"max_tokens": 8, "messages": [{"role": "user", "content": "' + \
            b"a" * (2 << 20) + b'"}]}'
        with socket.create_connection((u.hostname, u.port), timeout=30) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                      b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            got = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        head, _, payload = got.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 413"), head)
        self.assert_error(413, payload, "request_too_large", "limit")

    def test_unknown_model_and_api_key(self):
        with self.assertRaises(anthropic.NotFoundError) as cm:
            client().messages.create(model="claude-nonexistent", max_tokens=8, messages=QUESTION)
        self.assertEqual(cm.exception.body["error"]["type"], "not_found_error")
        with self.assertRaises(anthropic.AuthenticationError) as cm:
            client(key="wrong").messages.create(model=SERVER.model, max_tokens=8,
                                                messages=QUESTION)
        self.assertEqual(cm.exception.body["error"]["type"], "authentication_error")
        self.assertIn("x-api-key", cm.exception.body["error"]["message"])
        with self.assertRaises(anthropic.AuthenticationError):
            client(key="wrong").messages.count_tokens(model=SERVER.model, messages=QUESTION)
        # Authorization: Bearer works on /v1/messages too.
        status, _, _ = raw("POST", "/v1/messages", {"max_tokens": 2, "messages": QUESTION},
                           {"Authorization": f"Bearer {API_KEY}"})
        self.assertEqual(status, 200)
        # A bad request leaves the server serving others.
        r = client().messages.create(model=SERVER.model, max_tokens=2, messages=QUESTION)
        self.assertEqual(r.usage.output_tokens, 2)

    def test_metrics_by_endpoint(self):
        before = SERVER.metrics()
        key = 'plinth_http_requests_total{route="/v1/messages",status="200"}'
        ckey = 'plinth_http_requests_total{route="/v1/messages/count_tokens",status="200"}'
        client().messages.create(model=SERVER.model, max_tokens=2, messages=QUESTION)
        client().messages.count_tokens(model=SERVER.model, messages=QUESTION)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            m = SERVER.metrics()
            if m.get(key, 0) > before.get(key, 0) and m.get(ckey, 0) > before.get(ckey, 0):
                break
            time.sleep(0.05)
        self.assertEqual(m.get(key, 0), before.get(key, 0) + 1)
        self.assertEqual(m.get(ckey, 0), before.get(ckey, 0) + 1)

    def test_disconnect_mid_stream_frees_kv(self):
        u = urllib.parse.urlparse(SERVER.url)
        before = SERVER.metrics()
        body = json.dumps({"max_tokens": 2000, "stream": True, "temperature": 0,
                           "messages": [{"role": "user", "content": "Write a long story."}]})
        s = socket.create_connection((u.hostname, u.port))
        s.sendall((f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {API_KEY}\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                   f"{body}").encode())
        got = b""
        while got.count(b"content_block_delta") < 3:
            got += s.recv(4096)
        self.assertGreater(SERVER.metrics()["plinth_kv_cache_used_blocks"], 0)
        s.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            m = SERVER.metrics()
            if m["plinth_kv_cache_used_blocks"] == 0 and m["plinth_num_requests_running"] == 0:
                break
            time.sleep(0.05)
        self.assertEqual(m["plinth_kv_cache_used_blocks"], 0)
        self.assertEqual(m["plinth_request_aborted_total"],
                         before["plinth_request_aborted_total"] + 1)


class EnginePaths(unittest.TestCase):
    """/v1/messages on the prefix-cache and speculative manifests: the same text, hits / drafts."""

    # A request that copies its input, so that n-gram speculation finds drafts.
    CODE = ("def total_price(items, tax_rate):\n    subtotal = sum(item.price for item in items)\n"
            "    tax = subtotal * tax_rate\n    return subtotal + tax\n")
    ASK = [{"role": "user", "content": "Rewrite this function with type hints, keeping the body "
                                       "identical:\n\n" + CODE}]

    def run_manifest(self, manifest, metric):
        path = os.path.join(os.path.dirname(ARGS.manifest), manifest)
        system = "You are a careful Python programmer. " * 4
        with PlinthServer(ARGS.plinth, path) as s:
            c = client(server=s)
            texts = []
            before = s.metrics().get(metric, 0)
            for _ in range(2):
                r = c.messages.create(model=s.model, max_tokens=32, messages=self.ASK,
                                      system=system, extra_body=T0)
                texts.append(r.content[0].text)
            grown = s.metrics().get(metric, 0) - before
        self.assertEqual(texts[0], texts[1])
        base = client().messages.create(model=SERVER.model, max_tokens=32, messages=self.ASK,
                                        system=system, extra_body=T0).content[0].text
        self.assertEqual(texts[0], base)
        self.assertGreater(grown, 0, metric)

    def test_prefix_cache(self):
        self.run_manifest("cpu_prefix.json", "plinth_prefix_cache_hits_total")

    def test_speculation(self):
        self.run_manifest("cpu_spec_ngram.json", "plinth_spec_decode_num_draft_tokens_total")


def main():
    global ARGS, SERVER, anthropic
    ARGS, rest = parse_args()
    anthropic = ensure_package("anthropic")
    if anthropic is None:
        return skip("anthropic")
    with PlinthServer(ARGS.plinth, ARGS.manifest, "--api-key", API_KEY) as server:
        SERVER = server
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
