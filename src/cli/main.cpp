// mfabric: design, simulate and cost regionally reconfigurable optical-electrical fabrics for
// Mixture-of-Experts training.
//
// Exit codes: 0 success, 1 bad input (file, value, configuration), 2 bad usage (unknown option,
// missing argument), 3 internal error (a bug in mfabric, or the machine ran out of memory).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/examples.h"
#include "core/error.h"
#include "core/output_text.h"
#include "core/provenance.h"
#include "core/suggest.h"

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

// The long and short option names of `app` ("--out", "-o").
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& l : option->get_lnames())
      names.push_back("--" + l);
  }
  return names;
}

// "; did you mean '--out'?" for the first argument in argv[first..] that looks like a long
// option `app` does not know; "" otherwise.
std::string option_hint(const CLI::App& app, int argc, char** argv, int first) {
  const std::vector<std::string> known = option_names(app);
  for (int i = first; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") break;
    if (word.rfind("--", 0) != 0) continue;
    word = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), word) != known.end()) continue;
    if (const auto near = mfabric::closest_name(word, known))
      return fmt::format("; did you mean '{}'?", *near);
  }
  return "";
}

// One line for bad usage, in the style of every other error, with where to look; exit code 2.
int usage_error(const std::string& message, const std::string& command) {
  print_error("mfabric: error: ", fmt::format("{} (see 'mfabric {}--help')", message,
                                              command.empty() ? std::string() : command + " "));
  return 2;
}

// CLI11's "Could not convert: --servers = abc" as "--servers: expected a whole number, got 'abc'".
std::string conversion_message(const std::string& what, const CLI::App* command) {
  const std::string prefix = "Could not convert: ";
  const std::size_t equals = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || equals == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), equals - prefix.size());
  const std::string value = what.substr(equals + 3);
  std::string expected = "a value of another kind";
  if (command) {
    for (const CLI::Option* option : command->get_options()) {
      const auto& lnames = option->get_lnames();
      if (std::find(lnames.begin(), lnames.end(), name.substr(name.find_first_not_of('-'))) ==
          lnames.end())
        continue;
      const std::string type = option->get_type_name();
      if (type == "INT") expected = "a whole number";
      if (type == "UINT") expected = "a whole number, 0 or more";
      if (type == "FLOAT") expected = "a number";
    }
  }
  return fmt::format("{}: expected {}, got {}", name, expected, mfabric::quote_input(value));
}

// CLI11 shows a captured default after the type ("--servers INT=128") and hand-written ones
// read "(default: 8GiB)": every default is shown one way, "(default: X)" at the end of the
// description.
void write_defaults_one_way(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string value = option->get_default_str();
    if (value.empty() || option->get_type_size() == 0) continue;
    option->description(option->get_description() + " (default: " + value + ")");
    option->default_str("");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  CLI::App app{
      "mfabric: design, simulate and cost regionally reconfigurable optical-electrical fabrics "
      "for Mixture-of-Experts training.\nUnits: rates in bits/s (400G, 400Gbps) or bytes/s "
      "(900GB/s); times 25ms, 1us; sizes 2MiB, 1.5GB; costs in US dollars.",
      "mfabric"};
  app.set_version_flag("--version", "mfabric " + mfabric::mfabric_version());
  mfabric::set_command_line(argc, argv);
  app.require_subcommand(1);
  app.footer(
      "Start with 'mfabric compare' (the paper's evaluation, quick subset, about 110 s on 2 "
      "cores). "
      "'mfabric "
      "help COMMAND' or 'mfabric COMMAND --help' for a command's options and examples; docs/cli.md "
      "for all of them.");

  // In the order of the registry (cli/command_registry.cpp): the answer first (compare,
  // simulate, sweep), then the pieces it is made of.
  std::vector<mfabric::cli::Command> commands;
  for (const auto& entry : mfabric::cli::commands().entries())
    commands.push_back(entry.factory(*app.add_subcommand(entry.name, entry.description)));
  std::vector<std::string> command_names;
  for (const auto& command : commands) {
    command_names.push_back(command.app->get_name());
    write_defaults_one_way(*command.app);
    const auto examples = mfabric::cli::command_examples().find(command.app->get_name());
    if (examples != mfabric::cli::command_examples().end())
      command.app->footer("Examples:\n" + examples->second);
  }
  const auto find_command = [&](const std::string& name) -> CLI::App* {
    for (const auto& command : commands) {
      if (command.app->get_name() == name) return command.app;
    }
    return nullptr;
  };
  const auto unknown_command = [&](const std::string& name) {
    const auto near = mfabric::closest_name(name, command_names);
    return usage_error(
        fmt::format("unknown command {}{} (commands: {})", mfabric::quote_input(name),
                    near ? fmt::format("; did you mean '{}'?", *near) : "",
                    fmt::join(command_names, ", ")),
        "");
  };

  // Bare `mfabric` and `mfabric help [COMMAND]`: the help, on stdout.
  if (argc == 1) {
    std::cout << app.help();
    return 0;
  }
  const std::string first = argv[1];
  if (first == "help") {
    if (argc == 2) {
      std::cout << app.help();
      return 0;
    }
    CLI::App* const asked = find_command(argv[2]);
    if (!asked) return unknown_command(argv[2]);
    std::cout << asked->help("mfabric");
    return 0;
  }
  if (!first.empty() && first[0] != '-' && !find_command(first)) return unknown_command(first);

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

  CLI::App* const typed = find_command(first);
  const std::string command_name = typed ? first : std::string();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ValidationError& e) {
    // A value the option cannot take (an empty path) is bad input, not bad usage.
    if (std::string(e.what()).find(kEmptyValue) != std::string::npos) {
      print_error("mfabric: error: ", e.what());
      return 1;
    }
    return usage_error(e.what(), command_name);
  } catch (const CLI::ConversionError& e) {
    return usage_error(conversion_message(e.what(), typed), command_name);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's message, with the option the user most likely meant.
    return usage_error(std::string(e.what()) + (typed ? option_hint(*typed, argc, argv, 2) : ""),
                       command_name);
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
