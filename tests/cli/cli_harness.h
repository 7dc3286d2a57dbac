// Running the real `mfabric` binary from tests: capture stdout, stderr and the exit code, compare
// with golden files, check error output. MFABRIC_UPDATE_GOLDEN=1 rewrites the golden files.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_text.h"

namespace mfabric::testing {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs mfabric with `args`, from directory `cwd` when given (so that file names in the output do
// not depend on where the checkout lives).
inline Outcome run(const std::string& args, const std::string& cwd = "") {
  static int counter = 0;  // one directory per call
  const fs::path dir =
      fs::temp_directory_path() /
      ("mfabric_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir);
  const std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") +
                          std::string(MFABRIC_BINARY) + " " + args + " >" + (dir / "out").string() +
                          " 2>" + (dir / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(dir / "out");
  o.err = slurp(dir / "err");
  fs::remove_all(dir);
  return o;
}

inline std::string data(const std::string& name) {
  return std::string(MFABRIC_TEST_DATA_DIR) + "/" + name;
}

inline void expect_golden(const std::string& args, const std::string& golden,
                          const std::string& cwd = "") {
  const Outcome o = run(args, cwd);
  ASSERT_EQ(o.exit_code, 0) << "mfabric " << args << "\n" << o.err;
  EXPECT_EQ(o.err, "");
  const fs::path path = data(golden);
  if (std::getenv("MFABRIC_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << o.out;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " missing; run with MFABRIC_UPDATE_GOLDEN=1";
  EXPECT_EQ(o.out, slurp(path)) << "mfabric " << args << " differs from " << golden;
}

// A results.json without its "provenance" (the command line differs between two runs that
// must give the same results: a rerun with other flags, a resumed run).
inline std::string without_provenance(const std::string& results_json) {
  nlohmann::json j = nlohmann::json::parse(results_json);
  j.erase("provenance");
  return j.dump(1);
}

// A CSV or page without the line that records the build and the command (a CSV's first line
// "# mfabric ...", a page's class="provenance"): what two runs of the same results share.
inline std::string without_provenance_line(const std::string& text) {
  std::string out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# mfabric ", 0) != 0 && line.find("class=\"provenance\"") == std::string::npos)
      out += line + "\n";
  }
  return out;
}

// One line on stderr naming `needle`, nothing on stdout, the given exit code.
inline void expect_error(const std::string& args, const std::string& needle, int exit_code = 1) {
  const Outcome o = run(args);
  EXPECT_EQ(o.exit_code, exit_code) << "mfabric " << args << "\n" << o.err;
  EXPECT_EQ(o.out, "") << "mfabric " << args;
  EXPECT_NE(o.err.find(needle), std::string::npos)
      << "mfabric " << args << ": stderr does not mention '" << needle << "':\n"
      << o.err;
  if (exit_code == 1) {
    EXPECT_EQ(o.err.rfind("mfabric: error: ", 0), 0u) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
}

}  // namespace mfabric::testing
