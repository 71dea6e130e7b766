#!/usr/bin/env python3
"""Golden token ids for plinth's tokenizer tests, produced by an independent tokenizer: llama.cpp
(through the llama-cpp-python package) loading the same GGUF file with vocab_only=True.

    python3 tools/reference/tokenizer_fixture.py \
        --model models/SmolLM2-135M-Instruct.Q4_1.gguf \
        --out tests/fixtures/tokenizer/smollm2.json

Each string is tokenized with tokenize(text.encode(), add_bos=False, special=False): special-token
text in the string stays plain text, exactly what plinth's Tokenizer::encode(text, false) must
give. The output records the command, the llama.cpp / llama-cpp-python versions and, per case, the
text, its ids and the decoded pieces (for reading diffs; the tests compare ids only). After the
listed strings come --random seeded random strings mixing scripts, digits, punctuation,
apostrophes and kinds of whitespace.
"""

import argparse
import json
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--out", default="tests/fixtures/tokenizer/smollm2.json")
    ap.add_argument("--random", type=int, default=200, help="seeded random strings added after the listed ones")
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args()

    import llama_cpp  # imported late so --help works without it

    llm = llama_cpp.Llama(model_path=args.model, vocab_only=True, verbose=False)
    cases = []
    for text in CASES + random_cases(args.random, args.seed):
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        pieces = [llm.detokenize([i]).decode("utf-8", errors="backslashreplace") for i in ids]
        cases.append({"text": text, "ids": ids, "pieces": pieces})
    fixture = {
        "command": "python3 tools/reference/tokenizer_fixture.py --model models/SmolLM2-135M-Instruct.Q4_1.gguf"
                   " --out tests/fixtures/tokenizer/smollm2.json --random %d --seed %d" % (args.random, args.seed),
        "generator": "llama.cpp via llama-cpp-python %s: Llama(model_path, vocab_only=True)."
                     "tokenize(text.encode(), add_bos=False, special=False)" % llama_cpp.__version__,
        "model": "SmolLM2-135M-Instruct.Q4_1.gguf (tokenizer.ggml.model=gpt2, tokenizer.ggml.pre=smollm)",
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=True, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
