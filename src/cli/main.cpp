// mfabric: design, simulate and cost regionally reconfigurable optical-electrical fabrics for
// Mixture-of-Experts training.
//
// Exit codes: 0 success, 1 bad input (file, value, configuration), 2 bad usage (unknown option,
// missing argument), 3 internal error (a bug in mfabric, or the machine ran out of memory).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>

#include "cli/commands.h"
#include "core/error.h"

namespace {
constexpr const char* kEmptyValue = "expected a value, got an empty string";
}  // namespace

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
      mfabric::cli::register_simulate(app), mfabric::cli::register_plan(app),
      mfabric::cli::register_predict(app),  mfabric::cli::register_compare(app),
      mfabric::cli::register_sweep(app),
  };

  // An empty value ("--stats ''") is never meant: say so, rather than treating the option as
  // absent and blaming another one.
  const CLI::Validator non_empty(
      [](std::string& value) { return value.empty() ? std::string(kEmptyValue) : std::string(); },
      "", "non-empty");
  for (const auto& command : commands) {
    for (CLI::Option* option : command.app->get_options()) {
      if (option->get_type_size() > 0) option->check(non_empty);
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    // A value the option cannot take (an empty path) is bad input, not bad usage.
    if (std::string(e.what()).find(kEmptyValue) != std::string::npos) {
      std::cerr << "mfabric: error: " << e.what() << "\n";
      return 1;
    }
    return app.exit(e) == 0 ? 0 : 2;
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
  } catch (const std::bad_alloc&) {
    // Size guards refuse jobs that do not fit before building them; reaching this means the
    // machine has less memory than the estimate assumed.
    std::cerr << "mfabric: error: out of memory; try a smaller job (fewer servers, iterations or "
                 "micro-batches)\n";
    return 3;
  } catch (const std::exception& e) {
    // Last resort: every bad input is meant to be an mfabric::Error, so this is a bug.
    std::cerr << "mfabric: internal error: " << e.what() << " (please report this)\n";
    return 3;
  } catch (...) {
    std::cerr << "mfabric: internal error: unknown exception (please report this)\n";
    return 3;
  }
  return 0;
}
