// plinth generate: runs prompts through the pipeline of a manifest and prints the completions.
//   plinth generate --manifest manifests/cpu.json --prompt "Hello" [--chat] [--max-tokens N] ...
//   plinth generate ... --chat --chat-template llama3   (a family name or a Jinja template file)
//   plinth generate --manifest manifests/cpu.json --prompts-file in.jsonl --output out.jsonl
// One prompt streams its completion to stdout as it is generated; a prompts file runs every line
// as one continuous batch and writes one JSON line per prompt. Figures (prompt and generated
// tokens, TTFT, TPOT, tokens/s) go to stderr after each run. Bad input exits with code 2.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "cli/chat_template_option.hpp"
#include "cli/commands.hpp"
#include "cli/generate_report.hpp"
#include "model/gguf.hpp"

namespace plinth::cli {

namespace {

struct GenerateOptions {
  std::string manifest, model, prompt, prompts_file, output, system, chat_template;
  bool chat = false;
  int32_t max_tokens = 128;
  uint32_t max_model_len = 0;
  float temperature = 0.0f, top_p = 1.0f, min_p = 0.0f, repetition_penalty = 1.0f;
  float presence_penalty = 0.0f, frequency_penalty = 0.0f;
  int32_t top_k = 0;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool ignore_eos = false;
};

// A prompt as text or chat messages, plus per-line overrides of the sampling parameters.
struct PromptSpec {
  std::string text;
  std::vector<ChatMessage> messages;
  bool chat = false;
  SamplingParams params;
  bool speculative = true;  // the line's "speculative" (false: no drafts for it)
};

SamplingParams params_from(const GenerateOptions& o, const EngineHost& host) {
  SamplingParams p;
  p.max_tokens = o.max_tokens;
  p.temperature = o.temperature;
  p.top_p = o.top_p;
  p.top_k = o.top_k;
  p.min_p = o.min_p;
  p.repetition_penalty = o.repetition_penalty;
  p.presence_penalty = o.presence_penalty;
  p.frequency_penalty = o.frequency_penalty;
  p.seed = o.seed;
  p.stop = o.stop;
  p.ignore_eos = o.ignore_eos;
  p.stop_token_ids = host.stop_token_ids();
  return p;
}

// One JSON line of --prompts-file: {"prompt": "..."} or {"messages": [...]}, optional
// "max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "speculative" (false opts the
// prompt out of speculative decoding).
PromptSpec parse_prompt_line(const std::string& line, size_t lineno, const GenerateOptions& o,
                             const SamplingParams& defaults) {
  auto where = o.prompts_file + ":" + std::to_string(lineno) + ": ";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // parse_error; out_of_range for 1E400
    throw std::invalid_argument(where + "not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw std::invalid_argument(where + "each line must be a JSON object");
  PromptSpec spec;
  spec.params = defaults;
  spec.chat = o.chat;
  try {
    for (auto& [key, value] : j.items()) {
      if (key == "prompt") {
        spec.text = value.get<std::string>();
      } else if (key == "messages") {
        spec.chat = true;
        for (const auto& m : value) {
          spec.messages.push_back(
              {m.at("role").get<std::string>(), m.at("content").get<std::string>()});
        }
      } else if (key == "max_tokens") {
        spec.params.max_tokens = value.get<int32_t>();
      } else if (key == "temperature") {
        spec.params.temperature = value.get<float>();
      } else if (key == "top_p") {
        spec.params.top_p = value.get<float>();
      } else if (key == "top_k") {
        spec.params.top_k = value.get<int32_t>();
      } else if (key == "seed") {
        spec.params.seed = value.get<uint64_t>();
      } else if (key == "stop") {
        spec.params.stop = value.is_string() ? std::vector<std::string>{value.get<std::string>()}
                                             : value.get<std::vector<std::string>>();
      } else if (key == "speculative") {
        spec.speculative = value.get<bool>();
      } else {
        throw std::invalid_argument("unknown key \"" + key +
                                    "\" (allowed: prompt, messages, max_tokens, temperature, "
                                    "top_p, top_k, seed, stop, speculative)");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(where + "wrong type: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + e.what());
  }
  if (spec.text.empty() && spec.messages.empty()) {
    throw std::invalid_argument(where + "needs \"prompt\" or \"messages\"");
  }
  return spec;
}

std::vector<int32_t> encode(const EngineHost& host, const PromptSpec& spec,
                            const std::string& system) {
  if (!spec.chat) return host.encode(spec.text);
  std::vector<ChatMessage> messages = spec.messages;
  if (messages.empty()) {
    if (!system.empty()) messages.push_back({"system", system});
    messages.push_back({"user", spec.text});
  }
  return host.encode_chat(messages);
}

void run(const GenerateOptions& o) {
  if (o.prompt.empty() == o.prompts_file.empty()) {
    throw std::invalid_argument("give exactly one of --prompt TEXT or --prompts-file FILE.jsonl");
  }
  HostContext context(make_logger());
  EngineHost::Options ho;
  ho.manifest = o.manifest;
  if (!o.model.empty()) ho.model = o.model;
  ho.max_model_len = o.max_model_len;
  ho.chat_template = o.chat_template;
  std::unique_ptr<EngineHost> host = EngineHost::load(ho, context);
  SamplingParams defaults = params_from(o, *host);
  validate(defaults);

  std::vector<PromptSpec> specs;
  if (!o.prompt.empty()) {
    PromptSpec s;
    s.text = o.prompt;
    s.chat = o.chat;
    s.params = defaults;
    specs.push_back(std::move(s));
  } else {
    std::ifstream in(o.prompts_file);
    if (!in) throw std::invalid_argument("--prompts-file: cannot open " + o.prompts_file);
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      specs.push_back(parse_prompt_line(line, n, o, defaults));
    }
    if (specs.empty())
      throw std::invalid_argument("--prompts-file: " + o.prompts_file + " holds no prompt");
  }

  Engine& engine = host->engine();
  std::vector<uint64_t> ids;
  for (const PromptSpec& s : specs) {
    GenerationRequest r;
    r.prompt = encode(*host, s, o.system);
    r.params = s.params;
    r.speculative = s.speculative;
    ids.push_back(engine.add_request(std::move(r)));
  }
  const bool stream = specs.size() == 1 && o.output.empty();
  RunClock clock;
  while (engine.has_unfinished()) {
    for (const RequestOutput& out : engine.step()) {
      if (stream && !out.text_delta.empty()) {
        std::fwrite(out.text_delta.data(), 1, out.text_delta.size(), stdout);
        std::fflush(stdout);
      }
    }
  }
  clock.stop();
  if (stream) std::fputs("\n", stdout);

  if (!stream) {
    std::ofstream file;
    if (!o.output.empty()) {
      file.open(o.output);
      if (!file) throw std::invalid_argument("--output: cannot write " + o.output);
    }
    std::ostream& os = o.output.empty() ? std::cout : file;
    for (size_t i = 0; i < ids.size(); ++i) {
      os << result_json(i, *engine.find(ids[i])).dump() << "\n";
    }
  }
  // The text on stdout ends before the figures on stderr, also when both go to one pipe.
  std::cout.flush();
  std::fflush(stdout);
  print_summary(stderr, engine, ids, clock);
  // A request a plugin failed (a broken contract) fails the run, after the others.
  for (uint64_t id : ids) {
    if (const std::string& why = engine.find(id)->error(); !why.empty()) {
      throw std::runtime_error("request " + std::to_string(id) + " failed: " + why);
    }
  }
}

}  // namespace

void register_generate(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate completions for prompts");
  cmd->add_option("--manifest", opts->manifest, "Pipeline manifest (e.g. manifests/cpu.json)")
      ->required();
  cmd->add_option("--model", opts->model, "GGUF model file (overrides the manifest's model)");
  cmd->add_option("--prompt", opts->prompt, "Prompt text");
  cmd->add_option(
      "--prompts-file", opts->prompts_file,
      "JSONL file: one {\"prompt\": ...} or {\"messages\": [...]} per line, run as one batch");
  cmd->add_option("--output", opts->output, "Write one JSON line per prompt here (default stdout)");
  cmd->add_flag("--chat", opts->chat, "Apply the model's chat template to the prompt");
  cmd->add_option("--system", opts->system, "System message with --chat");
  add_chat_template_option(cmd, opts->chat_template);
  cmd->add_option(
         "--max-model-len", opts->max_model_len,
         "prompt + generated tokens per sequence at most (0 = the model's context length); the "
         "KV pool must hold one such sequence")
      ->capture_default_str();
  cmd->add_option("--max-tokens", opts->max_tokens, "Tokens to generate at most (>= 1)")
      ->capture_default_str();
  cmd->add_option("--temperature", opts->temperature, "0 = greedy")->capture_default_str();
  cmd->add_option("--top-p", opts->top_p, "Nucleus sampling mass (0, 1]")->capture_default_str();
  cmd->add_option("--top-k", opts->top_k, "Keep the k most likely tokens (0 = off)")
      ->capture_default_str();
  cmd->add_option("--min-p", opts->min_p, "Drop tokens below min_p x the top probability")
      ->capture_default_str();
  cmd->add_option("--repetition-penalty", opts->repetition_penalty)->capture_default_str();
  cmd->add_option("--presence-penalty", opts->presence_penalty)->capture_default_str();
  cmd->add_option("--frequency-penalty", opts->frequency_penalty)->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Seed for reproducible sampling");
  cmd->add_option("--stop", opts->stop, "Stop string (repeatable); not included in the output");
  cmd->add_flag("--ignore-eos", opts->ignore_eos, "Keep generating past end-of-sequence tokens");
  cmd->callback([opts] {
    try {
      run(*opts);
    } catch (const GgufError& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    }
  });
}

}  // namespace plinth::cli
