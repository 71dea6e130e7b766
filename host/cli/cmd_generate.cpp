// plinth generate: runs prompts through the pipeline of a manifest and prints the completions.
//   plinth generate --manifest manifests/cpu.json --prompt "Hello" [--chat] [--max-tokens N] ...
//   plinth generate ... --chat --chat-template llama3   (a family name or a Jinja template file)
//   plinth generate --manifest manifests/cpu.json --prompts-file in.jsonl --output out.jsonl
// One prompt streams its completion to stdout as it is generated; a prompts file (plinth lines or
// OpenAI batch lines, cli/batch_input.hpp) runs every line as one continuous batch and writes one
// JSON line per request as soon as it finishes (cli/batch_output.hpp), with a progress line on a
// terminal's stderr. Figures (prompt and generated tokens, TTFT, TPOT, tokens/s) go to stderr
// after each run. Bad input exits with code 2.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "cli/batch_input.hpp"
#include "cli/batch_output.hpp"
#include "cli/chat_template_option.hpp"
#include "cli/commands.hpp"
#include "cli/generate_report.hpp"
#include "cli/progress_line.hpp"
#include "model/gguf.hpp"
#include "model/output_path.hpp"
#include "server/engine_requests.hpp"

namespace plinth::cli {

namespace {

struct GenerateOptions {
  std::string manifest, model, output, system, chat_template;
  // Unset when not given: `--prompt ""` is an empty prompt, not a missing one.
  std::optional<std::string> prompt, prompts_file;
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

// The command line's sampling options, checked once before any line (messages name the option).
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

// The keys a prompts-file line starts from: the sampling options of the command line. For a
// --prompt every key is an option's, and its errors name the option (--max-tokens).
LineDefaults line_defaults(const GenerateOptions& o) {
  LineDefaults d;
  d.chat = o.chat;
  d.system = o.system;
  nlohmann::json& b = d.body;
  b = {{"max_tokens", o.max_tokens},
       {"temperature", o.temperature},
       {"top_p", o.top_p},
       {"top_k", o.top_k},
       {"min_p", o.min_p},
       {"repetition_penalty", o.repetition_penalty},
       {"presence_penalty", o.presence_penalty},
       {"frequency_penalty", o.frequency_penalty},
       {"ignore_eos", o.ignore_eos}};
  if (o.seed) b["seed"] = *o.seed;
  if (!o.stop.empty()) b["stop"] = o.stop;
  if (o.prompt) {
    for (const auto& [key, value] : b.items()) {
      std::string option = "--" + key;
      std::replace(option.begin(), option.end(), '_', '-');
      d.option_of_key[key] = option;
    }
  }
  return d;
}

std::vector<BatchItem> read_items(const GenerateOptions& o, const EngineHost& host) {
  const LineDefaults defaults = line_defaults(o);
  std::vector<BatchItem> items;
  if (o.prompt) {
    // Invalid UTF-8 is refused here, by the tokenizer's message: JSON cannot carry it.
    (void)host.encode(*o.prompt);
    const nlohmann::json line = {{"prompt", *o.prompt}};
    items.push_back(parse_batch_line(line.dump(), "--prompt: ", defaults, host));
    return items;
  }
  const std::string& path = *o.prompts_file;
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--prompts-file: cannot open \"" + path + "\"");
  std::string line;
  std::unordered_map<std::string, size_t> custom_ids;  // custom_id -> its line
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    items.push_back(parse_batch_line(line, where, defaults, host));
    items.back().index = items.size() - 1;
    check_unique_custom_id(items.back(), n, custom_ids);
  }
  if (items.empty()) throw std::invalid_argument("--prompts-file: " + path + " holds no prompt");
  return items;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::unique_ptr<EngineHost> load_host(const GenerateOptions& o, HostContext& context) {
  EngineHost::Options ho;
  ho.manifest = o.manifest;
  if (!o.model.empty()) ho.model = o.model;
  ho.max_model_len = o.max_model_len;
  ho.chat_template = o.chat_template;
  return EngineHost::load(ho, context);
}

// The engine requests of the items (an item asking for n choices has n of them).
struct Submitted {
  std::vector<uint64_t> ids;                     // every request, in item order
  std::vector<std::vector<uint64_t>> item_ids;   // [item] its requests
  std::unordered_map<uint64_t, size_t> item_of;  // engine id → item
  std::vector<size_t> unfinished;                // [item] its requests not finished yet
};

Submitted submit(Engine& engine, const std::vector<BatchItem>& items) {
  Submitted s;
  s.item_ids.resize(items.size());
  s.unfinished.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    for (GenerationRequest& r : server::engine_requests(items[i].api)) {
      r.grammar = items[i].grammar;
      uint64_t id = 0;
      try {  // a request the engine refuses (e.g. one that can never fit the KV pool)
        id = engine.add_request(std::move(r));
      } catch (const std::invalid_argument& e) {  // stops the run before it starts
        throw std::invalid_argument(items[i].where + e.what());
      }
      s.ids.push_back(id);
      s.item_ids[i].push_back(id);
      s.item_of[id] = i;
    }
    s.unfinished[i] = s.item_ids[i].size();
  }
  return s;
}

[[noreturn]] void throw_write_error(const std::string& sink, int err) {
  throw std::runtime_error(
      "cannot write the results to " + sink + ": " +
      (err != 0 ? std::generic_category().message(err) : std::string("write failed")) +
      "; results from here on are lost");
}

// Takes each step's outputs: streams the text of a single prompt to stdout, or writes an item's
// JSON line to `os` as soon as its last choice finishes.
class OutputWriter {
 public:
  /// `sink`: where `os` writes, for errors ("--output FILE" or "stdout").
  OutputWriter(EngineHost& host, const std::vector<BatchItem>& items, Submitted& submitted,
               std::ostream& os, std::string sink, bool stream)
      : host_(host),
        items_(items),
        sub_(submitted),
        os_(os),
        sink_(std::move(sink)),
        stream_(stream) {}

  void take(const RequestOutput& out) {
    generated_ += out.new_token_ids.size();
    if (stream_ && !out.text_delta.empty()) {
      std::fwrite(out.text_delta.data(), 1, out.text_delta.size(), stdout);
      std::fflush(stdout);
    }
    if (stream_ || !out.finished) return;
    const size_t i = sub_.item_of.at(out.request_id);
    if (--sub_.unfinished[i] == 0) write_line(i);
  }
  size_t done() const { return done_; }              // items written
  uint64_t generated() const { return generated_; }  // tokens generated so far

 private:
  // The item's line goes out flushed: a run killed midway keeps every finished line whole.
  void write_line(size_t i) {
    std::vector<const Sequence*> choices;
    for (uint64_t id : sub_.item_ids[i]) choices.push_back(host_.engine().find(id));
    const nlohmann::json line =
        items_[i].openai ? openai_result_line(items_[i], choices, host_.tokenizer(), created_)
                         : plain_result_line(items_[i], choices, host_.tokenizer());
    errno = 0;
    os_ << line.dump() << '\n';
    os_.flush();
    // A lost result line (disk full, file size limit) ends the run with an error, at once.
    if (!os_) throw_write_error(sink_, errno);
    ++done_;
  }

  EngineHost& host_;
  const std::vector<BatchItem>& items_;
  Submitted& sub_;
  std::ostream& os_;
  const std::string sink_;
  const bool stream_;
  const int64_t created_ = unix_now();
  size_t done_ = 0;
  uint64_t generated_ = 0;
};

// Lines that failed while running (a plugin broke its contract on them, or their own sampling
// parameter drove their logits non-finite) fail the run once every line is written: exit 1,
// naming how many and the first. Their result lines carry the error.
void throw_if_lines_failed(const Engine& engine, const std::vector<BatchItem>& items,
                           const Submitted& submitted) {
  size_t failed = 0;
  std::string first;
  for (size_t i = 0; i < items.size(); ++i) {
    for (uint64_t id : submitted.item_ids[i]) {
      const Sequence& seq = *engine.find(id);
      if (seq.error().empty()) continue;
      if (failed++ == 0) {
        first = items[i].where +
                (items[i].custom_id.empty() ? "" : "(custom_id \"" + items[i].custom_id + "\") ") +
                (seq.error_param().empty() ? "" : "key \"" + seq.error_param() + "\": ") +
                seq.error();
      }
      break;
    }
  }
  if (failed > 0) {
    throw std::runtime_error(std::to_string(failed) + " of " + std::to_string(items.size()) +
                             " lines failed (their result lines carry the error; the others "
                             "were answered); the first: " +
                             first);
  }
}

void run(const GenerateOptions& o) {
  if (o.prompt.has_value() == o.prompts_file.has_value()) {
    throw std::invalid_argument("give exactly one of --prompt TEXT or --prompts-file FILE.jsonl");
  }
  if (o.prompt && o.prompt->empty()) {
    throw std::invalid_argument("--prompt: the prompt is empty; give the text to complete");
  }
  // Before the model loads: a FIFO, a device or a directory is never opened as the output.
  if (const std::string kind = non_regular_output(o.output); !o.output.empty() && !kind.empty()) {
    throw std::invalid_argument("--output: " + non_regular_output_message(o.output, kind) +
                                " (without --output the results go to stdout)");
  }
  HostContext context(make_logger());
  std::unique_ptr<EngineHost> host = load_host(o, context);
  validate(params_from(o, *host));

  // Every line is checked before anything runs: a bad line 900 fails at once, not in an hour.
  const std::vector<BatchItem> items = read_items(o, *host);

  std::ofstream file;
  if (!o.output.empty()) {
    errno = 0;
    file.open(o.output);
    if (!file) {
      throw std::invalid_argument(
          "--output: cannot write " + o.output +
          (errno != 0 ? ": " + std::generic_category().message(errno) : std::string()));
    }
  }
  std::ostream& os = o.output.empty() ? std::cout : file;
  const std::string sink = o.output.empty() ? "stdout" : "--output " + o.output;

  Engine& engine = host->engine();
  Submitted submitted = submit(engine, items);
  const bool stream = o.prompt.has_value() && o.output.empty() && submitted.ids.size() == 1;
  // Not when the result lines go to the same terminal: the \r redraws would cut into them.
  const bool show_progress = !stream && ProgressLine::is_terminal(stderr) &&
                             (!o.output.empty() || !ProgressLine::is_terminal(stdout));
  ProgressLine progress(stderr, items.size(), show_progress);
  OutputWriter writer(*host, items, submitted, os, sink, stream);
  RunClock clock;
  while (engine.has_unfinished()) {
    for (const RequestOutput& out : engine.step()) writer.take(out);
    progress.update(writer.done(), writer.generated());
  }
  clock.stop();
  progress.finish(writer.done(), writer.generated());
  if (stream) std::fputs("\n", stdout);
  // The text on stdout ends before the figures on stderr, also when both go to one pipe.
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
    throw_write_error("stdout", errno);
  }
  if (file.is_open()) {
    errno = 0;
    file.close();
    if (file.fail()) throw_write_error(sink, errno);
  }
  print_summary(stderr, engine, submitted.ids, clock);
  throw_if_lines_failed(engine, items, submitted);
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
      "JSONL file, run as one batch: one {\"prompt\": ...} or {\"messages\": [...]} per line "
      "(plus any sampling key of the server and \"custom_id\"), or OpenAI batch lines "
      "{\"custom_id\", \"method\", \"url\", \"body\"}");
  cmd->add_option("--output", opts->output,
                  "Write one JSON line per request here as each finishes (default stdout)");
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
