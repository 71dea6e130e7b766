# The fuzz targets and what they link, shared by the libFuzzer build (tests/fuzz/CMakeLists.txt,
# PLINTH_FUZZ=ON) and the replay test of the ordinary build (tests/host/fuzz_replay).
set(PLINTH_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
# One tests/fuzz/<target>.cpp each; corpus/<target>/ and regressions/<target>/ by the same name.
set(PLINTH_FUZZ_TARGETS gguf manifest json_schema request_body http_request tokenizer chat_template
                        stop_strings)
# Shared by every target: helpers, the body parser used by request_body and http_request (compiled
# here, so that no target links the engine).
set(PLINTH_FUZZ_SUPPORT_SOURCES ${PLINTH_FUZZ_DIR}/fuzz_support.cpp
                                ${PLINTH_FUZZ_DIR}/request_body.cpp
                                ${PROJECT_SOURCE_DIR}/host/server/request_parser.cpp
                                ${PROJECT_SOURCE_DIR}/host/server/structured_output.cpp
                                ${PROJECT_SOURCE_DIR}/host/server/tool_request.cpp
                                ${PROJECT_SOURCE_DIR}/host/server/tool_envelope.cpp)
set(PLINTH_FUZZ_LIBS plinth_runtime plinth_tokenizer plinth_chat plinth_sampling plinth_model
                     nlohmann_json::nlohmann_json Boost::headers)
# The grammar plugin's engine (tests/fuzz/grammar.cpp): only where its target exists (XGrammar's
# source fetched by tools/fetch_xgrammar), linking it.
set(PLINTH_FUZZ_GRAMMAR_TARGET grammar)
set(PLINTH_FUZZ_GRAMMAR_LIB plinth_grammar_xgrammar_core)
# The slow JSON Schema reference matcher that fuzz_grammar compares the masks with.
set(PLINTH_FUZZ_GRAMMAR_REFERENCE_DIR ${PROJECT_SOURCE_DIR}/tests/plugins/grammar_xgrammar)
set(PLINTH_FUZZ_GRAMMAR_REFERENCE ${PLINTH_FUZZ_GRAMMAR_REFERENCE_DIR}/reference_json.cpp
                                  ${PLINTH_FUZZ_GRAMMAR_REFERENCE_DIR}/reference_regex.cpp)
