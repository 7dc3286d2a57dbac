// mfabric ocs-emulator's options (the server itself: tests/ocs/ocs_emulator_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_harness.h"

namespace mfabric::testing {
namespace {

TEST(OcsEmulatorCli, BadOptionsAreOneLine) {
  const fs::path dir = fs::temp_directory_path() / ("ocs_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string state = (dir / "ocs.state").string();
  expect_error("ocs-emulator --ports 0 --state " + state, "--ports: expected 1 to 4096 ports");
  expect_error("ocs-emulator --ports 8 --switching 25 --state " + state, "--switching:");
  expect_error("ocs-emulator --ports 8 --switching 2min --state " + state, "--switching:");
  expect_error("ocs-emulator --ports 8 --listen nowhere --state " + state, "--listen: expected");
  expect_error("ocs-emulator --ports 8 --max-time soon --state " + state, "--max-time:");
  EXPECT_FALSE(fs::exists(state));  // refused before the state file is made
  expect_error("ocs-emulator --ports 8", "--state is required", 2);
  std::ofstream(state) << "mfabric-ocs-state 1 ports 8\nconnect 1 2\nconnect 2 3\n";
  expect_error("ocs-emulator --ports 8 --state " + state, state + ": line 3:");
  expect_error("ocs-emulator --ports 16 --state " + state, "a switch of 8 ports, not 16");
  fs::remove_all(dir);
}

TEST(OcsEmulatorCli, PrintsWhereItListensAndStopsByItself) {
  const fs::path dir = fs::temp_directory_path() / ("ocs_cli_run_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const Outcome o =
      run("ocs-emulator --ports 8 --state " + (dir / "ocs.state").string() + " --max-time 100ms");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("listening on 127.0.0.1:", 0), 0u) << o.out;
  EXPECT_NE(o.err.find("stopped after 0 sessions"), std::string::npos) << o.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mfabric::testing
