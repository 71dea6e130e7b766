// `plinth generate --prompts-file` as a batch job: each line's result is written (and flushed) as
// soon as it finishes, custom_id passes through, every sampling key of a line is applied, a bad
// value names its line and key, OpenAI batch files round-trip into OpenAI's output shape, and the
// progress line is drawn on a terminal only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = PLINTH_SOURCE_DIR;
const fs::path kPlinth = fs::path(PLINTH_BUILD_DIR) / "plinth";
const fs::path kModel = kSource / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
const fs::path kManifest = kSource / "manifests/cpu.json";

using plinth::test::CliRun;
using plinth::test::run_plinth;
const auto& quote = plinth::test::shell_quote;

// `plinth generate --manifest manifests/cpu.json ARGS`, stdout and stderr together (a pipe).
CliRun run(const std::string& args) {
  return run_plinth("generate --manifest " + quote(kManifest.string()) + " " + args);
}

std::vector<json> read_lines(const fs::path& file) {
  std::vector<json> lines;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  return lines;
}

class CliBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
    dir_ = fs::temp_directory_path() /
           ("plinth_cli_batch_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Writes `lines` to in.jsonl and runs it into out.jsonl.
  CliRun run_file(const std::vector<std::string>& lines, const std::string& extra = "") {
    std::ofstream f(in());
    for (const auto& l : lines) f << l << "\n";
    f.close();
    return run("--prompts-file " + quote(in().string()) + " --output " + quote(out().string()) +
               " " + extra);
  }
  fs::path in() const { return dir_ / "in.jsonl"; }
  fs::path out() const { return dir_ / "out.jsonl"; }
  fs::path dir_;
};

// The short request's line is on disk, whole, while the long one still runs: killing the run then
// keeps it.
TEST_F(CliBatch, EachResultIsWrittenWhenItFinishesAndSurvivesAKill) {
  std::ofstream(in())
      << R"({"custom_id": "long", "prompt": "Count: 1, 2, 3,", "max_tokens": 256, "ignore_eos": true})"
         "\n"
      << R"({"custom_id": "short", "prompt": "Hi", "max_tokens": 2})"
         "\n";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(kPlinth.c_str(), "plinth", "generate", "--manifest", kManifest.c_str(), "--prompts-file",
          in().c_str(), "--output", out().c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the first whole line (or the end of the run), then kill.
  std::string text;
  bool exited = false;
  int status = 0;
  for (int i = 0; i < 6000 && text.find('\n') == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream f(out());
    text.assign(std::istreambuf_iterator<char>(f), {});
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      std::ifstream g(out());
      text.assign(std::istreambuf_iterator<char>(g), {});
      break;
    }
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  ASSERT_NE(text.find('\n'), std::string::npos) << "no line written; exit status " << status;
  const json first = json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(first.at("custom_id"), "short");
  EXPECT_EQ(first.at("index"), 1);
  EXPECT_EQ(first.at("generated_tokens"), 2);
  if (!exited) {
    // Killed while the long request ran: only the short line, and nothing half-written.
    EXPECT_EQ(text.size(), text.find('\n') + 1) << text;
  }
}

TEST_F(CliBatch, CustomIdPassesThroughAndLinesAreMatchedByIt) {
  CliRun r = run_file(
      {R"({"custom_id": "req-a", "prompt": "The capital of France is", "max_tokens": 4})",
       R"({"prompt": "Hi", "max_tokens": 2})",
       R"({"custom_id": "req-c", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3})"});
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<int, json> by_index;
  for (const json& j : read_lines(out())) by_index[j.at("index").get<int>()] = j;
  ASSERT_EQ(by_index.size(), 3u);
  EXPECT_EQ(by_index[0].at("custom_id"), "req-a");
  EXPECT_FALSE(by_index[1].contains("custom_id"));
  EXPECT_EQ(by_index[2].at("custom_id"), "req-c");
  EXPECT_EQ(by_index[0].at("generated_tokens"), 4);
  EXPECT_EQ(by_index[2].at("generated_tokens"), 3);
}

// Each key changes the result the way it must, checked against an independent expectation:
// greedy decoding for top_k 1 / min_p 1 / a tiny top_p, the same seed giving the same text, a stop
// string cutting the greedy text just before it.
TEST_F(CliBatch, EverySamplingKeyOfALineIsApplied) {
  const std::string paris = R"("prompt": "The capital of France is")";
  const std::string rep = R"("prompt": "a a a a a a a a a a a a")";
  CliRun r = run_file({
      "{\"custom_id\": \"greedy\", " + paris + ", \"max_tokens\": 8}",
      "{\"custom_id\": \"max3\", " + paris + ", \"max_tokens\": 3}",
      "{\"custom_id\": \"stop\", " + paris + ", \"max_tokens\": 8, \"stop\": [\"Paris\"]}",
      "{\"custom_id\": \"seed_a\", " + paris +
          ", \"max_tokens\": 12, \"temperature\": 1.5, \"seed\": 7}",
      "{\"custom_id\": \"seed_b\", " + paris +
          ", \"max_tokens\": 12, \"temperature\": 1.5, \"seed\": 7}",
      "{\"custom_id\": \"top_k\", " + paris +
          ", \"max_tokens\": 8, \"temperature\": 1.5, \"seed\": 1, \"top_k\": 1}",
      "{\"custom_id\": \"min_p\", " + paris +
          ", \"max_tokens\": 8, \"temperature\": 1.5, \"seed\": 2, \"min_p\": 1.0}",
      "{\"custom_id\": \"top_p\", " + paris +
          ", \"max_tokens\": 8, \"temperature\": 1.5, \"seed\": 3, \"top_p\": 0.001}",
      "{\"custom_id\": \"rep_greedy\", " + rep + ", \"max_tokens\": 6}",
      "{\"custom_id\": \"presence\", " + rep + ", \"max_tokens\": 6, \"presence_penalty\": 2}",
      "{\"custom_id\": \"frequency\", " + rep + ", \"max_tokens\": 6, \"frequency_penalty\": 2}",
      "{\"custom_id\": \"repetition\", " + rep + ", \"max_tokens\": 6, \"repetition_penalty\": 5}",
      "{\"custom_id\": \"n2\", " + paris +
          ", \"max_tokens\": 4, \"n\": 2, \"temperature\": 1.5, \"seed\": 5}",
      "{\"custom_id\": \"logprobs\", " + paris + ", \"max_tokens\": 3, \"logprobs\": 2}",
      R"({"custom_id": "chat_lp", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "logprobs": true, "top_logprobs": 3})",
  });
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, json> by_id;
  for (const json& j : read_lines(out())) by_id[j.at("custom_id").get<std::string>()] = j;
  ASSERT_EQ(by_id.size(), 15u);
  const auto text = [&](const char* id) { return by_id.at(id).at("text").get<std::string>(); };

  const std::string greedy = text("greedy");
  ASSERT_NE(greedy.find("Paris"), std::string::npos) << greedy;
  EXPECT_EQ(by_id["max3"].at("generated_tokens"), 3);
  EXPECT_EQ(by_id["max3"].at("finish_reason"), "length");
  EXPECT_EQ(text("stop"), greedy.substr(0, greedy.find("Paris")));
  EXPECT_EQ(by_id["stop"].at("finish_reason"), "stop");
  EXPECT_EQ(text("seed_a"), text("seed_b"));
  EXPECT_EQ(text("top_k"), greedy);
  EXPECT_EQ(text("min_p"), greedy);
  EXPECT_EQ(text("top_p"), greedy);
  const std::string rep_greedy = text("rep_greedy");
  for (const char* id : {"presence", "frequency", "repetition"}) {
    EXPECT_NE(text(id), rep_greedy) << id << " left the greedy text unchanged";
  }
  const json& n2 = by_id["n2"];
  ASSERT_EQ(n2.at("choices").size(), 2u) << n2;
  EXPECT_EQ(n2.at("choices")[1].at("index"), 1);
  EXPECT_EQ(n2.at("choices")[0].at("generated_tokens"), 4);
  // Greedy: the sampled token is the most likely alternative, logprobs <= 0.
  for (const char* id : {"logprobs", "chat_lp"}) {
    const json& lp = by_id[id].at("logprobs");
    ASSERT_EQ(lp.size(), 3u) << id;
    for (const json& t : lp) {
      EXPECT_LE(t.at("logprob").get<double>(), 0.0);
      ASSERT_EQ(t.at("top_logprobs").size(), std::string(id) == "logprobs" ? 2u : 3u);
      EXPECT_EQ(t.at("top_logprobs")[0].at("token"), t.at("token"));
    }
  }
  EXPECT_FALSE(by_id["greedy"].contains("logprobs"));

  // stop_token_ids: the greedy run's third token ends it there (the id kept in token_ids).
  const json& ids = by_id["greedy"].at("token_ids");
  ASSERT_GE(ids.size(), 3u);
  r = run_file({"{\"custom_id\": \"stop_ids\", " + paris +
                ", \"max_tokens\": 8, \"stop_token_ids\": [" + ids[2].dump() + "]}"});
  ASSERT_EQ(r.code, 0) << r.out;
  const json stopped = read_lines(out()).at(0);
  EXPECT_EQ(stopped.at("finish_reason"), "stop") << stopped;
  EXPECT_EQ(stopped.at("token_ids"), json(std::vector<json>(ids.begin(), ids.begin() + 3)));
}

TEST_F(CliBatch, ABadValueNamesItsLineAndKey) {
  struct Case {
    std::string body, key;
  };
  const Case cases[] = {
      {R"("temperature": 5)", "temperature"},
      {R"("top_p": 0)", "top_p"},
      {R"("top_k": -2)", "top_k"},
      {R"("min_p": 2)", "min_p"},
      {R"("presence_penalty": 3)", "presence_penalty"},
      {R"("frequency_penalty": -3)", "frequency_penalty"},
      {R"("repetition_penalty": 0)", "repetition_penalty"},
      {R"("n": 0)", "n"},
      {R"("logprobs": 30)", "logprobs"},
      {R"("seed": "x")", "seed"},
      {R"("stop": 5)", "stop"},
      {R"("max_tokens": 0)", "max_tokens"},
      {R"("custom_id": 5)", "custom_id"},
      {R"("max_token": 5)", "max_token"},
      // written out by recursive code: 100,000 nested arrays overflowed the stack (exit 139)
      {"\"stop\": " + std::string(100000, '[') + std::string(100000, ']'), "stop"},
      {R"("response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": )" +
           std::string(100000, '[') + std::string(100000, ']') + "}}",
       "response_format"},
  };
  for (const Case& c : cases) {
    CliRun r =
        run_file({R"({"prompt": "Hi", "max_tokens": 2})", "{\"prompt\": \"Hi\", " + c.body + "}"});
    EXPECT_EQ(r.code, 2) << c.body << ":\n" << r.out;
    const std::string where = in().string() + ":2: ";
    EXPECT_NE(r.out.find(where), std::string::npos) << c.body << ": no line number in\n" << r.out;
    EXPECT_NE(r.out.find("\"" + c.key + "\""), std::string::npos)
        << c.body << ": key not named in\n"
        << r.out;
    EXPECT_FALSE(fs::exists(out()) && fs::file_size(out()) > 0) << "ran despite a bad line";
  }
}

// An OpenAI batch input file (https://platform.openai.com/docs/api-reference/batch/request-input)
// gives OpenAI's batch output lines, each body the object the server answers.
TEST_F(CliBatch, OpenAiBatchFileRoundTripsIntoTheOutputShape) {
  CliRun r = run_file({
      R"({"custom_id": "chat-1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "What is 2+2?"}], "max_tokens": 5, "temperature": 0}})",
      R"({"custom_id": "cmpl-1", "method": "POST", "url": "/v1/completions", "body": {"model": "whatever", "prompt": "The capital of France is", "max_tokens": 4, "temperature": 0, "logprobs": 1}})",
      R"({"custom_id": "best-of", "method": "POST", "url": "/v1/completions", "body": {"prompt": "The capital of France is", "max_tokens": 3, "echo": true, "best_of": 3, "n": 2, "temperature": 1, "seed": 4}})",
  });
  ASSERT_EQ(r.code, 0) << r.out;
  std::map<std::string, json> by_id;
  for (const json& j : read_lines(out())) by_id[j.at("custom_id").get<std::string>()] = j;
  ASSERT_EQ(by_id.size(), 3u);
  for (const auto& [id, line] : by_id) {
    EXPECT_TRUE(line.at("id").is_string()) << line;
    EXPECT_TRUE(line.at("error").is_null()) << line;
    const json& resp = line.at("response");
    EXPECT_EQ(resp.at("status_code"), 200) << line;
    EXPECT_TRUE(resp.at("request_id").is_string());
    const json& body = resp.at("body");
    EXPECT_TRUE(body.at("id").is_string());
    EXPECT_TRUE(body.at("created").is_number_integer());
    EXPECT_EQ(body.at("choices").size(), id == "best-of" ? 2u : 1u);
    EXPECT_EQ(body.at("usage").at("total_tokens"),
              body.at("usage").at("prompt_tokens").get<int>() +
                  body.at("usage").at("completion_tokens").get<int>());
  }
  // `model`: the id `plinth serve` answers with (the file's stem, as /v1/models says), not the
  // GGUF's general.name ("Smollm2 135M 8k Lc100K Mix1 Ep2"), nor the line's own "gpt-4o-mini".
  for (const auto& [id, line] : by_id) {
    EXPECT_EQ(line.at("response").at("body").at("model"), kModel.stem().string()) << line;
  }
  const json& chat = by_id["chat-1"].at("response").at("body");
  EXPECT_EQ(chat.at("object"), "chat.completion");
  EXPECT_EQ(chat.at("choices")[0].at("message").at("role"), "assistant");
  EXPECT_TRUE(chat.at("choices")[0].at("message").at("content").is_string());
  EXPECT_EQ(chat.at("usage").at("completion_tokens"), 5);
  const json& cmpl = by_id["cmpl-1"].at("response").at("body");
  EXPECT_EQ(cmpl.at("object"), "text_completion");
  EXPECT_EQ(cmpl.at("choices")[0].at("finish_reason"), "length");
  EXPECT_EQ(cmpl.at("usage").at("completion_tokens"), 4);
  EXPECT_EQ(cmpl.at("choices")[0].at("logprobs").at("tokens").size(), 4u) << cmpl;
  // best_of 3, n 2: two choices (the server's ranking), each echoing its prompt.
  const json& best = by_id["best-of"].at("response").at("body");
  ASSERT_EQ(best.at("choices").size(), 2u) << best;
  for (const json& c : best.at("choices")) {
    EXPECT_EQ(c.at("text").get<std::string>().rfind("The capital of France is", 0), 0u) << c;
  }

  // A line for another endpoint names its line and the key.
  CliRun bad = run_file(
      {R"({"custom_id": "e", "method": "POST", "url": "/v1/embeddings", "body": {"input": "x"}})"});
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find(in().string() + ":1: key \"url\""), std::string::npos) << bad.out;
  CliRun bad_body = run_file(
      {R"({"custom_id": "e", "method": "POST", "url": "/v1/completions", "body": {"prompt": "x", "temperature": 9}})"});
  EXPECT_EQ(bad_body.code, 2) << bad_body.out;
  EXPECT_NE(bad_body.out.find(":1: key \"temperature\""), std::string::npos) << bad_body.out;
}

// OpenAI's Batch API rules for custom_id: required in an OpenAI batch line (missing, null or empty
// is refused), a string, unique within the file (also among plinth lines that give one); each
// refused before anything runs, naming the line and, for a duplicate, the line it repeats.
TEST_F(CliBatch, CustomIdIsRequiredInOpenAiLinesAndUnique) {
  const std::string body =
      R"("method": "POST", "url": "/v1/completions", "body": {"prompt": "Hi", "max_tokens": 2}})";
  const std::string first = R"({"custom_id": "a", )" + body;
  struct Case {
    std::vector<std::string> lines;
    std::string message;
  };
  const Case cases[] = {
      {{first, "{" + body}, ":2: key \"custom_id\": missing"},
      {{first, R"({"custom_id": null, )" + body}, ":2: key \"custom_id\": null"},
      {{first, R"({"custom_id": "", )" + body}, ":2: key \"custom_id\": empty"},
      {{first, R"({"custom_id": 7, )" + body}, ":2: key \"custom_id\": expected a string"},
      {{first, R"({"prompt": "Hi"})", R"({"custom_id": "a", )" + body},
       ":3: key \"custom_id\": \"a\" is also the custom_id of line 1"},
      {{R"({"custom_id": "p", "prompt": "Hi"})", R"({"custom_id": "p", "prompt": "Ho"})"},
       ":2: key \"custom_id\": \"p\" is also the custom_id of line 1"},
  };
  for (const Case& c : cases) {
    CliRun r = run_file(c.lines);
    EXPECT_EQ(r.code, 2) << c.message << ":\n" << r.out;
    EXPECT_NE(r.out.find(in().string() + c.message), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out()) && fs::file_size(out()) > 0) << "ran despite a bad line";
  }
  // A plinth line may leave it out (its result line then has none).
  CliRun ok = run_file({first, R"({"prompt": "Hi", "max_tokens": 2})"});
  EXPECT_EQ(ok.code, 0) << ok.out;
}

// A line that fails on its own request parameters while running (a repetition_penalty that
// overflows a logit) is answered as the server answers the same body — status 400,
// invalid_request_error, param naming the field — while the other lines get their answers; the
// run then exits 1 naming how many lines failed and the first.
TEST_F(CliBatch, ALineFailingOnItsOwnParameterIsA400AndTheRestRuns) {
  CliRun r = run_file({
      R"({"custom_id": "ok", "method": "POST", "url": "/v1/completions", "body": {"prompt": "The capital of France is", "max_tokens": 4}})",
      R"({"custom_id": "bad", "method": "POST", "url": "/v1/completions", "body": {"prompt": "The capital of France is Paris. The capital of France is", "max_tokens": 4, "repetition_penalty": 1e-40}})",
  });
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("1 of 2 lines failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(in().string() + ":2: (custom_id \"bad\") key \"repetition_penalty\""),
            std::string::npos)
      << r.out;
  std::map<std::string, json> by_id;
  for (const json& j : read_lines(out())) by_id[j.at("custom_id").get<std::string>()] = j;
  ASSERT_EQ(by_id.size(), 2u) << r.out;
  EXPECT_EQ(by_id["ok"].at("response").at("status_code"), 200);
  const json& bad = by_id["bad"].at("response");
  EXPECT_EQ(bad.at("status_code"), 400) << bad;
  const json& error = bad.at("body").at("error");
  EXPECT_EQ(error.at("type"), "invalid_request_error") << error;
  EXPECT_EQ(error.at("param"), "repetition_penalty") << error;
  EXPECT_NE(error.at("message").get<std::string>().find("repetition_penalty"), std::string::npos);
}

// Runs `plinth ARGS` with stderr on a pseudo-terminal; returns what it wrote there.
std::string stderr_on_a_terminal(const std::string& args) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return "no pty";
  const std::string slave_name = ptsname(master);
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    int slave = open(slave_name.c_str(), O_RDWR);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(slave, 2);
    close(master);
    execl("/bin/sh", "sh", "-c", (quote(kPlinth.string()) + " " + args).c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  std::array<char, 4096> buf{};
  for (;;) {
    ssize_t n = read(master, buf.data(), buf.size());
    if (n <= 0) break;  // EIO once the child closed the terminal
    out.append(buf.data(), static_cast<size_t>(n));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  return out;
}

TEST_F(CliBatch, ProgressLineOnATerminalOnly) {
  std::ofstream(in()) << R"({"prompt": "Hi", "max_tokens": 3})"
                         "\n"
                      << R"({"prompt": "Hello", "max_tokens": 2})"
                         "\n";
  const std::string args = "generate --manifest " + quote(kManifest.string()) + " --prompts-file " +
                           quote(in().string()) + " --output " + quote(out().string());
  const std::string tty = stderr_on_a_terminal(args);
  EXPECT_NE(tty.find("\r2/2 done | "), std::string::npos) << tty;
  EXPECT_NE(tty.find("generated tokens/s | ETA "), std::string::npos) << tty;
  const CliRun piped =
      run("--prompts-file " + quote(in().string()) + " --output " + quote(out().string()));
  ASSERT_EQ(piped.code, 0) << piped.out;
  EXPECT_EQ(piped.out.find('\r'), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find(" done | "), std::string::npos) << piped.out;
}

}  // namespace
