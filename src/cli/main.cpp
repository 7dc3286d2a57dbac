// mfabric: design, simulate and cost regionally reconfigurable optical-electrical fabrics for
// Mixture-of-Experts training.
//
// Exit codes: 0 success, 1 bad input (file, value, configuration), 2 bad usage (unknown option,
// missing argument).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "mfabric: design, simulate and cost regionally reconfigurable optical-electrical fabrics "
      "for Mixture-of-Experts training.\nUnits: rates in bits/s (400G, 400Gbps) or bytes/s "
      "(900GB/s); times 25ms, 1us; sizes 2MiB, 1.5GB; costs in US dollars.",
      "mfabric"};
  app.set_version_flag("--version", std::string("mfabric ") + MFABRIC_VERSION);
  app.require_subcommand(1);

  std::vector<mfabric::cli::Command> commands{
      mfabric::cli::register_cost(app),     mfabric::cli::register_topology(app),
      mfabric::cli::register_fabrics(app),  mfabric::cli::register_workload(app),
      mfabric::cli::register_trace(app),    mfabric::cli::register_models(app),
      mfabric::cli::register_simulate(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const mfabric::Error& e) {
    std::cerr << "mfabric: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
