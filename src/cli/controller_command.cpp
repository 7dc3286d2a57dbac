// mfabric controller: the region controller daemon, a gRPC service in front of one OCS (docs/
// runtime.md, "Region controller"). Built only with gRPC; without it the command says so.
#include <fmt/format.h>

#include <pthread.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/controller_auth.h"
#include "controller/ocs_alarm_listener.h"
#include "controller/region_service.h"
#include "controller/regions_file.h"
#include "core/error.h"
#include "core/input_files.h"
#include "core/units.h"
#include "ocs/ocs_emulator.h"
#include "tl1/tl1_client.h"
#ifdef MFABRIC_HAVE_GRPC
#include "controller/controller_rpc.h"
#endif

namespace mfabric::cli {

namespace {

struct ControllerCliOptions {
  std::string ocs;
  std::string regions;
  std::string listen = "127.0.0.1:0";
  std::string ocs_user;
  std::string ocs_password_file;
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  std::string max_time;
  int tl1_window = static_cast<int>(controller::kDefaultTl1Window);
  bool no_alarms = false;
  bool quiet = false;
};

#ifdef MFABRIC_HAVE_GRPC

// The first line of a credentials file.
std::string first_line(const std::string& path, const std::string& what) {
  const std::string text = read_text_file(path, what, "a file holding a password", 4096);
  std::string line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

tl1::Tl1Credentials ocs_credentials(const ControllerCliOptions& o) {
  if (o.ocs_user.empty() != o.ocs_password_file.empty()) {
    throw Error("", "--ocs-user", "give --ocs-user and --ocs-password-file together");
  }
  if (o.ocs_user.empty()) return {ocs::kDefaultUser, ocs::kDefaultPassword};
  return {o.ocs_user, first_line(o.ocs_password_file, "OCS password file")};
}

controller::ControllerAuth auth_of(const ControllerCliOptions& o) {
  return controller_auth(o.token_file, o.tls_cert, o.tls_key, o.tls_ca);
}

int run_controller(const ControllerCliOptions& o) {
  if (o.tl1_window < 1 || o.tl1_window > 1000) {
    throw Error("", "--tl1-window",
                fmt::format("expected 1 to 1000 commands, got {}", o.tl1_window));
  }
  std::optional<Time> run_for;
  if (!o.max_time.empty()) {
    run_for = with_context("", "--max-time", [&] { return parse_time(o.max_time); });
  }
  const controller::ControllerAuth auth = auth_of(o);
  auto regions = controller::read_regions_file(o.regions);
  auto ocs = std::make_unique<tl1::Tl1Client>(o.ocs, ocs_credentials(o));
  controller::RegionControllerService controller(std::move(regions), std::move(ocs),
                                                 static_cast<std::size_t>(o.tl1_window));
  controller.start();

  // SIGTERM and SIGINT are taken by sigtimedwait below, not by a handler: blocked here, before
  // gRPC starts its threads, they stay blocked in all of them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  // A second session, reading only: the OCS's alarms (a port that lost light) make the controller
  // read the switch back at once.
  std::optional<controller::OcsAlarmListener> alarms;
  if (!o.no_alarms) {
    alarms.emplace(std::make_unique<tl1::Tl1Client>(o.ocs, ocs_credentials(o)),
                   [&controller](const tl1::Tl1AutonomousMessage&) { controller.ocs_alarm(); });
  }
  controller::ControllerRpcServer server(controller, o.listen, auth);
  // The first line, flushed: scripts and tests read the port from it.
  std::cout << "listening on " << server.address() << std::endl;
  if (!o.quiet) {
    std::cerr << fmt::format("controller: {} regions on the OCS at {}{}\n",
                             controller.regions().size(), o.ocs,
                             o.ocs_user.empty() ? " (as the emulator's admin: no --ocs-user)" : "");
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const timespec tick{0, 100'000'000};
    if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) break;
    if (run_for && std::chrono::steady_clock::now() - start >=
                       std::chrono::microseconds(run_for->ps() / 1'000'000)) {
      break;
    }
  }
  server.shutdown();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (!o.quiet) {
    const controller::ControllerHealth health = controller.health();
    std::cerr << fmt::format("controller: stopped after {} reconfigurations, {} TL1 commands\n",
                             health.reconfigurations, health.commands);
  }
  return 0;
}

#else

int run_controller(const ControllerCliOptions&) {
  throw Error("", "controller",
              "this mfabric was built without gRPC; install libgrpc++-dev and "
              "protobuf-compiler-grpc (scripts/install-deps.sh) and build again");
}

#endif

}  // namespace

Command register_controller(CLI::App& command) {
  auto o = std::make_shared<ControllerCliOptions>();
  CLI::App* app = &command;
  app->add_option("--ocs", o->ocs, "The OCS's TL1 address, HOST:PORT")->required();
  app->add_option("--regions", o->regions,
                  "The regions file (YAML: each region's servers, NICs, first OCS port, planner)")
      ->required();
  app->add_option("--listen", o->listen,
                  "HOST:PORT to serve gRPC on; port 0 picks a free one (the first line on stdout "
                  "says which)")
      ->capture_default_str();
  app->add_option("--ocs-user", o->ocs_user, "The OCS account (default: the emulator's admin)");
  app->add_option("--ocs-password-file", o->ocs_password_file,
                  "A file whose first line is the OCS account's password");
  app->add_option("--token-file", o->token_file,
                  "A file whose first line is the bearer token every call must carry");
  app->add_option("--tls-cert", o->tls_cert, "The server's certificate (PEM)");
  app->add_option("--tls-key", o->tls_key, "The server's private key (PEM)");
  app->add_option("--tls-ca", o->tls_ca, "The CA that signs client certificates (PEM)");
  app->add_option("--tl1-window", o->tl1_window,
                  "TL1 changes sent ahead of their answers (pipelined); 1 for an OCS that takes "
                  "one command at a time")
      ->capture_default_str();
  app->add_flag("--no-alarms", o->no_alarms,
                "Open no second TL1 session for the OCS's alarms (a failed port is then seen at "
                "the next submit)");
  app->add_option("--max-time", o->max_time, "Stop by itself after this long (e.g. 30s)");
  app->add_flag("-q,--quiet", o->quiet, "No summary lines on stderr");
  return Command{app, [o] { return run_controller(*o); }};
}

}  // namespace mfabric::cli
