"""`plinth serve`'s OpenAI Responses API (POST /v1/responses, the stateless subset) through the
official `openai` SDK's responses.create and responses.stream, checked against the server's own
/v1/chat/completions (the same engine path: the same text at temperature 0): a string input,
message items with instructions, status completed / incomplete (max_output_tokens), the event
stream (names, sequence numbers, deltas == the non-streamed text), the stream helper's final
response, what is refused with a 400 naming the field (store, previous_response_id, text.format,
tools without a grammar plugin, images, oversized input), and the per-endpoint metrics.

  python3 tools/server_tests/test_responses_api.py --plinth build/plinth --manifest manifests/cpu.json

Exit 77 (ctest SKIP_RETURN_CODE) when `openai` can neither be imported nor pip-installed."""
import json
import random
import sys
import time
import unittest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_openai, parse_args, run_tests, skip  # noqa: E402

ARGS = None
SERVER = None
API_KEY = "test-key-responses"
openai = None
ASK = "Name three colors of the rainbow."


def client():
    return openai.OpenAI(base_url=SERVER.url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)


def raw(method, path, body=None):
    """One raw HTTP request with the API key; returns (status, body bytes)."""
    status, _, data = SERVER.request(method, path, body, {"Authorization": f"Bearer {API_KEY}"})
    return status, data


def chat(messages, max_tokens):
    r = client().chat.completions.create(model=SERVER.model, messages=messages,
                                         max_tokens=max_tokens, temperature=0)
    return r.choices[0].message.content, r


class Responses(unittest.TestCase):
    def test_create_string_input(self):
        r = client().responses.create(model=SERVER.model, input=ASK, max_output_tokens=24,
                                      temperature=0)
        text, c = chat([{"role": "user", "content": ASK}], 24)
        self.assertEqual(r.object, "response")
        self.assertTrue(r.id.startswith("resp_"))
        self.assertEqual(r.output_text, text)
        self.assertEqual(r.output[0].type, "message")
        self.assertEqual(r.output[0].role, "assistant")
        self.assertEqual(r.output[0].content[0].type, "output_text")
        self.assertEqual(r.usage.input_tokens, c.usage.prompt_tokens)
        self.assertEqual(r.usage.output_tokens, c.usage.completion_tokens)
        self.assertEqual(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens)
        self.assertFalse(r.store)
        if c.choices[0].finish_reason == "length":
            self.assertEqual(r.status, "incomplete")
            self.assertEqual(r.incomplete_details.reason, "max_output_tokens")
        else:
            self.assertEqual(r.status, "completed")

    def test_completed(self):
        r = client().responses.create(model=SERVER.model, input="Say hi.", max_output_tokens=200,
                                      temperature=0)
        self.assertEqual(r.status, "completed", r)
        self.assertIsNone(r.incomplete_details)
        self.assertLess(r.usage.output_tokens, 200)
        self.assertEqual(r.output[0].status, "completed")

    def test_items_and_instructions(self):
        items = [{"role": "user", "content": ASK},
                 {"type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": "Red, green and blue."}]},
                 {"role": "user", "content": [{"type": "input_text", "text": "And two more?"}]}]
        r = client().responses.create(model=SERVER.model, input=items, max_output_tokens=16,
                                      temperature=0, instructions="Answer briefly.")
        text, _ = chat([{"role": "system", "content": "Answer briefly."},
                        {"role": "user", "content": ASK},
                        {"role": "assistant", "content": "Red, green and blue."},
                        {"role": "user", "content": "And two more?"}], 16)
        self.assertEqual(r.output_text, text)
        self.assertEqual(r.instructions, "Answer briefly.")
        # A developer message is a system message to the chat template.
        r2 = client().responses.create(
            model=SERVER.model, max_output_tokens=16, temperature=0,
            input=[{"role": "developer", "content": "Answer briefly."}] + items)
        self.assertEqual(r2.output_text, text)

    def test_stream_events(self):
        full = client().responses.create(model=SERVER.model, input=ASK, max_output_tokens=20,
                                         temperature=0)
        events = list(client().responses.create(model=SERVER.model, input=ASK,
                                                max_output_tokens=20, temperature=0,
                                                stream=True))
        types = [e.type for e in events]
        self.assertEqual(types[:4], ["response.created", "response.in_progress",
                                     "response.output_item.added", "response.content_part.added"])
        last = "response.incomplete" if full.status == "incomplete" else "response.completed"
        self.assertEqual(types[-4:], ["response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", last])
        self.assertEqual([e.sequence_number for e in events], list(range(len(events))))
        deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
        self.assertGreater(len(deltas), 1)
        self.assertEqual("".join(deltas), full.output_text)
        self.assertEqual(events[-4].text, full.output_text)
        self.assertEqual(events[-1].response.output_text, full.output_text)
        self.assertEqual(events[-1].response.usage.output_tokens, full.usage.output_tokens)

    def test_stream_helper(self):
        full = client().responses.create(model=SERVER.model, input="Say hi.",
                                         max_output_tokens=200, temperature=0)
        self.assertEqual(full.status, "completed")
        with client().responses.stream(model=SERVER.model, input="Say hi.",
                                       max_output_tokens=200, temperature=0) as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
        self.assertEqual("".join(deltas), full.output_text)
        self.assertEqual(final.output_text, full.output_text)
        self.assertEqual(final.status, "completed")
        self.assertEqual(final.usage.output_tokens, full.usage.output_tokens)

    def test_refused(self):
        c = client()
        cases = [
            (dict(store=True), "store"),
            (dict(previous_response_id="resp_123"), "previous_response_id"),
            (dict(text={"format": {"type": "json_schema", "name": "x",
                                   "schema": {"type": "object"}}}), "text.format"),
            (dict(tools=[{"type": "function", "name": "f", "parameters": {"type": "object"}}]),
             "tools"),
            (dict(input=[{"role": "user", "content": [
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]),
             "input[0].content[0].type"),
            (dict(input=[{"type": "function_call_output", "call_id": "c", "output": "x"}]),
             "input"),  # a result answering no call
            (dict(input=[{"type": "reasoning", "id": "r", "summary": []}]), "input[0].type"),
            (dict(input=[]), "input"),
            (dict(temperature=3), "temperature"),
            (dict(max_output_tokens=10 ** 7), "max_output_tokens"),
            (dict(input="word " * 20000), "input"),
            (dict(stream=True, stream_options={"bogus": True}), "stream_options.bogus"),
        ]
        for kw, param in cases:
            kw.setdefault("input", ASK)
            with self.subTest(param=param):
                with self.assertRaises(openai.BadRequestError) as cm:
                    r = c.responses.create(model=SERVER.model, **kw)
                    if kw.get("stream"):
                        list(r)
                self.assertEqual(cm.exception.status_code, 400)
                self.assertEqual(cm.exception.body["param"], param, cm.exception.body)
                self.assertEqual(cm.exception.body["type"], "invalid_request_error")
        self.assertIn("max_output_tokens",
                      json.loads(raw("POST", "/v1/responses",
                                     {"input": ASK, "max_output_tokens": 10 ** 7})[1])
                      ["error"]["message"])
        status, data = raw("POST", "/v1/responses", {"max_output_tokens": 4})
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(data)["error"]["param"], "input")
        # The server still serves.
        r = c.responses.create(model=SERVER.model, input=ASK, max_output_tokens=2)
        self.assertEqual(r.usage.output_tokens, 2)

    def test_random_bodies(self):
        # Fields of the API set to values of every type, 200 bodies (fixed seed): never a 5xx,
        # always OpenAI's error shape, and the server serves on.
        rng = random.Random(29)
        values = [None, True, False, 0, -1, 1.5, 10 ** 30, "", "x", "none", "auto", "text", [],
                  {}, [1], ["x"], {"type": "text"}, {"format": {"type": 3}}, {"format": "x"},
                  {"effort": None}, [{"role": "user", "content": 5}], [None],
                  {"include_obfuscation": 1}]
        keys = ["model", "input", "instructions", "max_output_tokens", "temperature", "top_p",
                "stream", "stream_options", "store", "previous_response_id", "text", "tools",
                "tool_choice", "reasoning", "include", "top_logprobs", "truncation", "metadata",
                "user", "background"]
        for _ in range(200):
            body = {"input": ASK, "max_output_tokens": 2}
            for k in rng.sample(keys, 3):
                body[k] = rng.choice(values)
            status, data = raw("POST", "/v1/responses", body)
            self.assertLess(status, 500, (body, data))
            if status != 200:
                self.assertEqual(set(json.loads(data)["error"]),
                                 {"message", "type", "param", "code"}, data)
        r = client().responses.create(model=SERVER.model, input=ASK, max_output_tokens=2)
        self.assertEqual(r.usage.output_tokens, 2)

    def test_metrics_by_endpoint(self):
        key = 'plinth_http_requests_total{route="/v1/responses",status="200"}'
        before = SERVER.metrics().get(key, 0)
        client().responses.create(model=SERVER.model, input=ASK, max_output_tokens=2)
        deadline = time.monotonic() + 10
        while SERVER.metrics().get(key, 0) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(SERVER.metrics().get(key, 0), before + 1)


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
