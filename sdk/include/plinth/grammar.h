/* plinth plugin ABI — grammar (ABI 1.4): constrained decoding ("structured outputs"). The plugin
 * compiles a constraint (a JSON Schema, a regular expression, a list of choices, an EBNF grammar)
 * against the model's vocabulary, and per-sequence matchers tell the host which tokens may come
 * next (a bitmask over the vocabulary) and follow the tokens the sequence takes.
 *
 * The host (docs/architecture.md, 'Structured outputs') masks a constrained sequence's logits
 * after its penalties and logit_bias and before greedy / top-k / top-p and logprobs; allows stop
 * and EOS tokens only where the matcher's mask does (where the grammar can end); under speculative
 * decoding it fills one mask per draft position (accept the earlier drafts, fill, roll back) and
 * cuts the drafts at their first token the grammar refuses. It checks every answer as it checks
 * the other kinds' (a mask row allows at least one token; a token the mask allowed is accepted)
 * and fails only the sequence concerned when one is wrong.
 *
 * Threads: compile and release_grammar may be called from any thread at any time (the server
 * compiles off its engine and I/O threads); everything on matchers from one thread at a time (the
 * engine thread).
 */
#ifndef PLINTH_GRAMMAR_H
#define PLINTH_GRAMMAR_H

#include "plinth/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One vocabulary entry (an array struct: items of plinth_grammar_vocab.tokens). */
typedef struct plinth_grammar_token {
  const char* bytes;  /* the raw bytes the token stands for in generated text (not NUL-terminated;
                         byte-level BPE already decoded: "Ġthe" is " the"); special tokens: their
                         text */
  uint32_t num_bytes; /* length of bytes */
  int32_t type;       /* GGUF tokenizer.ggml.token_type: 1 normal, 2 unknown, 3 control, 4 user
                         defined, 5 unused, 6 byte; control / unknown / unused tokens are never
                         allowed by a grammar except the stop ids */
} plinth_grammar_token;

/* The model's vocabulary as the grammar plugin sees it: plinth_create_args.vocab (ABI 1.4) for a
 * grammar plugin, NULL for every other kind. Host memory, valid only during create (copy what is
 * kept). */
typedef struct plinth_grammar_vocab {
  uint32_t struct_size;
  uint32_t vocab_size;                /* the logits row length; tokens has this many items */
  const plinth_grammar_token* tokens; /* [vocab_size] */
  const int32_t* stop_ids;            /* [num_stop_ids] EOS / end-of-turn ids: allowed exactly
                                         where the grammar can end, and they end it */
  uint32_t num_stop_ids;
} plinth_grammar_vocab;

/* What compile's spec is. */
typedef enum plinth_grammar_spec_kind {
  PLINTH_GRAMMAR_JSON_SCHEMA = 1,   /* a JSON Schema (the plugin's README names the keywords it
                                       enforces; any other is refused, naming its JSON pointer) */
  PLINTH_GRAMMAR_JSON_OBJECT = 2,   /* any JSON object (spec ignored; OpenAI's json_object) */
  PLINTH_GRAMMAR_REGEX = 3,         /* a regular expression the whole output must match */
  PLINTH_GRAMMAR_CHOICE = 4,        /* a JSON array of strings: the output is exactly one of them */
  PLINTH_GRAMMAR_EBNF = 5,          /* an EBNF / GBNF grammar whose start rule is `root` */
  PLINTH_GRAMMAR_STRUCTURAL_TAG = 6 /* XGrammar's structural tag JSON ({"type": "structural_tag",
                                       "format": ...}: free text, tags, triggers; tool calls in
                                       a chat template's own format); its JSON Schemas are held to
                                       the same subset. A plugin without it answers UNSUPPORTED */
} plinth_grammar_spec_kind;

/* Whitespace policy of JSON outputs. */
typedef enum plinth_grammar_whitespace {
  PLINTH_GRAMMAR_WS_BOUNDED = 0, /* any JSON whitespace between tokens, each run at most
                                    max_whitespace bytes (no endless runs to max_tokens) */
  PLINTH_GRAMMAR_WS_COMPACT = 1  /* no whitespace: {"a":1,"b":[2,3]} */
} plinth_grammar_whitespace;

/* Options of compile; a caller-owned in-struct. */
typedef struct plinth_grammar_options {
  uint32_t struct_size;
  int32_t whitespace;      /* a plinth_grammar_whitespace */
  uint32_t max_whitespace; /* BOUNDED: the longest whitespace run, bytes (>= 1) */
  int32_t strict;          /* JSON Schema: non-zero treats an absent additionalProperties as
                              false (OpenAI's strict: true); zero as the schema default (true) */
  uint32_t max_spec_bytes; /* refuse a spec longer than this (0 = the plugin's own limit) */
} plinth_grammar_options;

/* A compiled constraint and a matcher over it: opaque, owned by the plugin. */
typedef struct plinth_grammar plinth_grammar;
typedef struct plinth_grammar_matcher plinth_grammar_matcher;

typedef struct plinth_grammar_stats {
  uint32_t struct_size;
  uint64_t num_compiles;   /* compile calls that compiled (cache misses) */
  uint64_t num_cache_hits; /* compile calls answered from the plugin's cache */
  uint64_t num_refused;    /* compile calls refused (bad or unsupported spec) */
} plinth_grammar_stats;

typedef struct plinth_grammar_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->vocab (required: INVALID_ARGUMENT without) */

  /* Required; any thread. Compiles `spec` ([spec_len] bytes, UTF-8) of `kind` into *out (set only
   * on success; release with release_grammar). The plugin may cache: equal (kind, spec, options)
   * may return the same object, reference-counted. Errors: INVALID_ARGUMENT for a malformed spec,
   * an unsupported keyword or construct (the message names it and, for a JSON Schema, its JSON
   * pointer, e.g. "/properties/a/multipleOf"), an unsatisfiable or over-deep one; UNSUPPORTED
   * for an unknown kind. */
  int32_t (*compile)(plinth_instance* inst, int32_t kind, const char* spec, size_t spec_len,
                     const plinth_grammar_options* options, plinth_grammar** out,
                     plinth_error* err);
  /* Required; any thread. Drops the caller's reference. NULL is ignored. */
  void (*release_grammar)(plinth_instance* inst, plinth_grammar* grammar);

  /* Required. A matcher at the start of `grammar` (which it keeps alive) into *out. */
  int32_t (*matcher_create)(plinth_instance* inst, plinth_grammar* grammar,
                            plinth_grammar_matcher** out, plinth_error* err);
  /* Required. NULL is ignored. */
  void (*matcher_destroy)(plinth_instance* inst, plinth_grammar_matcher* m);

  /* Required. For each i < num: row i of `bitmask` (words_per_row uint32 words, bit t % 32 of word
   * t / 32 set = token t allowed; words_per_row >= ceil(vocab_size / 32)) gets the tokens that
   * may follow matchers[i]'s current state. A terminated matcher gets an all-zero row. */
  int32_t (*fill_bitmask)(plinth_instance* inst, plinth_grammar_matcher* const* matchers,
                          uint32_t num, uint32_t* bitmask, uint32_t words_per_row,
                          plinth_error* err);
  /* Required. Advances m over `token`: *out_accepted = 1, or 0 (state unchanged) when the grammar
   * refuses it. A stop id where the grammar can end is accepted and terminates the matcher. */
  int32_t (*accept)(plinth_instance* inst, plinth_grammar_matcher* m, int32_t token,
                    int32_t* out_accepted, plinth_error* err);
  /* Required. Undoes the last `num_tokens` accepted tokens (at most those accepted since create,
   * and at most 16 deep: the speculation window); INVALID_ARGUMENT beyond. */
  int32_t (*rollback)(plinth_instance* inst, plinth_grammar_matcher* m, uint32_t num_tokens,
                      plinth_error* err);
  /* Required. Non-zero when the text so far is a complete match (a stop id would be accepted). */
  int32_t (*can_end)(plinth_instance* inst, plinth_grammar_matcher* m);
  /* Required. Non-zero once a stop id was accepted (nothing more may follow). */
  int32_t (*is_terminated)(plinth_instance* inst, plinth_grammar_matcher* m);
  /* Optional. The bytes every continuation must start with from m's state (`{"name": "` after an
   * object's start): up to `capacity` bytes into buf, their count into *out_len (0: nothing is
   * forced). */
  int32_t (*forced_bytes)(plinth_instance* inst, plinth_grammar_matcher* m, char* buf,
                          size_t capacity, size_t* out_len, plinth_error* err);
  /* Required. */
  int32_t (*get_stats)(plinth_instance* inst, plinth_grammar_stats* out, plinth_error* err);
} plinth_grammar_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_GRAMMAR_H */
