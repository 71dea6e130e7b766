// Runs the built `plinth` executable and captures its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace plinth_test {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `args` is appended to the command line as is (quote paths yourself). The test plugins' folder
/// is on PLINTH_PLUGIN_PATH.
inline RunResult run_plinth(const std::string& args) {
  static int counter = 0;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("plinth_cli_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::path out = dir / ("out" + std::to_string(counter));
  std::filesystem::path err = dir / ("err" + std::to_string(counter++));
  std::string cmd = "PLINTH_PLUGIN_PATH='" PLINTH_TEST_PLUGIN_DIR "' '" PLINTH_BUILD_DIR
                    "/plinth' " +
                    args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace plinth_test
