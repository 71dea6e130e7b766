"""`plinth serve` with the grammar plugin (manifests/cpu_structured.json): tool calling on
/v1/chat/completions through the official `openai` client, against the real model (SmolLM2, whose
ChatML template defines no tools: the grammar-forced JSON envelope):
  - tool_choice required, a named function and auto, greedy and seeded: message.tool_calls with
    "call_..." ids, type function, a known name, arguments that parse (json) and validate against
    the function's parameters schema (Python `jsonschema`), content None, finish_reason
    "tool_calls"; parallel_tool_calls false gives one call;
  - streamed: delta.tool_calls fragments (index; id, type and name once per index) whose
    arguments concatenate to the non-streamed arguments at temperature 0;
  - a tool result fed back (assistant tool_calls + a tool message) is accepted and answered;
  - tool_choice none answers as if no tools were given (same text at temperature 0);
  - bad input is a 400 / 422 naming the field (and the JSON pointer of a refused keyword), and
    the server serves other requests as before, alone and beside tool requests;
  - /v1/messages through the `anthropic` SDK (tool_use blocks, tool_choice any / tool / auto,
    streamed == created, a tool_result fed back, count_tokens counting tools) and /v1/responses
    through the openai SDK (function_call items, streamed == created, function_call_output);
  - the same model with `--chat-template qwen2.5` (a template that defines tool calling): calls
    as <tool_call> blocks forced from the marker on (required, named), streamed == whole, a tool
    result in Qwen2.5's history;
  - the same model with Llama 3.1's real template (tests/fixtures/chat_templates/llama3.1.jinja):
    one {"name", "parameters"} call (required, named, auto), streamed == whole, a tool result
    fed back, two calls in one history turn and response_format with auto refused by name;
  - the same model with Mistral Nemo's real template (tests/fixtures/chat_templates/
    mistral-nemo.jinja): the prompt ends with [TOOL_CALLS], the reply the list of calls (required,
    named, parallel), streamed == whole, history with call_ ids, tool_choice auto refused;
  - response_format beside tools (envelope and Hermes): under auto the calls or content that
    validates against the schema, streamed == whole; with none only the schema; with required
    the calls.

  python3 tools/server_tests/test_tool_calling.py --plinth build/plinth \
      --manifest manifests/cpu_structured.json

Exit 77 (ctest SKIP_RETURN_CODE) when `openai` can neither be imported nor pip-installed."""
import argparse
import concurrent.futures
import json
import pathlib
import sys
import unittest

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from plinth_server import PlinthServer, ensure_openai, ensure_package, run_tests  # noqa: E402
from test_openai_api import raw  # noqa: E402
import test_openai_api  # noqa: E402

SERVER = None
openai = None
PLINTH = None
MANIFEST = None

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 32},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TIME = {
    "type": "object",
    "properties": {"timezone": {"type": "string", "maxLength": 32}},
    "required": ["timezone"],
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather",
                                      "description": "The current weather in a city",
                                      "parameters": WEATHER, "strict": True}},
    {"type": "function", "function": {"name": "get_time",
                                      "description": "The current time in a timezone",
                                      "parameters": TIME}},
]
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}
ASK = [{"role": "user", "content": "What is the weather like in Paris today?"}]


def client():
    return openai.OpenAI(base_url=SERVER.url + "/v1", api_key="unused", max_retries=0,
                         timeout=300)


def post(body, path="/v1/chat/completions"):
    status, _, data = raw("POST", path, body)
    return status, json.loads(data)


def create(**kw):
    # One call per reply unless a test asks for more: given the choice, a 135M model repeats its
    # call until max_tokens (test_parallel_calls).
    args = dict(model=SERVER.model, messages=ASK, tools=TOOLS, max_tokens=120, temperature=0,
                parallel_tool_calls=False)
    args.update(kw)
    return client().chat.completions.create(**args)


def streamed_calls(**kw):
    """The calls of a streamed reply, gathered as a client does: {index: [id, type, name, args]}
    (id, type and name must come once per index), the content, and the finish_reason."""
    calls, content, finish = {}, None, None
    for chunk in create(stream=True, **kw):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        d = choice.delta
        if d.content:
            content = (content or "") + d.content
        for tc in d.tool_calls or []:
            entry = calls.setdefault(tc.index, [None, None, None, ""])
            if tc.id is not None:
                assert entry[0] is None, f"id sent twice for call {tc.index}"
                entry[0] = tc.id
            if tc.type is not None:
                entry[1] = tc.type
            if tc.function is not None and tc.function.name is not None:
                assert entry[2] is None, f"name sent twice for call {tc.index}"
                entry[2] = tc.function.name
            if tc.function is not None and tc.function.arguments:
                entry[3] += tc.function.arguments
        if choice.finish_reason:
            finish = choice.finish_reason
    return calls, content, finish


CITY = {"type": "object",
        "properties": {"city": {"type": "string", "maxLength": 20},
                       "country": {"type": "string", "maxLength": 20}},
        "required": ["city", "country"]}
CITY_FORMAT = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY,
                                                      "strict": True}}


def gather_stream(stream):
    """A streamed reply as a client gathers it: (content, [[name, arguments]], finish_reason)."""
    calls, content, finish = {}, None, None
    for chunk in stream:
        if not chunk.choices:
            continue
        d = chunk.choices[0].delta
        if d.content:
            content = (content or "") + d.content
        for tc in d.tool_calls or []:
            entry = calls.setdefault(tc.index, ["", ""])
            if tc.function and tc.function.name:
                entry[0] += tc.function.name
            if tc.function and tc.function.arguments:
                entry[1] += tc.function.arguments
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    return content, [calls[i] for i in sorted(calls)], finish


class ResponseFormatBesideTools:
    """response_format beside tools, as OpenAI answers it: under tool_choice auto the reply is
    tool calls or content that follows the schema; with tool_choice none only the schema; with
    required the calls. Mixed into each format's test class (self.create: temperature 0)."""

    def check_reply(self, choice):
        import jsonschema
        if choice.finish_reason == "length":  # sampled, cut by max_tokens: nothing to validate
            return
        if choice.message.tool_calls:
            self.assertEqual(choice.finish_reason, "tool_calls", choice)
            for call in choice.message.tool_calls:
                jsonschema.validate(json.loads(call.function.arguments),
                                    SCHEMAS[call.function.name])
        else:
            jsonschema.validate(json.loads(choice.message.content),
                                dict(CITY, additionalProperties=False))

    def test_response_format_beside_tools(self):
        import jsonschema
        ask = [{"role": "user", "content": "Which city is the Eiffel Tower in? Answer in JSON."}]
        kinds = []
        for seed in range(4):
            r = self.create(messages=ask, tool_choice="auto", response_format=CITY_FORMAT,
                            max_tokens=120, temperature=1.0, seed=seed).choices[0]
            self.check_reply(r)
            kinds.append("length" if r.finish_reason == "length"
                         else "calls" if r.message.tool_calls else "content")
        whole = self.create(messages=ask, tool_choice="auto", response_format=CITY_FORMAT,
                            max_tokens=120).choices[0]
        self.assertNotEqual(whole.finish_reason, "length", whole)
        self.check_reply(whole)
        content, calls, finish = gather_stream(self.create(
            messages=ask, tool_choice="auto", response_format=CITY_FORMAT, max_tokens=120,
            stream=True))
        self.assertEqual(content, whole.message.content)
        self.assertEqual(calls, [[c.function.name, c.function.arguments]
                                 for c in whole.message.tool_calls or []])
        self.assertEqual(finish, whole.finish_reason)
        # tool_choice none: only the schema
        none = self.create(messages=ask, tool_choice="none", response_format=CITY_FORMAT,
                           max_tokens=80).choices[0]
        self.assertFalse(none.message.tool_calls)
        jsonschema.validate(json.loads(none.message.content), CITY)
        # required: the calls (the schema has nothing left to constrain)
        req = self.create(tool_choice="required", response_format=CITY_FORMAT).choices[0]
        self.assertEqual(req.finish_reason, "tool_calls", req)
        self.assertTrue(req.message.tool_calls)
        print(f"  {type(self).__name__}: auto + response_format, seeds 0-3 at temperature 1: "
              f"{kinds}; greedy: {'calls' if whole.message.tool_calls else 'content'}",
              file=sys.stderr)


class ToolCalling(unittest.TestCase, ResponseFormatBesideTools):
    def create(self, **kw):
        return create(**kw)

    def check_calls(self, message, finish_reason, names=None, max_calls=None):
        import jsonschema
        self.assertEqual(finish_reason, "tool_calls", message)
        self.assertIsNone(message.content)
        self.assertTrue(message.tool_calls, message)
        if max_calls is not None:
            self.assertLessEqual(len(message.tool_calls), max_calls)
        for call in message.tool_calls:
            self.assertTrue(call.id.startswith("call_"), call.id)
            self.assertEqual(call.type, "function")
            self.assertIn(call.function.name, names or SCHEMAS)
            args = json.loads(call.function.arguments)
            jsonschema.validate(args, SCHEMAS[call.function.name])
        self.assertEqual(len({c.id for c in message.tool_calls}), len(message.tool_calls))

    def test_required_greedy_and_seeded(self):
        for extra in ({}, {"temperature": 1.0, "seed": 7}, {"temperature": 0.8, "seed": 3}):
            r = create(tool_choice="required", **extra)
            self.check_calls(r.choices[0].message, r.choices[0].finish_reason)
        a = create(tool_choice="required", temperature=1.0, seed=5).choices[0].message
        b = create(tool_choice="required", temperature=1.0, seed=5).choices[0].message
        self.assertEqual([(c.function.name, c.function.arguments) for c in a.tool_calls],
                         [(c.function.name, c.function.arguments) for c in b.tool_calls])

    def test_named_function(self):
        for name in ("get_time", "get_weather"):
            r = create(tool_choice={"type": "function", "function": {"name": name}})
            msg = r.choices[0].message
            self.check_calls(msg, r.choices[0].finish_reason, names=[name], max_calls=1)
            self.assertEqual(len(msg.tool_calls), 1)

    def test_parallel_tool_calls_false_gives_one_call(self):
        r = create(tool_choice="required", parallel_tool_calls=False)
        self.check_calls(r.choices[0].message, r.choices[0].finish_reason, max_calls=1)

    def test_parallel_calls(self):
        # Several calls allowed: each complete call validates; max_tokens may cut the last one.
        import jsonschema
        r = create(tool_choice="required", parallel_tool_calls=True, max_tokens=60)
        c = r.choices[0]
        self.assertIn(c.finish_reason, ("tool_calls", "length"))
        calls = c.message.tool_calls
        self.assertGreaterEqual(len(calls), 1)
        complete = calls if c.finish_reason == "tool_calls" else calls[:-1]
        for call in complete:
            jsonschema.validate(json.loads(call.function.arguments),
                                SCHEMAS[call.function.name])
        streamed, _, finish = streamed_calls(tool_choice="required", parallel_tool_calls=True,
                                             max_tokens=60)
        self.assertEqual(finish, c.finish_reason)
        self.assertEqual([(v[2], v[3]) for _, v in sorted(streamed.items())],
                         [(x.function.name, x.function.arguments) for x in calls])

    def test_auto_is_a_call_or_a_reply(self):
        kinds = set()
        for messages in (ASK, [{"role": "user", "content": "Say hello to me."}]):
            r = create(messages=messages, tool_choice="auto")
            c = r.choices[0]
            if c.message.tool_calls:
                self.check_calls(c.message, c.finish_reason)
                kinds.add("call")
            else:
                self.assertIsInstance(c.message.content, str)
                self.assertEqual(c.finish_reason, "stop")
                kinds.add("text")
        self.assertTrue(kinds)

    def test_streamed_fragments_concatenate_to_the_arguments(self):
        for kw in ({"tool_choice": "required"},
                   {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
                   {"tool_choice": "auto"}):
            whole = create(**kw).choices[0]
            calls, content, finish = streamed_calls(**kw)
            self.assertEqual(finish, whole.finish_reason, kw)
            self.assertEqual(content, whole.message.content, kw)
            expected = whole.message.tool_calls or []
            self.assertEqual(sorted(calls), list(range(len(expected))), kw)
            for i, call in enumerate(expected):
                cid, ctype, name, args = calls[i]
                self.assertTrue(cid.startswith("call_"), cid)
                self.assertEqual((ctype, name, args),
                                 ("function", call.function.name, call.function.arguments), kw)

    def test_tool_result_fed_back(self):
        first = create(tool_choice={"type": "function", "function": {"name": "get_weather"}})
        call = first.choices[0].message.tool_calls[0]
        history = ASK + [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": call.id, "type": "function",
                             "function": {"name": call.function.name,
                                          "arguments": call.function.arguments}}]},
            {"role": "tool", "tool_call_id": call.id,
             "content": json.dumps({"temperature": 21, "sky": "sunny"})}]
        for choice in ("auto", "none"):
            r = create(messages=history, tool_choice=choice, max_tokens=60)
            c = r.choices[0]
            if c.message.tool_calls:
                self.check_calls(c.message, c.finish_reason)
            else:
                self.assertIsInstance(c.message.content, str)
                self.assertTrue(c.message.content)
        # the history changes the prompt: usage counts the tool turns
        plain = create(tool_choice="none", max_tokens=1).usage.prompt_tokens
        fed = create(messages=history, tool_choice="none", max_tokens=1).usage.prompt_tokens
        self.assertGreater(fed, plain + 10)

    def test_tool_choice_none_answers_as_without_tools(self):
        body = {"messages": ASK, "max_tokens": 24, "temperature": 0}
        plain = post(body)[1]["choices"][0]["message"]["content"]
        status, none = post(dict(body, tools=TOOLS, tool_choice="none"))
        self.assertEqual(status, 200, none)
        self.assertEqual(none["choices"][0]["message"]["content"], plain)
        self.assertNotIn("tool_calls", none["choices"][0]["message"])

    def test_bad_input_names_the_field(self):
        dup = [TOOLS[0], TOOLS[0]]
        multiple_of = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"n": {"type": "number", "multipleOf": 2}}}}}]
        cases = [
            ({"tool_choice": "required"}, 400, "tool_choice"),
            ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
             400, "tool_choice.function.name"),
            ({"tools": dup}, 400, "tools[1].function.name"),
            ({"tools": [{"type": "function", "function": {"name": "f",
                                                          "parameters": {"type": "string"}}}]},
             400, "tools[0].function.parameters.type"),
            ({"tools": multiple_of, "tool_choice": "required"}, 400,
             "tools[0].function.parameters"),
            ({"tools": [{"type": "function", "function": {"name": "bad name"}}]}, 400,
             "tools[0].function.name"),
            ({"tools": "get_weather"}, 422, "tools"),
            ({"tools": TOOLS, "structured_outputs": {"regex": "a+"}}, 400,
             "structured_outputs"),
            ({"tools": TOOLS, "messages": ASK + [{"role": "tool", "tool_call_id": "call_x",
                                                  "content": "1"}]},
             400, "messages[1].tool_call_id"),
            ({"tools": TOOLS, "messages": ASK + [{"role": "tool", "content": "1"}]}, 422,
             "messages[1].tool_call_id"),
            ({"messages": ASK + [{"role": "assistant", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}]}]},
             400, "messages[1].tool_calls[0].function.arguments"),
            ({"functions": [{"name": "f"}]}, 400, "functions"),
        ]
        for extra, status, param in cases:
            got, body = post(dict({"messages": ASK, "max_tokens": 8}, **extra))
            self.assertEqual(got, status, (extra, body))
            self.assertEqual(body["error"]["param"], param, body)
        got, body = post({"messages": ASK, "max_tokens": 8, "tools": multiple_of,
                          "tool_choice": "required"})
        self.assertIn("/properties/n/multipleOf", body["error"]["message"])
        got, body = post({"prompt": "x", "max_tokens": 1, "tools": TOOLS}, "/v1/completions")
        self.assertEqual((got, body["error"]["param"]), (400, "tools"), body)
        # 100,000 nested arrays in a schema or in a history call's arguments: refused, no crash
        deep = "[" * 100000 + "]" * 100000
        for text, param in [
                ('{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", '
                 '"function": {"name": "f", "parameters": {"type": "object", "default": '
                 + deep + '}}}]}', "tools"),
                ('{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", '
                 '"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", '
                 '"arguments": "' + deep + '"}}]}]}',
                 "messages[1].tool_calls[0].function.arguments"),
                ('{"max_tokens": 4, "messages": [{"role": "user", "content": "x"}], "tools": '
                 '[{"name": "f", "input_schema": {"type": "object", "default": ' + deep + '}}]}',
                 None)]:
            path = "/v1/chat/completions" if param else "/v1/messages"
            status, _, data = raw("POST", path, text)
            self.assertEqual(status, 400, data[:300])
            if param:
                self.assertEqual(json.loads(data)["error"]["param"], param)
            else:
                self.assertIn("nested deeper", json.loads(data)["error"]["message"])

    def test_other_requests_unaffected(self):
        plain_req = {"messages": [{"role": "user", "content": "Name a fruit."}],
                     "max_tokens": 20, "temperature": 0}
        alone = post(plain_req)[1]["choices"][0]["message"]["content"]
        tool_req = {"messages": ASK, "tools": TOOLS, "tool_choice": "required",
                    "parallel_tool_calls": False, "max_tokens": 80, "temperature": 0}
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(post, r) for r in (tool_req, plain_req, tool_req, plain_req)]
            got = [f.result() for f in futures]
        for status, body in got:
            self.assertEqual(status, 200, body)
        self.assertEqual(got[1][1]["choices"][0]["message"]["content"], alone)
        self.assertEqual(got[3][1]["choices"][0]["message"]["content"], alone)
        self.assertEqual(got[0][1]["choices"][0]["finish_reason"], "tool_calls")
        first = [c["function"] for c in got[0][1]["choices"][0]["message"]["tool_calls"]]
        second = [c["function"] for c in got[2][1]["choices"][0]["message"]["tool_calls"]]
        self.assertEqual(first, second)


ANTHROPIC_TOOLS = [{"name": f["function"]["name"], "description": f["function"]["description"],
                    "input_schema": f["function"]["parameters"]} for f in TOOLS]
RESPONSES_TOOLS = [dict(f["function"], type="function") for f in TOOLS]


class AnthropicToolUse(unittest.TestCase):
    """/v1/messages through the official `anthropic` SDK: tools, tool_choice any / tool / auto,
    tool_use blocks (input validates), streamed == created, a tool_result fed back."""

    def client(self):
        anthropic = ensure_package("anthropic")
        if anthropic is None:
            self.skipTest("the anthropic package cannot be imported or installed")
        return anthropic.Anthropic(base_url=SERVER.url, api_key="unused", max_retries=0,
                                   timeout=300)

    def create(self, **kw):
        args = dict(model=SERVER.model, max_tokens=120, extra_body={"temperature": 0},
                    tools=ANTHROPIC_TOOLS, messages=ASK)
        args.update(kw)
        return self.client().messages.create(**args)

    def test_any_named_auto_and_stream(self):
        import jsonschema
        for choice in ({"type": "any", "disable_parallel_tool_use": True},
                       {"type": "tool", "name": "get_time"}):
            m = self.create(tool_choice=choice)
            self.assertEqual(m.stop_reason, "tool_use", m)
            uses = [b for b in m.content if b.type == "tool_use"]
            self.assertTrue(uses, m)
            for b in uses:
                self.assertTrue(b.id.startswith("toolu_"), b.id)
                jsonschema.validate(b.input, SCHEMAS[b.name])
            if choice["type"] == "tool":
                self.assertEqual([b.name for b in uses], ["get_time"])
            with self.client().messages.stream(model=SERVER.model, max_tokens=120,
                                               extra_body={"temperature": 0},
                                               tools=ANTHROPIC_TOOLS, messages=ASK,
                                               tool_choice=choice) as stream:
                final = stream.get_final_message()
            self.assertEqual(final.stop_reason, "tool_use")
            self.assertEqual([(b.name, b.input) for b in final.content if b.type == "tool_use"],
                             [(b.name, b.input) for b in uses])
        m = self.create(tool_choice={"type": "auto", "disable_parallel_tool_use": True})
        self.assertIn(m.stop_reason, ("tool_use", "end_turn", "max_tokens"))

    def test_tool_result_fed_back_and_counted(self):
        first = self.create(tool_choice={"type": "tool", "name": "get_weather"})
        use = [b for b in first.content if b.type == "tool_use"][0]
        history = ASK + [
            {"role": "assistant", "content": [{"type": "tool_use", "id": use.id,
                                               "name": use.name, "input": use.input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                          "content": "sunny, 21 C"}]}]
        m = self.create(messages=history, tool_choice={"type": "none"}, max_tokens=30)
        self.assertEqual(m.content[0].type, "text")
        c = self.client()
        plain = c.messages.count_tokens(model=SERVER.model, messages=ASK).input_tokens
        fed = c.messages.count_tokens(model=SERVER.model, messages=history,
                                      tools=ANTHROPIC_TOOLS).input_tokens
        self.assertGreater(fed, plain + 20)

    def test_bad_tool_input(self):
        status, _, data = raw("POST", "/v1/messages", {
            "model": SERVER.model, "max_tokens": 8, "messages": ASK,
            "tools": [{"type": "web_search_20250305", "name": "web_search"}]})
        self.assertEqual(status, 400, data)
        self.assertIn("tools[0].type", json.loads(data)["error"]["message"])
        status, _, data = raw("POST", "/v1/messages", {
            "model": SERVER.model, "max_tokens": 8, "messages": ASK, "tools": ANTHROPIC_TOOLS,
            "tool_choice": {"type": "tool", "name": "nope"}})
        self.assertEqual(status, 400, data)
        self.assertIn("tool_choice.name", json.loads(data)["error"]["message"])


class ResponsesFunctionCalls(unittest.TestCase):
    """/v1/responses through the openai SDK's responses.create / responses.stream: function
    tools, function_call output items (arguments validate), streamed == created, a
    function_call_output fed back."""

    def test_required_named_stream_and_history(self):
        import jsonschema
        c = client()
        for choice in ("required", {"type": "function", "name": "get_time"}):
            r = c.responses.create(model=SERVER.model, input=ASK[0]["content"], temperature=0,
                                   max_output_tokens=120, tools=RESPONSES_TOOLS,
                                   tool_choice=choice, parallel_tool_calls=False)
            self.assertEqual(r.status, "completed", r)
            calls = [o for o in r.output if o.type == "function_call"]
            self.assertTrue(calls, r)
            for call in calls:
                self.assertTrue(call.call_id.startswith("call_"), call.call_id)
                jsonschema.validate(json.loads(call.arguments), SCHEMAS[call.name])
            if isinstance(choice, dict):
                self.assertEqual([o.name for o in calls], ["get_time"])
            with c.responses.stream(model=SERVER.model, input=ASK[0]["content"], temperature=0,
                                    max_output_tokens=120, tools=RESPONSES_TOOLS,
                                    tool_choice=choice, parallel_tool_calls=False) as stream:
                final = stream.get_final_response()
            self.assertEqual([(o.name, o.arguments) for o in final.output
                              if o.type == "function_call"],
                             [(o.name, o.arguments) for o in calls])
        call = calls[0]
        history = [{"role": "user", "content": ASK[0]["content"]},
                   {"type": "function_call", "call_id": call.call_id, "name": call.name,
                    "arguments": call.arguments},
                   {"type": "function_call_output", "call_id": call.call_id, "output": "12:00"}]
        r = c.responses.create(model=SERVER.model, input=history, temperature=0,
                               max_output_tokens=30, tools=RESPONSES_TOOLS, tool_choice="none")
        self.assertIsInstance(r.output_text, str)
        status, body = post({"input": "hi", "tools": [{"type": "web_search"}]}, "/v1/responses")
        self.assertEqual((status, body["error"]["param"]), (400, "tools[0].type"), body)


class HermesFormat(unittest.TestCase, ResponseFormatBesideTools):
    """The same model served with `--chat-template qwen2.5`: Qwen2.5's template defines tool
    calling, so the tools go into its system turn and calls are <tool_call> blocks, which the
    grammar (XGrammar's structural tag) starts at the marker."""
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = PlinthServer(PLINTH, MANIFEST, "--chat-template", "qwen2.5").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def client(self):
        return openai.OpenAI(base_url=self.server.url + "/v1", api_key="unused", max_retries=0,
                             timeout=300)

    def create(self, **kw):
        args = dict(model=self.server.model, messages=ASK, tools=TOOLS, max_tokens=120,
                    temperature=0, parallel_tool_calls=False)
        args.update(kw)
        return self.client().chat.completions.create(**args)

    def test_required_named_and_streamed(self):
        import jsonschema
        for choice in ("required", {"type": "function", "function": {"name": "get_time"}}):
            whole = self.create(tool_choice=choice).choices[0]
            self.assertEqual(whole.finish_reason, "tool_calls", whole)
            self.assertTrue(whole.message.tool_calls, whole)
            for call in whole.message.tool_calls:
                jsonschema.validate(json.loads(call.function.arguments),
                                    SCHEMAS[call.function.name])
            if isinstance(choice, dict):
                self.assertEqual([c.function.name for c in whole.message.tool_calls],
                                 ["get_time"])
            content, calls, _ = gather_stream(self.create(tool_choice=choice, stream=True))
            self.assertEqual(content, whole.message.content)
            self.assertEqual(calls,
                             [[c.function.name, c.function.arguments]
                              for c in whole.message.tool_calls])

    def test_auto_and_history(self):
        r = self.create(tool_choice="auto").choices[0]
        if r.message.tool_calls:
            self.assertEqual(r.finish_reason, "tool_calls")
        else:
            self.assertIsInstance(r.message.content, str)
        first = self.create(tool_choice="required").choices[0].message.tool_calls[0]
        history = ASK + [
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": first.id, "type": "function",
                             "function": {"name": first.function.name,
                                          "arguments": first.function.arguments}}]},
            {"role": "tool", "tool_call_id": first.id, "content": "sunny"}]
        r = self.create(messages=history, tool_choice="none", max_tokens=30)
        self.assertIsInstance(r.choices[0].message.content, str)


LLAMA31_TEMPLATE = str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"
                       / "chat_templates" / "llama3.1.jinja")


class Llama3Format(unittest.TestCase):
    """The same model served with Llama 3.1's real template (`--chat-template FILE`, recognised
    from the text as a GGUF's would be): tools in the first user turn, the reply one call
    {"name": ..., "parameters": {...}} the grammar forces (required, named) or free text until
    the call (auto); streamed fragments concatenate to the non-streamed arguments; a tool result
    fed back as an ipython turn; response_format with auto refused by name."""
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = PlinthServer(PLINTH, MANIFEST, "--chat-template", LLAMA31_TEMPLATE).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def client(self):
        return openai.OpenAI(base_url=self.server.url + "/v1", api_key="unused", max_retries=0,
                             timeout=300)

    def create(self, **kw):
        args = dict(model=self.server.model, messages=ASK, tools=TOOLS, max_tokens=120,
                    temperature=0)
        args.update(kw)
        return self.client().chat.completions.create(**args)

    def test_required_named_streamed_and_not(self):
        import jsonschema
        for choice in ("required", {"type": "function", "function": {"name": "get_time"}}):
            whole = self.create(tool_choice=choice).choices[0]
            self.assertEqual(whole.finish_reason, "tool_calls", whole)
            self.assertIsNone(whole.message.content)
            self.assertEqual(len(whole.message.tool_calls), 1, whole)  # one call per turn
            call = whole.message.tool_calls[0]
            self.assertTrue(call.id.startswith("call_"), call.id)
            jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])
            if isinstance(choice, dict):
                self.assertEqual(call.function.name, "get_time")
            content, calls, finish = gather_stream(self.create(tool_choice=choice, stream=True))
            self.assertIsNone(content)
            self.assertEqual(finish, "tool_calls")
            self.assertEqual(calls, [[call.function.name, call.function.arguments]])

    def test_auto_history_and_refusals(self):
        r = self.create(tool_choice="auto").choices[0]
        if r.message.tool_calls:
            self.assertEqual(r.finish_reason, "tool_calls")
            self.assertEqual(len(r.message.tool_calls), 1)
        else:
            self.assertIsInstance(r.message.content, str)
        first = self.create(tool_choice="required").choices[0].message.tool_calls[0]
        call = {"id": first.id, "type": "function",
                "function": {"name": first.function.name, "arguments": first.function.arguments}}
        history = ASK + [{"role": "assistant", "content": None, "tool_calls": [call]},
                         {"role": "tool", "tool_call_id": first.id, "content": "sunny"}]
        r = self.create(messages=history, tool_choice="none", max_tokens=30)
        self.assertIsInstance(r.choices[0].message.content, str)
        r = self.create(messages=history, tool_choice="auto", max_tokens=60)
        self.assertIn(r.choices[0].finish_reason, ("stop", "length", "tool_calls"))
        # two calls in one assistant turn: the template raises, a 400 naming the messages
        two = ASK + [{"role": "assistant", "content": None,
                      "tool_calls": [call, dict(call, id="call_2")]},
                     {"role": "tool", "tool_call_id": first.id, "content": "sunny"}]
        status, _, data = raw_to(self.server, {"model": self.server.model, "messages": two,
                                               "tools": TOOLS, "max_tokens": 4})
        self.assertEqual(status, 400, data)
        self.assertEqual(json.loads(data)["error"]["param"], "messages")
        self.assertIn("one tool call per assistant message", json.loads(data)["error"]["message"])
        # response_format with auto cannot be told apart from a call: 400 naming the pair
        status, _, data = raw_to(self.server, {"model": self.server.model, "messages": ASK,
                                               "tools": TOOLS, "response_format": CITY_FORMAT,
                                               "max_tokens": 4})
        self.assertEqual(status, 400, data)
        err = json.loads(data)["error"]
        self.assertEqual(err["param"], "response_format")
        self.assertIn("Llama 3.x", err["message"])
        # ... with required it is the calls, with none only the schema
        req = self.create(tool_choice="required", response_format=CITY_FORMAT).choices[0]
        self.assertEqual(req.finish_reason, "tool_calls")
        none = self.create(tool_choice="none", response_format=CITY_FORMAT,
                           max_tokens=80).choices[0]
        import jsonschema
        jsonschema.validate(json.loads(none.message.content), CITY)


class MistralNemoFormat(unittest.TestCase):
    """The same model served with Mistral Nemo's real template
    (tests/fixtures/chat_templates/mistral-nemo.jinja): [AVAILABLE_TOOLS] before the last user
    turn, the prompt ending with [TOOL_CALLS], the reply the list of calls with 9-character ids
    (required, named, parallel or not), streamed == whole; history ids of any shape (call_...)
    mapped to the template's 9 characters; tool_choice auto refused by name."""
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = PlinthServer(PLINTH, MANIFEST, "--chat-template",
                                  str(pathlib.Path(LLAMA31_TEMPLATE).with_name(
                                      "mistral-nemo.jinja"))).__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def create(self, **kw):
        args = dict(model=self.server.model, messages=ASK, tools=TOOLS, max_tokens=120,
                    temperature=0, parallel_tool_calls=False)
        args.update(kw)
        return openai.OpenAI(base_url=self.server.url + "/v1", api_key="unused", max_retries=0,
                             timeout=300).chat.completions.create(**args)

    def test_required_named_streamed_and_history(self):
        import jsonschema
        for choice in ("required", {"type": "function", "function": {"name": "get_time"}}):
            whole = self.create(tool_choice=choice).choices[0]
            self.assertEqual(whole.finish_reason, "tool_calls", whole)
            self.assertIsNone(whole.message.content)
            self.assertEqual(len(whole.message.tool_calls), 1, whole)
            call = whole.message.tool_calls[0]
            self.assertTrue(call.id.startswith("call_"), call.id)
            jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])
            if isinstance(choice, dict):
                self.assertEqual(call.function.name, "get_time")
            content, calls, finish = gather_stream(self.create(tool_choice=choice, stream=True))
            self.assertIsNone(content)
            self.assertEqual(finish, "tool_calls")
            self.assertEqual(calls, [[call.function.name, call.function.arguments]])
        # parallel calls allowed: each validates
        r = self.create(tool_choice="required", parallel_tool_calls=True, max_tokens=200).choices[0]
        if r.finish_reason == "tool_calls":
            for c in r.message.tool_calls:
                jsonschema.validate(json.loads(c.function.arguments), SCHEMAS[c.function.name])
        # the call fed back with a call_... id (mapped to 9 characters for the template; a fixed
        # one, so that the prompt and the greedy reply are the same on every run)
        history = ASK + [{"role": "assistant", "content": None,
                          "tool_calls": [{"id": "call_fixed1", "type": "function",
                                          "function": {"name": call.function.name,
                                                       "arguments": call.function.arguments}}]},
                         {"role": "tool", "tool_call_id": "call_fixed1", "content": "sunny"}]
        r = self.create(messages=history, tool_choice="none", max_tokens=30)
        self.assertIsInstance(r.choices[0].message.content, str)
        # get_weather's schema is closed and bounded: the call ends within max_tokens
        r = self.create(messages=history, tool_choice={"type": "function",
                                                      "function": {"name": "get_weather"}}).choices[0]
        self.assertEqual(r.finish_reason, "tool_calls", r)
        jsonschema.validate(json.loads(r.message.tool_calls[0].function.arguments), WEATHER)

    def test_auto_refused_response_format_with_required_and_none(self):
        import jsonschema
        for extra in ({}, {"tool_choice": "auto"}):
            status, _, data = raw_to(self.server, dict({"model": self.server.model,
                                                        "messages": ASK, "tools": TOOLS,
                                                        "max_tokens": 4}, **extra))
            self.assertEqual(status, 400, data)
            err = json.loads(data)["error"]
            self.assertEqual(err["param"], "tool_choice")
            self.assertIn("[TOOL_CALLS]", err["message"])
        req = self.create(tool_choice="required", response_format=CITY_FORMAT).choices[0]
        self.assertEqual(req.finish_reason, "tool_calls")
        none = self.create(tool_choice="none", response_format=CITY_FORMAT,
                           max_tokens=80).choices[0]
        jsonschema.validate(json.loads(none.message.content), CITY)


def raw_to(server, body):
    """POST body to server's /v1/chat/completions: (status, headers, text)."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request(server.url + "/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def main():
    global SERVER, openai, PLINTH, MANIFEST
    p = argparse.ArgumentParser()
    p.add_argument("--plinth", required=True)
    p.add_argument("--manifest", required=True)
    args, rest = p.parse_known_args()
    PLINTH, MANIFEST = args.plinth, args.manifest
    openai = ensure_openai()
    if openai is None:
        print("SKIP: the `openai` package cannot be imported or installed (pip install openai)")
        return 77
    with PlinthServer(args.plinth, args.manifest) as server:
        SERVER = server
        test_openai_api.SERVER = server
        return run_tests(server, rest)


if __name__ == "__main__":
    sys.exit(main())
