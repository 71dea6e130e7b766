"""Bad input against `plinth serve`, over raw sockets: one table of cases, each with the status it
must get (and, for errors, the JSON path `param` must name). Never a 500, a crash or a hang; after
the table the server is healthy, serves the next request, and holds as many KV blocks as before.
A second server with a tiny KV pool (manifest copy with num_blocks 8) checks that a request that
can never fit the pool — a chat request without max_tokens, whose default is the rest of the
context — is a 400 naming the limit and the fix, streamed or not; and that --max-model-len is
checked against the pool at start-up and bounds the default max_tokens. A request whose own
repetition_penalty (valid, but tiny) drives its logits to +inf gets a 400 naming the field, streamed
or not, while a concurrent request finishes 200 with exactly the tokens it gets alone.

  python3 tools/server_tests/test_bad_input.py --plinth build/plinth --manifest manifests/cpu.json
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, parse_args, run_tests  # noqa: E402

ARGS = None
SERVER = None
IDLE_TIMEOUT_S = 2  # the server's --idle-timeout here
MARGIN_S = 5
CONTEXT = None  # the model's context length (from /tokenize's max_model_len)
VOCAB = 49152   # SmolLM2's vocabulary


def connect(server=None, timeout=120):
    u = urllib.parse.urlparse((server or SERVER).url)
    return socket.create_connection((u.hostname, u.port), timeout=timeout)


def http_bytes(method, path, body=b"", headers=None):
    """A request as bytes; `body` bytes, str or a JSON value; Content-Length unless chunked."""
    if not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    h = {"Host": "plinth", "Content-Type": "application/json"}
    h.update(headers or {})
    if "Transfer-Encoding" not in h:
        h["Content-Length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items())
    return head.encode() + b"\r\n" + body


LEFTOVER = {}  # socket → bytes received past the response read last (pipelined answers)


def read_response(sock):
    """One response (Content-Length or chunked body); returns (status, head str, body bytes)."""
    buf = LEFTOVER.pop(sock, b"")

    def need(n=1):
        nonlocal buf
        while len(buf) < n:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"closed mid-response: {buf[:200]!r}")
            buf += chunk

    while b"\r\n\r\n" not in buf:
        need(len(buf) + 1)
    head, buf = buf.split(b"\r\n\r\n", 1)
    head = head.decode()
    fields = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip()
              for l in head.split("\r\n")[1:]}
    if fields.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            while b"\r\n" not in buf:
                need(len(buf) + 1)
            size_line, buf = buf.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            need(size + 2)
            body, buf = body + buf[:size], buf[size + 2:]
            if size == 0:
                break
    else:
        n = int(fields.get("content-length", "0"))
        need(n)
        body, buf = buf[:n], buf[n:]
    if buf:
        LEFTOVER[sock] = buf
    return int(head.split()[1]), head, body


def exchange(request_bytes):
    """Sends raw request bytes on a new connection; returns the first response."""
    with connect() as s:
        s.sendall(request_bytes)
        return read_response(s)


def post(path, body, headers=None):
    return exchange(http_bytes("POST", path, body, headers))


def used_blocks():
    return SERVER.metrics()["plinth_kv_cache_used_blocks"]


def wait_blocks(expected, limit_s=10):
    """The used-blocks gauge is updated after each engine step: poll until it is `expected`."""
    value = None
    for _ in range(int(limit_s / 0.1)):
        value = used_blocks()
        if value == expected:
            return value
        time.sleep(0.1)
    return value


def chat(content, **extra):
    return {"messages": [{"role": "user", "content": content}], **extra}


def cmpl(prompt, **extra):
    return {"prompt": prompt, "max_tokens": 2, "temperature": 0, **extra}


# (name, path, body, expected status, the `param` an error names or None[, text the message has])
def table():
    C, V = CONTEXT, VOCAB
    nested = b"[" * 100000
    return [
        ("empty prompt string", "/v1/completions", cmpl(""), 400, "prompt"),
        ("empty prompt array", "/v1/completions", cmpl([]), 400, "prompt"),
        ("empty token array", "/v1/completions", cmpl([[]]), 400, "prompt"),
        ("prompt of exactly the context", "/v1/completions", cmpl([1] * C), 400, "prompt"),
        ("prompt of context - 1 + 2 tokens", "/v1/completions", cmpl([1] * (C - 1)), 400,
         "max_tokens"),
        ("token id = vocab", "/v1/completions", cmpl([1, V]), 400, "prompt"),
        ("negative token id", "/v1/completions", cmpl([1, -1]), 400, "prompt"),
        ("token id 2^32 + 5", "/v1/completions", cmpl([2**32 + 5]), 400, "prompt"),
        ("token id 1.5", "/v1/completions", cmpl([1.5]), 422, "prompt"),
        ("temperature 1e-30 (greedy)", "/v1/completions",
         cmpl("Hi", temperature=1e-30), 200, None),
        ("temperature -1", "/v1/completions", cmpl("Hi", temperature=-1), 400, "temperature"),
        ("temperature 1e400", "/v1/completions",
         b'{"prompt": "Hi", "temperature": 1e400}', 400, None),
        ("top_k 0.5", "/v1/completions", cmpl("Hi", top_k=0.5), 422, "top_k"),
        ("top_k 1e12 (a float)", "/v1/completions", cmpl("Hi", top_k=1e12), 422, "top_k",
         "without a fraction or exponent"),
        ("top_k 10^12 (an integer: all tokens)", "/v1/completions",
         cmpl("Hi", top_k=10**12), 200, None),
        ("top_k -2", "/v1/completions", cmpl("Hi", top_k=-2), 400, "top_k"),
        ("top_p 0", "/v1/completions", cmpl("Hi", top_p=0), 400, "top_p"),
        ("top_p 1.5", "/v1/completions", cmpl("Hi", top_p=1.5), 400, "top_p",
         "top_p = 1.5: must be in (0, 1]"),
        # numbers printed as given (they printed as their double: 21.0, 2.0999999046325684)
        ("top_logprobs 21", "/v1/chat/completions", chat("Hi", logprobs=True, top_logprobs=21),
         400, "top_logprobs", "top_logprobs = 21: must be in [0, 20]"),
        ("logprobs 21", "/v1/completions", cmpl("Hi", logprobs=21), 400, "logprobs",
         "logprobs = 21: must be"),
        ("temperature 2.1", "/v1/completions", cmpl("Hi", temperature=2.1), 400, "temperature",
         "temperature = 2.1: must be in [0, 2]"),
        # stream_options without a stream: OpenAI answers 400 naming it
        ("stream_options without stream", "/v1/completions",
         cmpl("Hi", stream_options={"include_usage": True}), 400, "stream_options",
         "only allowed with \"stream\": true"),
        ("stream_options with stream false", "/v1/chat/completions",
         chat("Hi", stream=False, stream_options={"include_usage": True}), 400,
         "stream_options"),
        ("stream_options null without stream", "/v1/completions",
         cmpl("Hi", stream_options=None), 200, None),
        ("n 10^12", "/v1/completions", cmpl("Hi", n=10**12), 400, "n"),
        ("n 2^64 (beyond uint64: a float)", "/v1/completions", cmpl("Hi", n=2**64), 422, "n",
         "within 64 bits"),
        ("n 0", "/v1/completions", cmpl("Hi", n=0), 400, "n"),
        ("max_tokens 0", "/v1/completions", cmpl("Hi", max_tokens=0), 400, "max_tokens"),
        ("max_tokens '10'", "/v1/completions", cmpl("Hi", max_tokens="10"), 422, "max_tokens"),
        # wrong JSON types at several depths
        ("body an array", "/v1/completions", [], 400, None),
        ("body a string", "/v1/completions", "\"x\"", 400, None),
        ("prompt 5", "/v1/completions", cmpl(5), 422, "prompt"),
        ("prompt [[1, 'a']]", "/v1/completions", cmpl([[1, "a"]]), 422, "prompt"),
        ("prompt [{}]", "/v1/completions", cmpl([{}]), 422, "prompt"),
        ("stop [1]", "/v1/completions", cmpl("Hi", stop=[1]), 422, "stop"),
        ("stream 'yes'", "/v1/completions", cmpl("Hi", stream="yes"), 422, "stream"),
        ("stream_options 5", "/v1/completions",
         cmpl("Hi", stream=True, stream_options=5), 422, "stream_options"),
        ("stream_options.include_usage 'yes'", "/v1/completions",
         cmpl("Hi", stream=True, stream_options={"include_usage": "yes"}), 422,
         "stream_options.include_usage"),
        ("messages 'hi'", "/v1/chat/completions", {"messages": "hi"}, 422, "messages"),
        ("messages []", "/v1/chat/completions", {"messages": []}, 400, "messages"),
        ("messages [5]", "/v1/chat/completions", {"messages": [5]}, 422, "messages[0]"),
        ("messages[0].role 5", "/v1/chat/completions",
         {"messages": [{"role": 5, "content": "hi"}]}, 422, "messages[0].role"),
        ("messages[0].role unknown", "/v1/chat/completions",
         {"messages": [{"role": "wizard", "content": "hi"}]}, 400, "messages"),
        ("messages[0].content 5", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": 5}]}, 422, "messages[0].content"),
        ("user message without content", "/v1/chat/completions",
         {"messages": [{"role": "user"}]}, 422, "messages[0].content", "required"),
        ("assistant message without content (allowed)", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant"},
                       {"role": "user", "content": "again"}], "max_tokens": 2}, 200, None),
        ("content part without text", "/v1/chat/completions",
         chat([{"type": "text", "text": "a"}, {"type": "text"}]), 422,
         "messages[0].content[1].text", "messages[0].content[1].text: required string"),
        ("content part text 5", "/v1/chat/completions",
         chat([{"type": "text", "text": 5}]), 422, "messages[0].content[0].text"),
        ("content part 5", "/v1/chat/completions", chat([5]), 422, "messages[0].content[0]"),
        ("reasoning_content 5", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": "q"},
                       {"role": "assistant", "content": "a", "reasoning_content": 5},
                       {"role": "user", "content": "q2"}]}, 422,
         "messages[1].reasoning_content"),
        ("reasoning_content null and a string", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": "q"},
                       {"role": "assistant", "content": "a", "reasoning_content": None},
                       {"role": "assistant", "content": "b", "reasoning_content": "r"},
                       {"role": "user", "content": "q2"}], "max_tokens": 1}, 200, None),
        ("chat_template_kwargs not an object", "/v1/chat/completions",
         chat("Hi", chat_template_kwargs=[1]), 422, "chat_template_kwargs"),
        ("chat_template_kwargs unknown variable", "/v1/chat/completions",
         chat("Hi", chat_template_kwargs={"foo": 1}), 400, "chat_template_kwargs.foo",
         "enable_thinking"),
        ("enable_thinking not a boolean", "/v1/chat/completions",
         chat("Hi", chat_template_kwargs={"enable_thinking": "no"}), 422,
         "chat_template_kwargs.enable_thinking"),
        ("enable_thinking false (ChatML ignores it)", "/v1/chat/completions",
         chat("Hi", max_tokens=1, chat_template_kwargs={"enable_thinking": False}), 200, None),
        ("content part without type", "/v1/chat/completions",
         chat([{"text": "a"}]), 422, "messages[0].content[0].type"),
        ("content part image_url", "/v1/chat/completions",
         chat([{"type": "image_url", "image_url": {"url": "x"}}]), 400,
         "messages[0].content[0].type"),
        # strings that are not text
        ("invalid UTF-8 in a JSON string", "/v1/completions",
         b'{"prompt": "a\xff\xfeb", "max_tokens": 2}', 400, None),
        ("invalid UTF-8 in chat content", "/v1/chat/completions",
         b'{"messages": [{"role": "user", "content": "\xc3("}]}', 400, None),
        ("lone high surrogate", "/v1/completions",
         b'{"prompt": "a\\ud800b", "max_tokens": 2}', 400, None),
        ("lone low surrogate", "/v1/completions",
         b'{"prompt": "a\\udc00b", "max_tokens": 2}', 400, None),
        ("surrogate pair (valid: U+1F600)", "/v1/completions",
         b'{"prompt": "a\\ud83d\\ude00b", "max_tokens": 2, "temperature": 0}', 200, None),
        # shapes
        ("100,000 '[' unclosed", "/v1/completions", nested, 400, None),
        ("100,000 nested arrays as the body", "/v1/completions",
         nested + b"]" * 100000, 400, None),
        ("100,000 nested arrays as the prompt", "/v1/completions",
         b'{"prompt": ' + nested + b"]" * 100000 + b"}", 422, "prompt"),
        ("100,000 nested arrays as messages", "/v1/chat/completions",
         b'{"messages": ' + nested + b"]" * 100000 + b"}", 422, "messages[0]"),
        # output-constraint schemas are written out (dump) and walked by recursive code: 100,000
        # nested arrays in one overflowed a network thread's stack (the server died)
        ("100,000 nested arrays in response_format's schema", "/v1/chat/completions",
         b'{"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": '
         b'"json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "x": '
         + nested + b"]" * 100000 + b"}}}}", 400, "response_format.json_schema.schema",
         "nested deeper than 160 levels"),
        ("100,000 nested arrays in structured_outputs.json", "/v1/completions",
         b'{"prompt": "hi", "structured_outputs": {"json": {"x": ' + nested + b"]" * 100000
         + b"}}}", 400, "structured_outputs.json"),
        ("100,000 nested arrays in text.format.schema", "/v1/responses",
         b'{"input": "hi", "text": {"format": {"type": "json_schema", "name": "x", "schema": '
         b'{"x": ' + nested + b"]" * 100000 + b"}}}}", 400, "text.format.schema"),
        ("not JSON", "/v1/completions", b"prompt=hi", 400, None),
        ("oversized body (2 MiB)", "/v1/completions",
         b'{"prompt": "' + b"a" * (2 << 20) + b'"}', 413, None),
    ]


class BadInput(unittest.TestCase):
    def test_table(self):
        before = wait_blocks(0)
        self.assertEqual(before, 0)
        failures = []
        for name, path, body, want, param, *text in table():
            status, head, data = post(path, body)
            problem = None
            if status != want:
                problem = f"status {status}, expected {want}"
            elif want >= 400:
                try:
                    err = json.loads(data)["error"]
                except (ValueError, KeyError):
                    err = None
                if not err or not err.get("message"):
                    problem = "no OpenAI error body"
                elif param is not None and err.get("param") != param:
                    problem = f"param {err.get('param')!r}, expected {param!r}"
                elif text and text[0] not in err["message"]:
                    problem = f"the message lacks {text[0]!r}"
            if problem:
                failures.append(f"{name}: {problem}: {data[:300]!r}")
            else:
                print(f"  ok {want} {name}")
        self.assertEqual(failures, [])
        self.assertEqual(exchange(http_bytes("GET", "/health"))[0], 200)
        self.assertEqual(post("/v1/completions", cmpl("The sky is"))[0], 200)
        self.assertEqual(wait_blocks(before), before, "KV blocks leaked by the table")

    def test_deep_bodies_beside_a_schema_or_tools_do_not_hold_the_network(self):
        """A body read in order (response_format's schema, tools' parameters) with 40,000 nested
        objects elsewhere in it, each level with a later member: nlohmann's ordered parse copied
        each level's subtree again (quadratic: 20,000 levels held a network thread 20 s), so two
        such requests starved every other connection. Now linear: both are answered, and /health
        meanwhile, within seconds."""
        deep = '{"a":' * 40000 + "1" + ',"b":1}' * 40000
        bodies = [
            '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "response_format": '
            '{"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}, '
            '"metadata": ' + deep + '}',
            '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "tools": [{"type": '
            '"function", "function": {"name": "f"}}], "metadata": ' + deep + '}']
        done = {}

        def send(i):
            t0 = time.monotonic()
            status = post("/v1/chat/completions", bodies[i].encode())[0]
            done[i] = (status, time.monotonic() - t0)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(0.2)
        self.assertEqual(exchange(http_bytes("GET", "/health"))[0], 200)
        health_s = time.monotonic() - t0
        for t in threads:
            t.join(120)
        self.assertLess(health_s, 10, "/health waited behind the deep bodies")
        for i in range(2):
            self.assertIn(i, done)
            self.assertNotEqual(done[i][0], 500)
            self.assertLess(done[i][1], 10, f"body {i} took {done[i][1]:.1f} s")

    def test_oversized_header_is_431(self):
        status, _, data = exchange(http_bytes("GET", "/health", headers={"X-Big": "a" * 100000}))
        self.assertEqual(status, 431, data)
        self.assertIn(b"headers", data)
        self.assertEqual(exchange(http_bytes("GET", "/health"))[0], 200)

    def test_chunked_body_is_accepted(self):
        body = json.dumps(cmpl("The capital of France is")).encode()
        half = len(body) // 2
        chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, body[:half], len(body) - half,
                                                            body[half:])
        status, _, data = exchange(http_bytes("POST", "/v1/completions", chunked,
                                              {"Transfer-Encoding": "chunked"}))
        self.assertEqual(status, 200, data)
        self.assertEqual(json.loads(data)["usage"]["completion_tokens"], 2)

    def test_pipelined_requests_answered_in_order(self):
        one = http_bytes("POST", "/v1/completions", cmpl("One", max_tokens=1, ignore_eos=True))
        three = http_bytes("POST", "/v1/completions", cmpl("Two", max_tokens=3, ignore_eos=True))
        with connect() as s:
            s.sendall(one + three + http_bytes("GET", "/health"))
            answers = [read_response(s) for _ in range(3)]
        self.assertEqual([a[0] for a in answers], [200, 200, 200])
        self.assertEqual(json.loads(answers[0][2])["usage"]["completion_tokens"], 1)
        self.assertEqual(json.loads(answers[1][2])["usage"]["completion_tokens"], 3)
        self.assertEqual(json.loads(answers[2][2]), {"status": "ok"})

    def test_half_sent_request_is_closed_after_the_idle_timeout(self):
        with connect(timeout=IDLE_TIMEOUT_S + MARGIN_S) as s:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: plinth\r\n"
                      b"Content-Length: 50\r\n\r\n{\"prompt\": ")
            start = time.monotonic()
            try:
                while s.recv(4096):
                    pass
            except ConnectionResetError:
                pass
            self.assertLess(time.monotonic() - start, IDLE_TIMEOUT_S + MARGIN_S)
        self.assertEqual(post("/v1/completions", cmpl("Hello"))[0], 200)


def tiny_pool_manifest(directory, model=None, num_blocks=8):
    """A copy of --manifest whose KV pool has `num_blocks` blocks of 16 tokens (and whose model is
    `model` when given); returns its path."""
    with open(ARGS.manifest) as f:
        m = json.load(f)
    base = os.path.dirname(os.path.abspath(ARGS.manifest))
    m["model"] = model or os.path.join(base, m["model"])
    for p in m["plugins"]:
        if p["kind"] == "kv_cache":
            p.setdefault("config", {})["num_blocks"] = num_blocks
        if "/" not in p["library"]:
            p["library"] = os.path.join(os.path.dirname(os.path.abspath(ARGS.plinth)),
                                        "plugins", "libplinth_" + p["library"] + ".so")
    path = os.path.join(directory, "tiny_pool.json")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


class BaseModel(unittest.TestCase):
    def test_model_without_chat_template_refuses_chat_naming_the_option(self):
        """A base model (`plinth synth-model` writes no tokenizer.chat_template): chat is a 400
        naming --chat-template, completions work."""
        global SERVER
        main_server = SERVER
        with tempfile.TemporaryDirectory() as d:
            model = os.path.join(d, "base.gguf")
            subprocess.run([ARGS.plinth, "synth-model", "--layers", "1", "--output", model],
                           check=True, stdout=subprocess.DEVNULL)
            with PlinthServer(ARGS.plinth, tiny_pool_manifest(d, model, 64),
                              "--max-model-len", "1024") as base:
                try:
                    SERVER = base
                    for stream in (False, True):
                        status, _, data = post("/v1/chat/completions",
                                               chat("Hi", stream=stream, max_tokens=1))
                        self.assertEqual(status, 400, data)
                        err = json.loads(data)["error"]
                        self.assertEqual(err["param"], "messages")
                        self.assertIn("no tokenizer.chat_template", err["message"])
                        self.assertIn("--chat-template", err["message"])
                    self.assertEqual(post("/v1/completions", cmpl("Hi"))[0], 200)
                finally:
                    SERVER = main_server


class TinyPool(unittest.TestCase):
    def test_request_that_can_never_fit_is_400(self):
        global SERVER
        main_server = SERVER
        with tempfile.TemporaryDirectory() as d, \
                PlinthServer(ARGS.plinth, tiny_pool_manifest(d)) as tiny:
            try:
                SERVER = tiny
                for stream in (False, True):
                    status, _, data = post("/v1/chat/completions", chat("Hi", stream=stream))
                    self.assertEqual(status, 400, data)
                    msg = json.loads(data)["error"]["message"]
                    self.assertIn("can never fit the KV pool", msg)
                    self.assertIn("num_blocks", msg)
                    self.assertIn("max_tokens", msg)
                    self.assertIn("defaults to the rest of the context", msg)
                # n = 2: both choices refused, one 400
                status, _, data = post("/v1/chat/completions", chat("Hi", n=2))
                self.assertEqual(status, 400, data)
                status, _, data = post("/v1/chat/completions", chat("Hi", max_tokens=4))
                self.assertEqual(status, 200, data)
                status, _, data = post("/v1/chat/completions",
                                       chat("Hi", max_tokens=4, stream=True))
                self.assertEqual(status, 200, data)
                self.assertIn(b"data: [DONE]", data)
                self.assertEqual(exchange(http_bytes("GET", "/health"))[0], 200)
                self.assertEqual(wait_blocks(0), 0)
            finally:
                SERVER = main_server
            self.assertEqual(tiny.stop(), 0)


class MaxModelLen(unittest.TestCase):
    def test_checked_against_the_pool_and_bounds_defaults(self):
        global SERVER
        main_server = SERVER
        with tempfile.TemporaryDirectory() as d:
            tiny = tiny_pool_manifest(d)  # 8 blocks of 16 tokens = 128 tokens
            # Larger than the pool: refused at start-up, naming the option and the limit.
            r = subprocess.run([ARGS.plinth, "serve", "--manifest", tiny, "--port", "0",
                                "--max-model-len", "4096"], capture_output=True, text=True,
                               timeout=120)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("--max-model-len", r.stderr)
            self.assertIn("<= 128", r.stderr)
            self.assertIn("num_blocks >= 256", r.stderr)
            # Larger than the model's context: refused too.
            r = subprocess.run([ARGS.plinth, "serve", "--manifest", ARGS.manifest, "--port", "0",
                                "--max-model-len", str(CONTEXT + 1)], capture_output=True,
                               text=True, timeout=120)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("exceeds the model's context length", r.stderr)
            with PlinthServer(ARGS.plinth, tiny, "--max-model-len", "128") as server:
                try:
                    SERVER = server
                    status, _, data = exchange(http_bytes("GET", "/v1/models"))
                    self.assertEqual(json.loads(data)["data"][0]["max_model_len"], 128, data)
                    # No max_tokens: the default is the rest of 128 tokens, which fits the pool.
                    status, _, data = post("/v1/chat/completions",
                                           chat("Hi", temperature=0, ignore_eos=True))
                    self.assertEqual(status, 200, data)
                    usage = json.loads(data)["usage"]
                    self.assertEqual(usage["prompt_tokens"] + usage["completion_tokens"], 128)
                    status, _, data = post("/v1/completions", cmpl([1] * 128))
                    self.assertEqual(status, 400, data)
                    self.assertIn(b"context_length_exceeded", data)
                    self.assertEqual(wait_blocks(0), 0)
                finally:
                    SERVER = main_server
                self.assertEqual(server.stop(), 0)


class ListenAddress(unittest.TestCase):
    """--host takes a name (localhost) as well as an address; a port already in use and a host
    that is neither end the start-up naming host:port / the host (it said only "bind: Address
    already in use" and "Invalid argument", and refused --host localhost)."""

    def test_host_name_busy_port_and_bad_host(self):
        port = int(SERVER.url.rsplit(":", 1)[1])
        r = subprocess.run([ARGS.plinth, "serve", "--manifest", ARGS.manifest, "--port",
                            str(port)], capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"cannot listen on 127.0.0.1:{port}: ", r.stderr)
        self.assertIn("pick another port", r.stderr)
        r = subprocess.run([ARGS.plinth, "serve", "--manifest", ARGS.manifest, "--port", "0",
                            "--host", "no-such-host.invalid"], capture_output=True, text=True,
                           timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('host "no-such-host.invalid" is neither an IP address nor a name', r.stderr)
        # A truncated model file is an input error: exit 2 naming it, as `generate` exits.
        with tempfile.TemporaryDirectory() as d:
            model = os.path.join(d, "truncated.gguf")
            with open(ARGS.manifest) as f:  # the manifest names its model relative to itself
                real = os.path.join(os.path.dirname(os.path.abspath(ARGS.manifest)),
                                    json.load(f)["model"])
            with open(real, "rb") as src, open(model, "wb") as dst:
                dst.write(src.read(1_000_000))
            r = subprocess.run([ARGS.plinth, "serve", "--manifest", ARGS.manifest, "--port", "0",
                                "--model", model], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"error: {model}: offset ", r.stderr)
            # The port is taken before the model loads: a busy one stops the start first (it
            # used to load the model, however long that took, and only then fail to listen).
            r = subprocess.run([ARGS.plinth, "serve", "--manifest", ARGS.manifest, "--port",
                                str(port), "--model", model], capture_output=True, text=True,
                               timeout=120)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(f"cannot listen on 127.0.0.1:{port}: ", r.stderr)
            self.assertNotIn(model, r.stderr)
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--host", "localhost") as server:
            self.assertTrue(server.url.startswith("http://localhost:"), server.url)
            with urllib.request.urlopen(server.url + "/health", timeout=30) as h:
                self.assertEqual(h.status, 200)
            self.assertEqual(server.stop(), 0)


class NonFiniteLogits(unittest.TestCase):
    """repetition_penalty 1e-40 is in range ((0, 10]) but divides every positive logit of a
    prompt token past FLT_MAX: that request alone fails, 400 naming the field."""

    BAD = cmpl("the the the the the the", repetition_penalty=1e-40, max_tokens=8)

    def check_refused(self, status, data):
        self.assertEqual(status, 400, data)
        err = json.loads(data)["error"]
        self.assertEqual(err["param"], "repetition_penalty", err)
        self.assertEqual(err["type"], "invalid_request_error", err)
        self.assertIn("repetition_penalty = 9.99995e-41 turns the logit", err["message"])

    def test_refused_naming_the_field_while_a_concurrent_request_finishes(self):
        before = wait_blocks(0)
        good = cmpl("The capital of France is", max_tokens=24, ignore_eos=True)
        alone = post("/v1/completions", good)
        self.assertEqual(alone[0], 200, alone[2])
        results = {}
        runner = threading.Thread(target=lambda: results.update(good=post("/v1/completions",
                                                                          good)))
        runner.start()
        time.sleep(0.2)  # the good request is admitted; the bad ones run beside it
        for stream in (False, True):
            status, _, data = post("/v1/completions", dict(self.BAD, stream=stream))
            self.check_refused(status, data)
        runner.join(120)
        status, _, data = results["good"]
        self.assertEqual(status, 200, data)
        got, want = json.loads(data)["choices"][0], json.loads(alone[2])["choices"][0]
        self.assertEqual(got["finish_reason"], "length")
        self.assertEqual(got["text"], want["text"])
        self.assertEqual(wait_blocks(before), before, "KV blocks leaked by the failed request")
        self.assertEqual(exchange(http_bytes("GET", "/health"))[0], 200)


def main():
    global ARGS, SERVER, CONTEXT
    ARGS, rest = parse_args()
    with PlinthServer(ARGS.plinth, ARGS.manifest, "--idle-timeout", str(IDLE_TIMEOUT_S)) as server:
        SERVER = server
        status, _, data = post("/tokenize", {"prompt": "x"})
        assert status == 200, data
        CONTEXT = json.loads(data)["max_model_len"]
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
