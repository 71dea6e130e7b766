// Test helper: runs the built `plinth` binary through /bin/sh and captures what it prints.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace plinth::test {

/// The exit code (-1 when the process did not exit normally) and stdout + stderr together.
struct CliRun {
  int code;
  std::string out;
};

/// `s` single-quoted for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The build tree's `plinth`, quoted for /bin/sh.
inline std::string plinth_command() {
  return shell_quote((std::filesystem::path(PLINTH_BUILD_DIR) / "plinth").string());
}

/// `/bin/sh -c SCRIPT` with stdout and stderr through one pipe (SCRIPT must send its commands'
/// stderr to stdout itself, e.g. `... 2>&1`). Blocks until the shell exits.
inline CliRun run_shell(const std::string& script) {
  FILE* p = popen(script.c_str(), "r");
  std::string out;
  if (p == nullptr) return {-1, out};
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// `plinth ARGS` (ARGS already quoted as the shell needs), the build tree's binary, stdout and
/// stderr through one pipe. Blocks until the process exits.
inline CliRun run_plinth(const std::string& args) {
  return run_shell(plinth_command() + " " + args + " 2>&1");
}

}  // namespace plinth::test
