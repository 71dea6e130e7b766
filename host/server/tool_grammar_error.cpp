// The 400 for a tool-call grammar the plugin refused (apart from tool_envelope.cpp, which the
// parser and its fuzz target link without the engine).
#include "server/tool_envelope.hpp"

namespace plinth::server {

ApiError tool_grammar_error(const GrammarCompiler& compiler, const ToolRequest& r,
                            const std::string& message) {
  if (!compiler.available()) {
    return ApiError::invalid("tools",
                             "tools: tool calling is not supported by this pipeline: it has no "
                             "grammar plugin; use a manifest with one "
                             "(manifests/cpu_structured.json)");
  }
  for (size_t i = 0; i < r.tools.size(); ++i) {
    try {
      compiler.compile(parameters_grammar(r.tools[i]));
    } catch (const GrammarSpecError& e) {
      const std::string at = "tools[" + std::to_string(i) + "].function.parameters";
      return ApiError::invalid(at, at + ": the schema was refused: " + e.what());
    }
  }
  if (!r.response_schema.is_null()) {
    GrammarSpec g;
    g.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
    g.spec = r.response_schema.dump();
    try {
      compiler.compile(g);
    } catch (const GrammarSpecError& e) {
      const std::string at = "response_format.json_schema.schema";
      return ApiError::invalid(at, at + ": the schema was refused: " + e.what());
    }
  }
  return ApiError::invalid("tools", "the tool-call constraint was refused: " + message);
}

}  // namespace plinth::server
