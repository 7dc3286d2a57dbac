// mfabric: design, simulate and cost regionally reconfigurable optical-electrical fabrics for
// Mixture-of-Experts training.
//
// Exit codes: 0 success, 1 bad input (file, value, configuration), 2 bad usage (unknown option,
// missing argument), 3 internal error (a bug in mfabric, or the machine ran out of memory).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "core/output_text.h"

namespace {
constexpr const char* kEmptyValue = "expected a value, got an empty string";

// Every message reaches a terminal as one line that cannot drive it: control characters from
// input (a newline, ESC, BEL in a key, a name or a path) are escaped here, whatever code built
// the message, and a message is cut at 2,000 characters.
void print_error(const char* prefix, const std::string& message) {
  std::string line = mfabric::printable(message);
  constexpr std::size_t kMaxLine = 2000;
  if (line.size() > kMaxLine) {
    std::size_t cut = kMaxLine;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80)
      --cut;
    line = line.substr(0, cut) + "... (cut)";
  }
  std::cerr << prefix << line << "\n";
}

// The last line of defence for what cannot be caught: an exception escaping a noexcept
// function or a thread. Says so in one line (not the runtime's "terminate called ...") and
// aborts as before, so that the exit status still shows a crash.
[[noreturn]] void on_terminate() {
  try {
    if (const std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
    std::cerr << "mfabric: internal error: terminated without an exception (please report this)\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "mfabric: error: out of memory (in a step that cannot recover); try a smaller "
                 "job\n";
  } catch (const std::exception& e) {
    print_error("mfabric: internal error: ", std::string(e.what()) + " (please report this)");
  } catch (...) {
    std::cerr << "mfabric: internal error: unknown exception (please report this)\n";
  }
  std::abort();
}
}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
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
      print_error("mfabric: error: ", e.what());
      return 1;
    }
    print_error("", e.what());
    std::cerr << "Run with --help for more information.\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's own failure message, with the arguments it quotes escaped.
    print_error("", e.what());
    std::cerr << "Run with --help for more information.\n";
    return 2;
  }

  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const mfabric::Error& e) {
    print_error("mfabric: error: ", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    // Size guards refuse jobs that do not fit before building them; reaching this means the
    // machine has less memory than the estimate assumed.
    std::cerr << "mfabric: error: out of memory; try a smaller job (fewer servers, iterations or "
                 "micro-batches)\n";
    return 3;
  } catch (const std::exception& e) {
    // Last resort: every bad input is meant to be an mfabric::Error, so this is a bug.
    print_error("mfabric: internal error: ", std::string(e.what()) + " (please report this)");
    return 3;
  } catch (...) {
    std::cerr << "mfabric: internal error: unknown exception (please report this)\n";
    return 3;
  }
  return 0;
}
