"""Integration test of `plinth serve`'s tokenizer and information endpoints, over raw HTTP:
POST /tokenize and POST /detokenize in vLLM's and llama.cpp's shapes (counts, round trips, the
chat form), GET /v1/models/{id} (and its 404), GET /version, and the 400s of bad input.

  python3 tools/server_tests/test_tokenize.py --plinth build/plinth --manifest manifests/cpu.json
"""
import json
import os
import re
import sys
import unittest
import urllib.parse

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, parse_args, run_tests  # noqa: E402

ARGS = None
SERVER = None
API_KEY = "test-key-456"
TEXTS = ["Hello, world!", "The capital of France is Paris.", "  leading and trailing  ",
         "line one\nline two\n\ttabbed", "x", "1234567890 + 42 = ?", "a" * 300]


def raw(method, path, body=None, headers=None):
    """One raw HTTP request; returns (status, body bytes)."""
    status, _, data = SERVER.request(method, path, body,
                                     {"Authorization": f"Bearer {API_KEY}", **(headers or {})})
    return status, data


def post(path, body):
    """POST expecting 200; returns the decoded JSON."""
    status, data = raw("POST", path, body)
    if status != 200:
        raise AssertionError(f"POST {path} {body!r}: {status} {data!r}")
    return json.loads(data)


class Endpoints(unittest.TestCase):
    def test_served_name_is_the_file_stem(self):
        with open(ARGS.manifest) as f:
            model = json.load(f)["model"]
        stem = os.path.splitext(os.path.basename(model))[0]
        self.assertEqual(SERVER.model, stem)
        self.assertNotIn(" ", SERVER.model)
        status, data = raw("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual([m["id"] for m in json.loads(data)["data"]], [SERVER.model])

    def test_served_model_name_option(self):
        global SERVER
        main_server = SERVER
        with PlinthServer(ARGS.plinth, ARGS.manifest, "--api-key", API_KEY,
                          "--served-model-name", "org/my-model") as other:
            try:
                SERVER = other
                self.assertEqual(other.model, "org/my-model")  # the banner names it
                status, data = raw("GET", "/v1/models/org%2Fmy-model")
                self.assertEqual((status, json.loads(data)["id"]), (200, "org/my-model"))
                status, data = raw("GET", "/v1/models/org/my-model")
                self.assertEqual(status, 200, data)
                status, _ = raw("GET", "/v1/models/" + main_server.model)
                self.assertEqual(status, 404)
                post("/tokenize", {"model": "org/my-model", "prompt": "x"})
            finally:
                SERVER = main_server
            self.assertEqual(other.stop(), 0)

    def test_model_by_id(self):
        status, data = raw("GET", "/v1/models")
        listed = json.loads(data)["data"][0]
        status, data = raw("GET", "/v1/models/" + urllib.parse.quote(SERVER.model, safe=""))
        self.assertEqual(status, 200, data)
        one = json.loads(data)
        self.assertEqual(one["object"], "model")
        for key in ("id", "owned_by", "root", "max_model_len"):
            self.assertEqual(one[key], listed[key], key)
        self.assertIsInstance(one["created"], int)

    def test_model_by_id_unknown(self):
        status, data = raw("GET", "/v1/models/gpt-9")
        self.assertEqual(status, 404, data)
        err = json.loads(data)["error"]
        self.assertIn("gpt-9", err["message"])
        self.assertEqual(err["type"], "not_found_error")
        self.assertEqual(err["param"], "model")
        self.assertEqual(err["code"], "model_not_found")
        status, _ = raw("GET", "/v1/models/" + SERVER.model, headers={"Authorization": "x"})
        self.assertEqual(status, 401)
        status, _ = raw("POST", "/v1/models/" + SERVER.model, body={})
        self.assertEqual(status, 405)

    def test_version(self):
        status, data = raw("GET", "/version")
        self.assertEqual(status, 200, data)
        v = json.loads(data)
        self.assertRegex(v["version"], r"^\d+\.\d+\.\d+")
        self.assertEqual(v["abi"], "1.4")

    def test_tokenize_prompt_counts_like_a_completion(self):
        r = post("/tokenize", {"prompt": "The capital of France is"})
        self.assertEqual(r["count"], len(r["tokens"]))
        self.assertTrue(all(isinstance(t, int) for t in r["tokens"]))
        status, data = raw("GET", "/v1/models")
        self.assertEqual(r["max_model_len"], json.loads(data)["data"][0]["max_model_len"])
        c = post("/v1/completions", {"prompt": "The capital of France is", "max_tokens": 1,
                                     "temperature": 0})
        self.assertEqual(r["count"], c["usage"]["prompt_tokens"])
        # the same body with the model named
        self.assertEqual(post("/tokenize", {"model": SERVER.model,
                                            "prompt": "The capital of France is"}), r)

    def test_round_trip_vllm_shape(self):
        for text in TEXTS:
            t = post("/tokenize", {"prompt": text, "add_special_tokens": False})
            self.assertEqual(t["count"], len(t["tokens"]))
            d = post("/detokenize", {"tokens": t["tokens"]})
            self.assertEqual(d["prompt"], text)
            self.assertEqual(d["content"], text)

    def test_round_trip_llama_cpp_shape(self):
        for text in TEXTS:
            t = post("/tokenize", {"content": text})  # llama.cpp: no special tokens by default
            d = post("/detokenize", {"tokens": t["tokens"]})
            self.assertEqual(d["content"], text)
            self.assertEqual(t["tokens"],
                             post("/tokenize", {"prompt": text,
                                                "add_special_tokens": False})["tokens"])

    def test_empty(self):
        t = post("/tokenize", {"prompt": "", "add_special_tokens": False})
        self.assertEqual((t["tokens"], t["count"]), ([], 0))
        self.assertEqual(post("/detokenize", {"tokens": []}), {"prompt": "", "content": ""})

    def test_messages_count_like_a_chat_completion(self):
        msgs = [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Name a colour."}]
        t = post("/tokenize", {"messages": msgs})
        self.assertEqual(t["count"], len(t["tokens"]))
        c = post("/v1/chat/completions", {"messages": msgs, "max_tokens": 1, "temperature": 0})
        self.assertEqual(t["count"], c["usage"]["prompt_tokens"])
        without = post("/tokenize", {"messages": msgs, "add_generation_prompt": False})
        self.assertLess(without["count"], t["count"])
        self.assertEqual(t["tokens"][:without["count"]], without["tokens"])
        parts = [{"role": "user", "content": [{"type": "text", "text": "Name a colour."}]}]
        self.assertEqual(post("/tokenize", {"messages": parts})["tokens"],
                         post("/tokenize", {"messages": msgs[1:]})["tokens"])

    def assert_400(self, path, body, param):
        status, data = raw("POST", path, body)
        self.assertEqual(status, 400, f"{path} {body!r}: {data!r}")
        err = json.loads(data)["error"]
        self.assertEqual(err["type"], "invalid_request_error")
        self.assertEqual(err["param"], param, f"{path} {body!r}: {err}")
        self.assertTrue(err["message"])

    def test_bad_requests(self):
        self.assert_400("/tokenize", "{not json", None)
        self.assert_400("/tokenize", [1, 2], None)
        self.assert_400("/tokenize", {}, "prompt")
        self.assert_400("/tokenize", {"prompt": 5}, "prompt")
        self.assert_400("/tokenize", {"prompt": ["a"]}, "prompt")
        self.assert_400("/tokenize", {"content": None}, "prompt")
        self.assert_400("/tokenize", {"content": 1.5}, "content")
        self.assert_400("/tokenize", {"prompt": "x", "add_special_tokens": "yes"},
                        "add_special_tokens")
        self.assert_400("/tokenize", {"content": "x", "add_special": 1}, "add_special")
        self.assert_400("/tokenize", {"prompt": "x", "model": 7}, "model")
        self.assert_400("/tokenize", {"messages": "hi"}, "messages")
        self.assert_400("/tokenize", {"messages": []}, "messages")
        self.assert_400("/tokenize", {"messages": [{"content": "hi"}]}, "messages[0].role")
        self.assert_400("/tokenize", {"messages": [{"role": "user", "content": 3}]},
                        "messages[0].content")
        self.assert_400("/tokenize", {"messages": [{"role": "user", "content": "x"}],
                                      "add_generation_prompt": "no"}, "add_generation_prompt")
        self.assert_400("/tokenize", {"messages": [{"role": "wizard", "content": "x"}]},
                        "messages")
        self.assert_400("/detokenize", {}, "tokens")
        self.assert_400("/detokenize", {"tokens": "1 2 3"}, "tokens")
        self.assert_400("/detokenize", {"tokens": [1, "2"]}, "tokens")
        self.assert_400("/detokenize", {"tokens": [1.5]}, "tokens")
        self.assert_400("/detokenize", {"tokens": [-1]}, "tokens")
        self.assert_400("/detokenize", {"tokens": [10**9]}, "tokens")
        self.assert_400("/detokenize", {"tokens": [2**64 - 1]}, "tokens")
        self.assert_400("/detokenize", {"tokens": [[1]]}, "tokens")
        status, data = raw("POST", "/tokenize", {"prompt": "x", "model": "gpt-9"})
        self.assertEqual(status, 404, data)
        self.assertEqual(json.loads(data)["error"]["param"], "model")
        status, _ = raw("GET", "/tokenize")
        self.assertEqual(status, 405)
        # the out-of-vocabulary message names the id and the vocabulary size
        status, data = raw("POST", "/detokenize", {"tokens": [1, 10**9]})
        self.assertIn("tokens[1]", json.loads(data)["error"]["message"])
        status, _ = raw("GET", "/health")
        self.assertEqual(status, 200)


def main():
    global ARGS, SERVER
    ARGS, rest = parse_args()
    with PlinthServer(ARGS.plinth, ARGS.manifest, "--api-key", API_KEY) as server:
        SERVER = server
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
