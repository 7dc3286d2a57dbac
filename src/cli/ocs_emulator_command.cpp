// mfabric ocs-emulator: an emulated OCS speaking TL1 on TCP, its cross-connects kept in a state
// file across crashes (docs/runtime.md, "OCS emulator").
#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"
#include "ocs/ocs_emulator.h"

namespace mfabric::cli {

namespace {

struct OcsEmulatorCliOptions {
  int ports = 0;
  std::string switching = "25ms";
  std::string state;
  std::string listen = "127.0.0.1:0";
  std::string users;
  std::string max_time;
  std::string sid = "MFABRIC-OCS";
  bool quiet = false;
};

// The emulator a SIGTERM or SIGINT stops: its stop pipe is written from the handler.
std::atomic<ocs::OcsEmulator*> g_running{nullptr};

extern "C" void stop_on_signal(int) {
  if (ocs::OcsEmulator* emulator = g_running.load()) emulator->request_stop();
}

// SIGTERM and SIGINT stop the emulator at its next loop turn (answers sent, state file already
// complete); the previous handlers come back afterwards.
class StopOnSignals {
 public:
  explicit StopOnSignals(ocs::OcsEmulator* emulator) {
    g_running.store(emulator);
    struct sigaction action {};
    action.sa_handler = stop_on_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, &previous_term_);
    ::sigaction(SIGINT, &action, &previous_int_);
  }
  ~StopOnSignals() {
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    ::sigaction(SIGINT, &previous_int_, nullptr);
    g_running.store(nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction previous_term_ {};
  struct sigaction previous_int_ {};
};

Time time_option(const std::string& text, const std::string& option) {
  return with_context("", option, [&] { return parse_time(text); });
}

int run_ocs_emulator(const OcsEmulatorCliOptions& o) {
  ocs::OcsEmulatorOptions options;
  if (o.ports < 1 || o.ports > ocs::kMaxEmulatedPorts) {
    throw Error("", "--ports",
                fmt::format("expected 1 to {} ports, got {}", ocs::kMaxEmulatedPorts, o.ports));
  }
  options.ports = o.ports;
  options.switching = time_option(o.switching, "--switching");
  if (options.switching > Time::milliseconds(60000)) {
    throw Error(
        "", "--switching",
        fmt::format("expected at most 60s (an OCS switches in milliseconds), got {}", o.switching));
  }
  options.state_file = o.state;
  options.listen = o.listen;
  options.sid = o.sid;
  if (!o.users.empty()) options.users = ocs::read_users_file(o.users);
  if (!o.max_time.empty()) options.run_for = time_option(o.max_time, "--max-time");

  ocs::OcsEmulator emulator(std::move(options));
  // The first line, flushed: scripts and tests read the port from it.
  std::cout << "listening on " << emulator.address() << std::endl;
  if (!o.quiet) {
    const ocs::JournalReplay& replay = emulator.replay();
    std::cerr << fmt::format(
        "ocs-emulator: {} ports, {} patches from {} ({} changes replayed{})\n",
        emulator.state().ports(), emulator.state().patches().size(), o.state, replay.records,
        replay.torn_line ? fmt::format(", torn line {} dropped", replay.torn_line) : "");
  }
  const StopOnSignals stop(&emulator);
  const ocs::OcsEmulatorStats stats = emulator.run();
  if (!o.quiet) {
    std::cerr << fmt::format(
        "ocs-emulator: stopped after {} sessions, {} commands, {} changes ({} journal flushes)\n",
        stats.sessions, stats.commands, stats.changes, stats.flushes);
  }
  return 0;
}

}  // namespace

Command register_ocs_emulator(CLI::App& command) {
  auto o = std::make_shared<OcsEmulatorCliOptions>();
  CLI::App* app = &command;
  app->add_option("--ports", o->ports, "Ports of the switch, numbered from 1")->required();
  app->add_option("--switching", o->switching,
                  "How long a patch takes to settle (the COMPLD follows the IP this much later)")
      ->capture_default_str();
  app->add_option("--state", o->state,
                  "The state file: created when missing, replayed when present (the switch's "
                  "cross-connects and failed ports)")
      ->required();
  app->add_option("--listen", o->listen,
                  "HOST:PORT to listen on; port 0 picks a free one (the first line on stdout "
                  "says which)")
      ->capture_default_str();
  app->add_option("--users", o->users,
                  "A file of USER:PASSWORD lines (default: the one account admin:admin)");
  app->add_option("--max-time", o->max_time, "Stop by itself after this long (e.g. 30s)");
  app->add_option("--sid", o->sid, "The source identifier in responses")->capture_default_str();
  app->add_flag("-q,--quiet", o->quiet, "No summary lines on stderr");
  return Command{app, [o] { return run_ocs_emulator(*o); }};
}

}  // namespace mfabric::cli
