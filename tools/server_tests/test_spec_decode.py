"""`plinth serve` with speculative decoding (manifests/cpu_spec_ngram.json), through the official
`openai` package and raw HTTP:
  - at temperature 0 a request that copies its input answers the same text with speculation and
    with `"speculative": false` (plinth's opt-out field), and speculation accepted draft tokens
    (plinth_spec_decode_num_accepted_tokens_total grows) while the opted-out request drafted none;
  - streamed deltas concatenate to the non-streamed text (accepted runs stream as whole UTF-8
    characters, stop strings cut inside a run);
  - a wrong-typed `speculative` is a 422 naming the field;
  - the acceptance-rate and mean-acceptance-length gauges are exported;
  - once idle, no KV block is in use (rejected drafts' slots were given back).

  python3 tools/server_tests/test_spec_decode.py --plinth build/plinth \
      --manifest manifests/cpu_spec_ngram.json

Exit 77 (ctest SKIP_RETURN_CODE) when `openai` can neither be imported nor pip-installed."""
import sys
import unittest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_openai, parse_args, run_tests, skip  # noqa: E402
from test_openai_api import raw  # noqa: E402
import test_openai_api  # noqa: E402

SERVER = None
openai = None
CODE = ("def total_price(items, tax_rate):\n    subtotal = sum(item.price for item in items)\n"
        "    tax = subtotal * tax_rate\n    return subtotal + tax\n")
ASK = "Rewrite this function with type hints, keeping the body identical:\n\n" + CODE


def client():
    return openai.OpenAI(base_url=SERVER.url + "/v1", api_key="unused", max_retries=0,
                         timeout=120)


def chat(speculative=None, stream=False, stop=None, max_tokens=48):
    extra = {"speculative": speculative} if speculative is not None else None
    kwargs = dict(model=SERVER.model, temperature=0, max_tokens=max_tokens, extra_body=extra,
                  messages=[{"role": "user", "content": ASK}], stream=stream)
    if stop is not None:
        kwargs["stop"] = stop
    r = client().chat.completions.create(**kwargs)
    if not stream:
        return r.choices[0].message.content
    return "".join(c.choices[0].delta.content or "" for c in r if c.choices)


def metric(name):
    return SERVER.metrics().get(name, 0.0)


class SpecDecodeServer(unittest.TestCase):
    def test_same_text_with_and_without_speculation(self):
        before_drafts = metric("plinth_spec_decode_num_draft_tokens_total")
        off = chat(speculative=False)
        self.assertEqual(metric("plinth_spec_decode_num_draft_tokens_total"), before_drafts,
                         "an opted-out request drafted")
        before = metric("plinth_spec_decode_num_accepted_tokens_total")
        on = chat()
        self.assertEqual(on, off)
        self.assertGreater(metric("plinth_spec_decode_num_accepted_tokens_total") - before, 0,
                           "copying the input should accept n-gram drafts")

    def test_stream_equals_whole(self):
        self.assertEqual(chat(stream=True), chat())

    def test_stop_string_inside_an_accepted_run(self):
        whole = chat(speculative=False)
        self.assertIn("item.price", whole)
        cut = chat(stop=["item.price"])
        self.assertEqual(cut, whole[:whole.index("item.price")])
        self.assertEqual(chat(stop=["item.price"], speculative=False), cut)

    def test_wrong_type_is_422(self):
        status, _, data = raw("POST", "/v1/completions",
                              {"model": SERVER.model, "prompt": "x", "speculative": "yes"})
        self.assertEqual(status, 422, data)
        self.assertIn(b"speculative", data)

    def test_gauges_and_idle_kv(self):
        chat()
        m = SERVER.metrics()
        self.assertGreater(m["plinth_spec_decode_acceptance_rate"], 0)
        self.assertGreater(m["plinth_spec_decode_mean_acceptance_length"], 1)
        self.assertGreater(m["plinth_spec_decode_num_accepted_tokens_pos0_total"], 0)
        self.assertEqual(m["plinth_kv_cache_used_blocks"], 0)


def main():
    global SERVER, openai
    args, rest = parse_args()
    openai = ensure_openai()
    if openai is None:
        return skip("openai")
    with PlinthServer(args.plinth, args.manifest) as server:
        SERVER = server
        test_openai_api.SERVER = server
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
