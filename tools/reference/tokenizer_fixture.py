#!/usr/bin/env python3
"""Golden token ids for plinth's tokenizer tests, produced by an independent tokenizer: llama.cpp
(through the llama-cpp-python package) loading the same GGUF file with vocab_only=True.

    python3 tools/reference/tokenizer_fixture.py \
        --model models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --out tests/fixtures/tokenizer/smollm2.json
    python3 tools/reference/tokenizer_fixture.py \
        --model models/gemma-3-270m-q4_k_m.gguf --segments gemma \
        --out tests/fixtures/tokenizer/gemma3.json
    python3 tools/reference/tokenizer_fixture.py --random 40 \
        --vocab-dir "$(tools/fetch_llama_cpp_assets --print-dir)/models" \
        --out tests/fixtures/tokenizer/llama_cpp_vocabs.json

(llama-cpp-python as tools/bench/build_llama_cpp.sh installs it: run with
<cache>/venv/bin/python and LLAMA_CPP_LIB_PATH=<cache>/build/bin. Or, with --vocab-tool PATH,
llama.cpp's llama_vocab alone, tools/reference/llama_vocab_tool/build.sh's vocab_tool: the same
tokenizer code without the rest of libllama; pieces are then the tokens' vocabulary texts.) --vocab-dir tokenizes the same
strings with every llama.cpp vocabulary test file there (ggml-vocab-*.gguf with an .inp) into one
file, without pieces. --segments STYLE adds chat prompts written as segments (a special token's
text, or plain text): llama.cpp tokenizes their concatenation with special=True, which is what
plinth's Tokenizer::encode_segments(segments, false) must give.

Each string is tokenized with tokenize(text.encode(), add_bos=False, special=False): special-token
text in the string stays plain text, exactly what plinth's Tokenizer::encode(text, false) must
give. The output records the command, the llama.cpp / llama-cpp-python versions and, per case, the
text, its ids and the decoded pieces (for reading diffs; the tests compare ids only). After the
listed strings come --random seeded random strings mixing scripts, digits, punctuation,
apostrophes and kinds of whitespace.
"""

import argparse
import json
import re
import sys

CASES = [
    # English
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! How are you today?",
    "I'm sure it's fine, they're here and we've done it; you'll see, he'd say.",
    "DON'T SHOUT, IT'S RUDE",
    "rock 'n' roll",
    "e-mail: someone@example.com, url: https://example.org/path?q=1&r=2#frag",
    "Mr. O'Neil's dog's bone",
    "MiXeD CaSe WoRdS",
    "A very long word: pneumonoultramicroscopicsilicovolcanoconiosis",
    # Code
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "for i in range(10):\n    print(i ** 2)\n",
    "#include <vector>\nint main() {\n  std::vector<int> v{1, 2, 3};\n  return v.size() > 2 ? 0 : 1;\n}\n",
    "template <typename T>\nauto add(T a, T b) -> decltype(a + b) { return a + b; }",
    "if (x != nullptr && *x >= 0x7F) { y <<= 3; }",
    '{"key": [1, 2.5, -3e10], "nested": {"a": null}}',
    "    indented\n\tTabbed\n\t\tdouble tab",
    "# Title\n\n- item **bold** _it_ `code`\n\n```py\nx=1\n```",
    # CJK and other scripts
    "日本語のテキストです。",
    "中文测试：你好，世界！",
    "한국어 텍스트",
    "混合 text 和 English",
    "ｆｕｌｌｗｉｄｔｈ　ｓｐａｃｅ",
    "नमस्ते दुनिया",
    "สวัสดีชาวโลก",
    "Привет, мир! Γειά σου Κόσμε",
    "Ünïcödé wïth àccénts",
    # Emoji: modifiers, ZWJ sequences, flags, variation selectors
    "😀😃😄",
    "👍🏽 thumbs",
    "👨‍👩‍👧‍👦 family",
    "🏳️‍🌈 flag",
    "🇺🇸🇯🇵🇫🇷",
    "I ❤️ tokenizers ✨",
    # Combining marks
    "e\u0301 vs \u00e9",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319algo",
    "ñ n\u0303 Å A\u030a",
    # Right-to-left
    "مرحبا بالعالم",
    "שלום עולם",
    "Mixed עברית and العربية text",
    # Whitespace
    "   leading spaces",
    "trailing spaces   ",
    "multiple     spaces    between",
    "\t\ttabs\tinside\t",
    "line1\nline2\n\nline4\n\n\n",
    "\r\nwindows\r\nnewlines\r\n",
    " ",
    "\n",
    "  \n  \n",
    "a \t b\u00a0c\u3000d\u2003e",
    "\u0085 next line and \u200b zero width",
    # Digits (llama.cpp's smollm pre-tokenizer puts every digit alone)
    "12345678901234567890",
    "3.14159265358979",
    "1,000,000 and 1 000 000",
    "Call 555-0123 or +1 (800) 123-4567",
    "version 2.0.1-rc3 released 2024-01-15",
    "x²+y³=z¹ ½ ¾",
    "٣٤٥ Arabic-Indic digits ١٢٣",
    # Contractions
    "'s 're 've 'm 'll 'd 't",
    "it's' 's's",
    # Text that looks like special tokens: plain text here
    "<|im_start|>user\nHello<|im_end|>",
    "<|endoftext|>",
    "<repo_name>foo<file_sep>",
    "< | im_start | >",
    "<s></s>[INST]",
    "<start_of_turn>user\n  hi<end_of_turn>\n<start_of_turn>model\n",
    "<|user|>\n  hi<|end|>\n<|assistant|>  ok</s> <s>",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "<bos><eos><pad> <unk> <mask> <unused0> [multimodal]",
    "<think>\nplan\n</think>\n\nanswer <tool_call>",
    "<table><tr><td>cell</td></tr></table> <h1>T</h1>",
    # Edge cases
    "",
    "a",
    "   ",
    "\u0000 control \u0007 chars \u001b[31m",
    "!!!???...---___***",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    " \t def  x",
]


# Alphabet for the seeded random cases: runs of each class meet in every combination, which is where
# pre-tokenizer rules (spaces before letters/digits/punctuation, whitespace lookahead) interact.
RANDOM_POOLS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "0123456789\u00b2\u00bd\u0663",
    "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~",
    "'",
    "    \t\n\r\u00a0\u3000\u0085\u2003",
    "\u65e5\u672c\u8a9e\u4e2d\u6587\ud55c\uad6d\u3002\uff01",
    "\U0001F600\U0001F44D\U0001F3FD\u200d\u2764\ufe0f\U0001F1FA\U0001F1F8",
    "\u0301\u0303\u0308\u093f",
    "\u0645\u0631\u062d\u05e9\u05dc\u05d5\u05dd\u00e9\u00fc\u0416",
    "s t re ve m ll d",
]


def random_cases(n: int, seed: int) -> list:
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = ""
        for _ in range(rng.randint(1, 12)):
            pool = rng.choice(RANDOM_POOLS)
            text += "".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        out.append(text)
    return out


# Chat prompts as segments ([text, special]) per marker style. Plain segments hold no control-token
# text (llama.cpp's parse_special would make it a token; plinth keeps a user's text as text).
SEGMENTS = {
    "gemma": [
        [["<bos>", True], ["<start_of_turn>", True], ["user\nWhat is 2+2?", False],
         ["<end_of_turn>", True], ["\n", False], ["<start_of_turn>", True], ["model\n", False]],
        [["<start_of_turn>", True], ["user\n  Hello,   world \n\n", False], ["<end_of_turn>", True],
         ["\n", False], ["<start_of_turn>", True], ["model\nHi there, typed", False]],
        [["<bos>", True], [" leading space after BOS", False], ["<eos>", True], ["tail", False]],
    ],
    # Phi-3: llama.cpp marks its special tokens RSTRIP (general.name contains "phi3"), so the
    # whitespace after them is dropped; "</s>" too, not "<s>" / "<|endoftext|>".
    "phi3": [
        [["<s>", True], ["<|system|>", True], ["\nBe brief.", False], ["<|end|>", True],
         ["\n", False], ["<|user|>", True], ["\n  Hi  ", False], ["<|end|>", True],
         ["\n", False], ["<|assistant|>", True], ["\n", False]],
        [["<|user|>", True], ["\n\tq", False], ["</s>", True], ["  \n after eos", False],
         ["<s>", True], ["  after bos ", False], ["<|endoftext|>", True], [" x", False]],
    ],
    # Llama 2 / Mistral v0.x: "[INST]" is text; the space prefix after every special token.
    "llama2": [
        [["<s>", True], ["[INST] <<SYS>>\nS\n<</SYS>>\n\nQ [/INST] A ", False], ["</s>", True],
         ["<s>", True], ["[INST] again [/INST]", False]],
        [["<s>", True], ["Hello", False], ["</s>", True], ["  two spaces", False]],
    ],
    "llama3": [
        [["<|begin_of_text|>", True], ["<|start_header_id|>", True], ["user", False],
         ["<|end_header_id|>", True], ["\n\nhi, typed", False], ["<|eot_id|>", True],
         ["<|start_header_id|>", True], ["assistant", False], ["<|end_header_id|>", True],
         ["\n\n", False]],
    ],
    "chatml": [
        [["<|im_start|>", True], ["system\nBe brief.", False], ["<|im_end|>", True],
         ["\n", False], ["<|im_start|>", True], ["user\n 12345 typed", False],
         ["<|im_end|>", True], ["\n", False], ["<|im_start|>", True], ["assistant\n", False]],
    ],
}

# The segment style of each llama.cpp vocabulary test file (--vocab-dir).
VOCAB_SEGMENTS = {"phi-3": "phi3", "llama-spm": "llama2", "llama-bpe": "llama3", "qwen2": "chatml",
                  "qwen35": "chatml"}


class LlamaCppPython:
    """llama.cpp through llama-cpp-python."""

    def __init__(self, llama_cpp, path):
        self.llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
        self.version = "llama-cpp-python %s" % llama_cpp.__version__
        self.metadata = self.llm.metadata

    def tokenize(self, texts, special):
        return [self.llm.tokenize(t.encode("utf-8"), add_bos=False, special=special)
                for t in texts]

    def piece(self, i):
        return self.llm.detokenize([i]).decode("utf-8", errors="backslashreplace")


class VocabTool:
    """llama.cpp's llama_vocab through tools/reference/llama_vocab_tool (one process per call)."""

    def __init__(self, tool, path):
        import subprocess
        from gguf import GGUFReader
        self.subprocess, self.tool, self.path = subprocess, tool, path
        fields = GGUFReader(path).fields
        self.metadata = {k: fields[k].contents() for k in ("tokenizer.ggml.model",
                                                           "tokenizer.ggml.pre") if k in fields}
        self.tokens = fields["tokenizer.ggml.tokens"].contents()
        self.version = "llama.cpp (llama-cpp-python 0.3.36's vendored copy) llama_vocab via " \
                       "tools/reference/llama_vocab_tool"

    def tokenize(self, texts, special):
        data = b"".join((b"S" if special else b"T") + b"%d\n" % len(t.encode("utf-8")) +
                        t.encode("utf-8") for t in texts)
        out = self.subprocess.run([self.tool, self.path], input=data, capture_output=True,
                                  check=True).stdout.decode()
        lines = out.split("\n")[:len(texts)]
        return [[int(x) for x in line.split()] for line in lines]

    def piece(self, i):
        return self.tokens[i]


def tokenize_all(tok, texts, with_pieces):
    cases = []
    for text, ids in zip(texts, tok.tokenize(texts, False)):
        case = {"text": text, "ids": ids}
        if with_pieces:
            case["pieces"] = [tok.piece(i) for i in ids]
        cases.append(case)
    return cases


def vocab_fixture(open_tok, directory, texts, command):
    import glob
    import os
    vocabs = {}
    for path in sorted(glob.glob(os.path.join(directory, "ggml-vocab-*.gguf"))):
        if not os.path.exists(path + ".inp"):
            continue
        name = os.path.basename(path)[len("ggml-vocab-"):-len(".gguf")]
        try:
            tok = open_tok(path)
            vocabs[name] = {"cases": tokenize_all(tok, texts, False)}
        except Exception as e:  # a vocabulary llama.cpp cannot load
            print(f"skipped {name}: {e}", file=sys.stderr)
            continue
        if tok.metadata.get("tokenizer.ggml.model") not in ("gpt2", "llama"):
            del vocabs[name]  # a tokenizer plinth refuses (vocab_files_test.cpp checks that)
            continue
        if name in VOCAB_SEGMENTS:
            vocabs[name]["segments"] = segment_cases(tok, VOCAB_SEGMENTS[name])
    return {"command": command,
            "generator": "%s: tokenize(text, add_special=False, parse_special=False)" % tok.version,
            "segments_generator": "tokenize(concatenated text, add_bos=False, special=True)",
            "vocabs": vocabs}


def segment_cases(tok, style):
    texts = ["".join(t for t, _ in segs) for segs in SEGMENTS[style]]
    return [{"segments": segs, "ids": ids}
            for segs, ids in zip(SEGMENTS[style], tok.tokenize(texts, True))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--out", default="tests/fixtures/tokenizer/smollm2.json")
    ap.add_argument("--random", type=int, default=200, help="seeded random strings added after the listed ones")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--segments", choices=sorted(SEGMENTS), help="add chat prompts as segments")
    ap.add_argument("--vocab-dir", help="every llama.cpp ggml-vocab-*.gguf with an .inp in DIR")
    ap.add_argument("--vocab-tool", metavar="PATH",
                    help="llama.cpp's llama_vocab via tools/reference/llama_vocab_tool instead of "
                         "llama-cpp-python")
    args = ap.parse_args()

    import os
    if args.vocab_tool:
        def open_tok(path):
            return VocabTool(args.vocab_tool, path)
        tool_arg = " --vocab-tool \"$(tools/reference/llama_vocab_tool/build.sh)\""
    else:
        import llama_cpp  # imported late so --help works without it

        def open_tok(path):
            return LlamaCppPython(llama_cpp, path)
        tool_arg = ""

    texts = CASES + random_cases(args.random, args.seed)
    if args.vocab_dir:
        command = ("python3 tools/reference/tokenizer_fixture.py --random %d --seed %d --vocab-dir"
                   " \"$(tools/fetch_llama_cpp_assets --print-dir)/models\" --out %s%s"
                   % (args.random, args.seed, args.out, tool_arg))
        fixture = vocab_fixture(open_tok, args.vocab_dir, texts, command)
    else:
        tok = open_tok(args.model)
        meta = tok.metadata
        command = ("python3 tools/reference/tokenizer_fixture.py --model %s --out %s --random %d"
                   " --seed %d%s" % (args.model, args.out, args.random, args.seed, tool_arg))
        if args.segments:
            command += " --segments " + args.segments
        fixture = {
            "command": command,
            "generator": "%s: tokenize(text, add_special=False, parse_special=False)"
                         % tok.version,
            "model": "%s (tokenizer.ggml.model=%s, tokenizer.ggml.pre=%s)" % (
                os.path.basename(args.model), meta.get("tokenizer.ggml.model"),
                meta.get("tokenizer.ggml.pre")),
            "cases": tokenize_all(tok, texts, True),
        }
        if args.segments:
            fixture["segments_generator"] = "the concatenated text with parse_special=True"
            fixture["segments"] = segment_cases(tok, args.segments)
    text = json.dumps(fixture, ensure_ascii=True, indent=1)
    # Each list of token ids on one line.
    text = re.sub(r"\[\n\s*(-?\d+(?:,\n\s*-?\d+)*)\n\s*\]",
                  lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]", text)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print("wrote %s" % args.out, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
