#pragma once
// Tool calling for chat templates that define none (SmolLM2's ChatML, ...): a JSON envelope the
// grammar plugin forces, as llama.cpp does for its generic templates. The model answers
//   {"tool_calls": [{"name": "<function>", "arguments": {<its parameters schema>}}, ...]}
// or, when tool_choice is "auto", either that or
//   {"response": "<text for the user>"}
// The tools are described in a system message (appended to the conversation's own system
// message, or put first), and the history's tool calls and tool results are rendered in the same
// envelope: an assistant turn that called tools as its envelope, a tool result as a user turn
// {"tool_response": {"name", "tool_call_id", "content"}}.
// Also the grammars of the families' own call formats (Hermes, Llama 3.x, Mistral Nemo), whose
// templates render the tools themselves (host/chat/templates/), and response_format beside tools.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.hpp"
#include "engine/grammar.hpp"
#include "server/api_error.hpp"
#include "server/tool_request.hpp"

namespace plinth::server {

/// The envelope's JSON Schema for `r` (r.calls_possible()): required → tool_calls with at least
/// one call; a named function → exactly one call of it; auto → tool_calls or response (a string,
/// or a value following r.response_schema when response_format is given beside tools); without
/// parallel_tool_calls at most one call. Each call's "arguments" is the function's parameters
/// schema (local $refs rewritten to stay inside it; strict functions closed: every object schema
/// without additionalProperties gets false, as OpenAI's strict mode reads it). Compiled
/// non-strict; members in order (name, then arguments).
GrammarSpec envelope_grammar(const ToolRequest& r);

/// The grammar of calls in Hermes' format (Qwen2.5's template), as XGrammar's structural tag:
/// each call "<tool_call>\n{\"name\": \"<function>\", \"arguments\": <its parameters>}\n
/// </tool_call>"; auto: free text where "<tool_call>" starts a call (triggered tags), or with
/// r.response_schema a JSON reply following it or the calls; required / named: calls only, one
/// at least, "\n" between; without parallel_tool_calls (or named) one.
GrammarSpec hermes_grammar(const ToolRequest& r);

/// The grammar of calls in Llama 3.x's format (its templates' custom tools): the reply is one call
/// "{\"name\": \"<function>\", \"parameters\": <its parameters>}"; auto: free text until
/// "{\"name\": \"" starts the call; required / named: the call only. One call at most: the
/// templates take one call per assistant turn.
GrammarSpec llama3_grammar(const ToolRequest& r);

/// The grammar of calls in Mistral Nemo's format, after the "[TOOL_CALLS]" control token (no
/// grammar lets a control token through): the JSON list [{"name": "<function>", "arguments":
/// <its parameters>, "id": "<9 letters and digits>"}, ...], one call at least, one at most
/// without parallel_tool_calls or with a named function. required / named: the prompt ends with
/// [TOOL_CALLS]; auto: the model samples it, and it arms this grammar (ApiRequest::
/// grammar_trigger).
GrammarSpec mistral_nemo_grammar(const ToolRequest& r);

/// The grammar of `r`'s calls in r.format (envelope_grammar, hermes_grammar, llama3_grammar,
/// mistral_nemo_grammar).
/// With r.response_schema (response_format beside tools, auto): a reply without calls follows
/// the schema (the envelope's "response" member; Hermes: the JSON reply instead of free text;
/// Llama 3.x: refused by the request parser).
GrammarSpec tool_call_grammar(const ToolRequest& r);

/// The JSON Schema of a response_format constraint (`g`: PLINTH_GRAMMAR_JSON_SCHEMA, its strict
/// applied, or PLINTH_GRAMMAR_JSON_OBJECT: {"type": "object"}), to embed in a tool grammar.
nlohmann::ordered_json response_schema_of(const GrammarSpec& g);

/// One function's parameters as the envelope embeds them (strict applied), compiled alone to
/// name the function whose schema the grammar plugin refuses.
GrammarSpec parameters_grammar(const ToolFunction& f);

/// The 400 for an envelope the grammar plugin refused with `message`: it names
/// tools[i].function.parameters (and the plugin's JSON pointer inside it) of the first function
/// whose parameters the plugin refuses alone, else response_format.json_schema.schema when the
/// response schema (ToolRequest::response_schema) is refused alone, else "tools" with `message`.
ApiError tool_grammar_error(const GrammarCompiler& compiler, const ToolRequest& r,
                            const std::string& message);

/// The system prompt text that describes `r`'s tools and the envelope.
std::string envelope_system_prompt(const ToolRequest& r);

/// `messages` with tool calls and tool results rendered as envelope text (tool turns become user
/// turns; consecutive tool results share one), and, when `r` allows calls, the envelope's system
/// prompt appended to the first system message (or put first).
std::vector<ChatMessage> envelope_messages(std::vector<ChatMessage> messages, const ToolRequest* r);

}  // namespace plinth::server
