"""Integration test of `plinth serve`'s OpenAI request fields beyond the basics, against the real
model at temperature 0: logit_bias, echo, best_of, and vLLM's extras sent the way the OpenAI
client's `extra_body` sends them (top-level body fields): truncate_prompt_tokens, min_tokens,
stop_token_ids, include_stop_str_in_output, skip_special_tokens. Expected values come from
independent requests: the runner-up of a plain request's top_logprobs, the plain completion's
text, the n=3 candidates' logprob sums, /tokenize.

  python3 tools/server_tests/test_openai_fields.py --plinth build/plinth --manifest manifests/cpu.json

Exit 77 (ctest SKIP_RETURN_CODE) when `openai` can neither be imported nor pip-installed."""
import json
import math
import sys
import unittest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_openai, parse_args, run_tests, skip  # noqa: E402

ARGS = None
SERVER = None
API_KEY = "test-key-fields"
openai = None
PROMPT = "The capital of France is"


def client():
    return openai.OpenAI(base_url=SERVER.url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)


def raw(path, body):
    """POST `body`; returns (status, decoded JSON or SSE payload list)."""
    status, _, data = SERVER.request("POST", path, body, {"Authorization": f"Bearer {API_KEY}"})
    if body.get("stream") and status == 200:
        return status, [json.loads(f[6:]) for f in data.split(b"\n\n")
                        if f.startswith(b"data: ") and f[6:] != b"[DONE]"]
    return status, json.loads(data)


def completion(**body):
    body = {"model": SERVER.model, "temperature": 0, **body}
    status, j = raw("/v1/completions", body)
    if status != 200:
        raise AssertionError(f"{body!r}: {status} {j!r}")
    return j


def chat(**body):
    body = {"model": SERVER.model, "temperature": 0, **body}
    status, j = raw("/v1/chat/completions", body)
    if status != 200:
        raise AssertionError(f"{body!r}: {status} {j!r}")
    return j


def token_ids(text):
    status, j = raw("/tokenize", {"model": SERVER.model, "prompt": text})
    assert status == 200, j
    return j["tokens"]


def single_token(text):
    ids = token_ids(text)
    assert len(ids) == 1, f"{text!r} is {len(ids)} tokens: {ids}"
    return ids[0]


def streamed(path, body):
    """Streams `body`: (text, logprobs entries merged over the chunks, finish_reason)."""
    status, chunks = raw(path, {"model": SERVER.model, "temperature": 0, **body, "stream": True})
    assert status == 200, chunks
    text, finish = "", None
    lp = {"tokens": [], "token_logprobs": [], "text_offset": [], "content": []}
    for ch in chunks:
        for c in ch["choices"]:
            if "text" in c:
                text += c["text"]
            else:
                text += c["delta"].get("content", "")
            if c.get("logprobs"):
                for k in lp:
                    lp[k] += c["logprobs"].get(k, [])
            finish = c["finish_reason"] or finish
    return text, lp, finish


class Fields(unittest.TestCase):
    def assert_400(self, path, body, param):
        status, j = raw(path, {"model": SERVER.model, **body})
        self.assertEqual(status, 400, j)
        self.assertEqual(j["error"]["param"], param, j)
        return j["error"]["message"]

    def test_logit_bias(self):
        plain = completion(prompt=PROMPT, max_tokens=1, logprobs=5)
        lp = plain["choices"][0]["logprobs"]
        first = lp["tokens"][0]
        ranked = sorted(lp["top_logprobs"][0].items(), key=lambda kv: -kv[1])
        self.assertEqual(ranked[0][0], first)
        runner_up = ranked[1][0]
        banned = completion(prompt=PROMPT, max_tokens=1,
                            logit_bias={str(single_token(first)): -100})
        self.assertEqual(banned["choices"][0]["text"], runner_up)
        forced_id = single_token(" banana")
        forced = completion(prompt=PROMPT, max_tokens=1, logit_bias={str(forced_id): 100})
        self.assertEqual(forced["choices"][0]["text"], " banana")
        # Chat too: banning the greedy first token changes it.
        msgs = [{"role": "user", "content": "What is the capital of France?"}]
        c0 = chat(messages=msgs, max_tokens=1, logprobs=True, top_logprobs=3)
        t0 = c0["choices"][0]["logprobs"]["content"][0]["token"]
        runner = c0["choices"][0]["logprobs"]["content"][0]["top_logprobs"][1]["token"]
        c1 = chat(messages=msgs, max_tokens=1, logit_bias={str(single_token(t0)): -100})
        self.assertEqual(c1["choices"][0]["message"]["content"], runner)
        # Range-checked against the vocabulary, keys must be integers, biases in [-100, 100].
        m = self.assert_400("/v1/completions", {"prompt": "x", "logit_bias": {"999999": 1}},
                            "logit_bias")
        self.assertIn("999999", m)
        self.assertIn("outside the vocabulary", m)
        self.assert_400("/v1/completions", {"prompt": "x", "logit_bias": {"abc": 1}}, "logit_bias")
        self.assert_400("/v1/completions", {"prompt": "x", "logit_bias": {"5": 101}}, "logit_bias")

    def test_echo(self):
        plain = completion(prompt=PROMPT, max_tokens=6)["choices"][0]["text"]
        echoed = completion(prompt=PROMPT, max_tokens=6, echo=True)["choices"][0]["text"]
        self.assertEqual(echoed, PROMPT + plain)
        text, _, _ = streamed("/v1/completions", {"prompt": PROMPT, "max_tokens": 6, "echo": True})
        self.assertEqual(text, PROMPT + plain)
        # Token-id prompts are echoed as their text.
        ids = token_ids(PROMPT)
        by_ids = completion(prompt=ids, max_tokens=6, echo=True)["choices"][0]["text"]
        self.assertEqual(by_ids, PROMPT + plain)
        m = self.assert_400("/v1/completions", {"prompt": "x", "echo": True, "logprobs": 1}, "echo")
        self.assertIn("logprobs", m)
        self.assert_400("/v1/chat/completions",
                        {"messages": [{"role": "user", "content": "hi"}], "echo": True}, "echo")

    def test_best_of(self):
        body = {"prompt": "Once upon a time", "max_tokens": 8, "temperature": 1, "seed": 1234,
                "ignore_eos": True}
        three = completion(**body, n=3, logprobs=0)
        sums = [sum(c["logprobs"]["token_logprobs"]) for c in three["choices"]]
        texts = [c["text"] for c in three["choices"]]
        best = completion(**body, n=1, best_of=3)
        self.assertEqual(len(best["choices"]), 1)
        # Candidate i is seeded like choice i, so best_of=3 drew the same three candidates.
        self.assertEqual(best["choices"][0]["text"], texts[max(range(3), key=lambda i: sums[i])])
        self.assertEqual(best["usage"]["completion_tokens"], 24)  # every candidate counts
        two = completion(**body, n=2, best_of=3, logprobs=0)
        got = [sum(c["logprobs"]["token_logprobs"]) for c in two["choices"]]
        self.assertEqual([round(x, 4) for x in got], [round(x, 4) for x in sorted(sums)[::-1][:2]])
        self.assert_400("/v1/completions", {"prompt": "x", "n": 3, "best_of": 2}, "best_of")
        self.assert_400("/v1/completions", {"prompt": "x", "best_of": 2, "stream": True},
                        "best_of")

    def test_min_tokens(self):
        msgs = [{"role": "user", "content": "Say hi."}]
        plain = chat(messages=msgs, max_tokens=64)
        self.assertEqual(plain["choices"][0]["finish_reason"], "stop")
        k = plain["usage"]["completion_tokens"]
        self.assertLess(k, 50)
        longer = chat(messages=msgs, max_tokens=k + 40, min_tokens=k + 10)
        self.assertGreaterEqual(longer["usage"]["completion_tokens"], k + 10)
        self.assertTrue(longer["choices"][0]["message"]["content"].startswith(
            plain["choices"][0]["message"]["content"]))
        self.assert_400("/v1/completions", {"prompt": "x", "max_tokens": 4, "min_tokens": 5},
                        "min_tokens")

    def test_stop_token_ids_and_include_stop_str(self):
        prompt = "1, 2, 3, 4, 5,"
        plain = completion(prompt=prompt, max_tokens=8)["choices"][0]["text"]
        self.assertTrue(plain.startswith(" 6, 7, 8"), plain)
        seven = single_token("7")
        r = completion(prompt=prompt, max_tokens=8, stop_token_ids=[seven])["choices"][0]
        self.assertEqual((r["text"], r["finish_reason"]), (" 6, ", "stop"))
        r = completion(prompt=prompt, max_tokens=8, stop_token_ids=[seven],
                       include_stop_str_in_output=True)["choices"][0]
        self.assertEqual((r["text"], r["finish_reason"]), (" 6, 7", "stop"))
        r = completion(prompt=prompt, max_tokens=8, stop=[", 7"])["choices"][0]
        self.assertEqual(r["text"], " 6")
        r = completion(prompt=prompt, max_tokens=8, stop=[", 7"],
                       include_stop_str_in_output=True)["choices"][0]
        self.assertEqual(r["text"], " 6, 7")
        self.assert_400("/v1/completions", {"prompt": "x", "stop_token_ids": [10**7]},
                        "stop_token_ids")
        # Through the official client's extra_body.
        r = client().completions.create(model=SERVER.model, prompt=prompt, max_tokens=8,
                                        temperature=0, stop=[", 7"],
                                        extra_body={"include_stop_str_in_output": True})
        self.assertEqual(r.choices[0].text, " 6, 7")

    def test_skip_special_tokens(self):
        msgs = [{"role": "user", "content": "Say hi."}]
        plain = chat(messages=msgs, max_tokens=64)["choices"][0]["message"]["content"]
        kept = chat(messages=msgs, max_tokens=64, include_stop_str_in_output=True,
                    skip_special_tokens=False)["choices"][0]["message"]["content"]
        self.assertEqual(kept, plain + "<|im_end|>")
        skipped = chat(messages=msgs, max_tokens=64,
                       include_stop_str_in_output=True)["choices"][0]["message"]["content"]
        self.assertEqual(skipped, plain)

    def test_truncate_prompt_tokens(self):
        long = "one two three four five six seven eight nine ten eleven twelve"
        r = completion(prompt=long, max_tokens=2, truncate_prompt_tokens=3)
        self.assertEqual(r["usage"]["prompt_tokens"], 3)
        tail = completion(prompt=token_ids(long)[-3:], max_tokens=2)
        self.assertEqual(r["choices"][0]["text"], tail["choices"][0]["text"])
        r = client().chat.completions.create(
            model=SERVER.model, messages=[{"role": "user", "content": long}], max_tokens=2,
            temperature=0, extra_body={"truncate_prompt_tokens": 5})
        self.assertEqual(r.usage.prompt_tokens, 5)
        self.assert_400("/v1/completions", {"prompt": "x", "truncate_prompt_tokens": 0},
                        "truncate_prompt_tokens")

    def test_logprobs_describe_the_text(self):
        cases = [
            ("/v1/completions", {"prompt": "1, 2, 3, 4, 5,", "max_tokens": 8, "stop": [", 7"],
                                 "logprobs": 2}),
            ("/v1/completions", {"prompt": "Héllo wörld, ça va? Réponds:", "max_tokens": 10,
                                 "logprobs": 1}),
            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Say hi."}],
                                      "max_tokens": 64, "logprobs": True, "top_logprobs": 2}),
        ]
        for path, body in cases:
            with self.subTest(path=path, body=body):
                status, j = raw(path, {"model": SERVER.model, "temperature": 0, **body})
                self.assertEqual(status, 200, j)
                c = j["choices"][0]
                s_text, s_lp, s_finish = streamed(path, body)
                self.assertEqual(s_finish, c["finish_reason"])
                if "text" in c:
                    lp = c["logprobs"]
                    self.assertEqual(s_text, c["text"])
                    self.assertEqual(s_lp["tokens"], lp["tokens"])
                    self.assertEqual(s_lp["token_logprobs"], lp["token_logprobs"])
                    self.assertEqual(s_lp["text_offset"], lp["text_offset"])
                    self.assertEqual("".join(lp["tokens"]), c["text"])
                    # Offsets count characters of the returned text.
                    off = 0
                    for tok, o in zip(lp["tokens"], lp["text_offset"]):
                        self.assertEqual(o, off)
                        off += len(tok)
                else:
                    content = c["logprobs"]["content"]
                    self.assertEqual(c["finish_reason"], "stop")
                    self.assertEqual(s_text, c["message"]["content"])
                    self.assertEqual(s_lp["content"], content)
                    self.assertNotIn("<|im_end|>", [t["token"] for t in content])
                    self.assertEqual("".join(t["token"] for t in content),
                                     c["message"]["content"])
                    self.assertTrue(all(math.isfinite(t["logprob"]) for t in content))

    def test_byte_level_tokens_keep_logprobs_well_formed(self):
        # SmolLM2 writes these characters as byte-level tokens (parts of a character), and several
        # of the 20 alternatives are parts too: each is named "bytes:\\xNN..." in tokens and
        # top_logprobs alike (no two alternatives may share a key, as they did when all became
        # U+FFFD), and text_offset of a token that starts inside a character is that character's.
        def token_bytes(name):
            if name.startswith("bytes:"):
                hexes = name[len("bytes:"):].split("\\x")[1:]
                b = bytes(int(h, 16) for h in hexes)
                self.assertEqual(name, "bytes:" + "".join(f"\\x{x:02x}" for x in b))
                with self.assertRaises(UnicodeDecodeError, msg=f"{name} is whole characters"):
                    b.decode("utf-8")
                return b
            self.assertNotIn("\ufffd", name)
            return name.encode()

        for prompt in ("中文：你好，世界。日本語：", "Emoji: 🎉🎉"):
            with self.subTest(prompt=prompt):
                body = {"model": SERVER.model, "prompt": prompt, "max_tokens": 12,
                        "temperature": 0, "logprobs": 20}
                _, _, data = SERVER.request("POST", "/v1/completions", body,
                                            {"Authorization": f"Bearer {API_KEY}"})
                duplicates = []

                def no_duplicates(pairs):
                    keys = [k for k, _ in pairs]
                    if len(set(keys)) != len(keys):
                        duplicates.append(keys)
                    return dict(pairs)

                j = json.loads(data, object_pairs_hook=no_duplicates)
                self.assertEqual(duplicates, [], "an object with duplicate keys")
                c = j["choices"][0]
                lp = c["logprobs"]
                names = lp["tokens"]
                self.assertTrue(any(n.startswith("bytes:") for n in names), names)
                joined, starts = b"", []
                for name in names:
                    starts.append(len(joined))
                    joined += token_bytes(name)
                text = c["text"]
                self.assertEqual(joined, text.encode())
                # The offset of the character a token's first byte belongs to (Python's decoder
                # drops the partial character at the end of the bytes before it).
                expected = [len(joined[:p].decode("utf-8", errors="ignore")) for p in starts]
                self.assertEqual(lp["text_offset"], expected)
                self.assertTrue(all(o < len(text) for o in lp["text_offset"]), lp["text_offset"])
                for name, top in zip(names, lp["top_logprobs"]):
                    self.assertEqual(len(top), 20, top)
                    self.assertIn(name, top)  # greedy: the token is its own top alternative
                    for alt in top:
                        token_bytes(alt)
                _, s_lp, _ = streamed("/v1/completions", {"prompt": prompt, "max_tokens": 12,
                                                          "logprobs": 20})
                self.assertEqual(s_lp["tokens"], names)
                self.assertEqual(s_lp["text_offset"], lp["text_offset"])
                # Chat names them the same, with the true bytes in `bytes`.
                chat_j = chat(messages=[{"role": "user", "content": prompt}], max_tokens=12,
                              logprobs=True, top_logprobs=5)
                for t in chat_j["choices"][0]["logprobs"]["content"]:
                    self.assertEqual(token_bytes(t["token"]), bytes(t["bytes"]))
                    for alt in t["top_logprobs"]:
                        self.assertEqual(token_bytes(alt["token"]), bytes(alt["bytes"]))


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
