// The OCS emulator (docs/runtime.md, "OCS emulator"): an OcsState behind a TL1 server on TCP, with
// its changes journaled to a state file, so that the region controller daemon and the TL1 client
// can be run and tested against something that behaves like a Polatis switch: logins, patches
// that take the switching time to settle, conflicts between sessions refused with TL1 error
// codes, and cross-connects that survive a kill.
//
// One thread, one poll() loop: sessions are few (a controller, an operator), and one loop makes
// the order of changes the order commands arrived in, with no locks around the state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/units.h"
#include "ocs/ocs_journal.h"

namespace mfabric::ocs {

struct OcsEmulatorOptions {
  int ports = 0;
  Time switching = Time::milliseconds(25);   // a patch settles this long after it is accepted
  std::string state_file;                    // the journal (ocs_journal.h)
  std::string listen = "127.0.0.1:0";        // HOST:PORT; port 0 picks a free one
  std::map<std::string, std::string> users;  // user -> password; empty: kDefaultUser
  std::optional<Time> run_for;               // stop by itself after this long
  std::string sid = "MFABRIC-OCS";           // the source identifier in responses
  std::size_t max_sessions = 16;
  std::size_t max_pending_per_session = 64;  // commands waiting for their mirrors
  std::size_t compact_after = kDefaultCompactAfter;
};

// The account of an emulator started without --users (for tests and demos; docs/runtime.md).
inline constexpr const char* kDefaultUser = "admin";
inline constexpr const char* kDefaultPassword = "admin";

// Reads a --users file: one "user:password" a line; blank lines and lines starting with '#'
// skipped. mfabric::Error "FILE: line N: ..." for anything else, a repeated user or no user.
std::map<std::string, std::string> read_users_file(const std::string& path);

// What an emulator did, for its last line.
struct OcsEmulatorStats {
  std::uint64_t sessions = 0;  // accepted
  std::uint64_t commands = 0;  // answered
  std::uint64_t changes = 0;   // journaled
  std::uint64_t flushes = 0;   // of the journal (one per round of commands that changed patches)
};

class OcsEmulator {
 public:
  // Replays the state file and listens. mfabric::Error naming the file or the option ("--listen")
  // on bad input, a journal that does not replay, or an address that cannot be bound.
  explicit OcsEmulator(OcsEmulatorOptions options);
  ~OcsEmulator();
  OcsEmulator(const OcsEmulator&) = delete;
  OcsEmulator& operator=(const OcsEmulator&) = delete;

  // "127.0.0.1:40123": the address listened on, the port the one bound.
  const std::string& address() const;
  const OcsState& state() const;
  const JournalReplay& replay() const;

  // Serves until request_stop() or options.run_for has passed. Returns what it did.
  OcsEmulatorStats run();
  // Makes run() return soon: safe from a signal handler and from another thread.
  void request_stop();

 private:
  class Server;
  std::unique_ptr<Server> server_;
};

}  // namespace mfabric::ocs
