// The emulated OCS itself: its ports, cross-connects, failed ports and moving mirrors, with the
// rules a real switch enforces, answered as TL1 error codes (docs/runtime.md, "OCS emulator").
// Pure state: the caller passes the time (no clock here), so that the rules are deterministic
// and testable without sleeping.
//
// Ports are numbered as the device numbers them, 1 to ports() (control::Tl1Syntax's port_base 1).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"

namespace mfabric::ocs {

// Why the switch refused a change: a TL1 error code (four letters) and a sentence for people.
struct OcsRefusal {
  std::string code;
  std::string text;
  bool operator==(const OcsRefusal&) const = default;
};

// The TL1 error codes the emulator answers with (docs/runtime.md lists them).
namespace tl1_code {
inline constexpr const char* kInvalidPort = "IIAC";   // port outside 1..N, or a == b
inline constexpr const char* kPortInUse = "SAAL";     // already in a cross-connect
inline constexpr const char* kNotConnected = "SNVS";  // no cross-connect on the port
inline constexpr const char* kPortFailed = "SROF";    // failed port cannot be connected
inline constexpr const char* kSwitching = "SBSY";     // the port's mirror is still moving
inline constexpr const char* kAlreadyInState =
    "SAIS";  // failing a failed port, or repairing a good one
}  // namespace tl1_code

// One change to the switch; what a line of the state journal records.
struct OcsChange {
  enum class Kind { Connect, Disconnect, Fail, Repair };
  Kind kind = Kind::Connect;
  int a = 0;
  int b = 0;  // Connect only
  bool operator==(const OcsChange&) const = default;
};

// A cross-connect as RTRV-PATCH reports it: a < b.
struct OcsPatch {
  int a = 0;
  int b = 0;
  bool operator==(const OcsPatch&) const = default;
};

// What a port-status retrieve reports for one port.
struct OcsPortStatus {
  int port = 0;
  int peer = 0;  // 0: not connected
  bool failed = false;
  bool switching = false;  // its mirror is still moving at the time asked
};

// Ports an emulated switch may have: Table 2's largest OCS has 1008; a little room above.
inline constexpr int kMaxEmulatedPorts = 4096;

class OcsState {
 public:
  // mfabric::Error (field "ports") unless 1 <= ports <= kMaxEmulatedPorts.
  explicit OcsState(int ports);

  int ports() const { return static_cast<int>(ports_.size()) - 1; }

  // Why `change` cannot be applied at time `now`, or nothing when it can:
  //  - Connect a-b: both ports valid and distinct (IIAC), neither failed (SROF), neither in a
  //    cross-connect, settled or still moving (SAAL);
  //  - Disconnect a: valid (IIAC), connected (SNVS), its mirror settled (SBSY: a patch being made
  //    or removed cannot be changed again before the mirrors have moved);
  //  - Fail / Repair a: valid (IIAC), not already failed / failed (SAIS).
  // A failed port keeps its cross-connect: its mirror holds position and the patch is still
  // listed, as a real OCS reports a port with no light rather than forgetting it; the controller
  // removes it with DLT-PATCH. Until then the peer stays in use.
  std::optional<OcsRefusal> refusal(const OcsChange& change, Time now) const;

  // Applies a change refusal() accepts (mfabric::Error otherwise, naming the TL1 code). A
  // Connect or Disconnect moves mirrors: its ports settle at now + switching, the returned
  // time; Fail and Repair take effect at once (returns now).
  Time apply(const OcsChange& change, Time now, Time switching);

  // The port cross-connected to `port` (0: none), whether it is failed, when its mirror settles.
  int peer(int port) const { return at(port).peer; }
  bool failed(int port) const { return at(port).failed; }
  Time settles_at(int port) const { return at(port).settles_at; }

  std::vector<OcsPatch> patches() const;  // in increasing a
  std::vector<int> failed_ports() const;  // increasing
  OcsPortStatus status(int port, Time now) const;

  // The changes that rebuild this state from an empty switch (connects, then fails): what a
  // snapshot of the journal holds.
  std::vector<OcsChange> snapshot() const;

 private:
  struct Port {
    int peer = 0;
    bool failed = false;
    Time settles_at = Time::zero();
  };
  const Port& at(int port) const;
  bool valid(int port) const { return port >= 1 && port <= ports(); }

  std::vector<Port> ports_;  // index 0 unused: ports are numbered from 1
};

// "connect 3 7", "disconnect 3", "fail 5", "repair 5": the journal's line for a change.
std::string change_text(const OcsChange& change);
// The change a line names; mfabric::Error saying what was expected otherwise (ports are checked
// against the switch when applied, not here).
OcsChange parse_change(const std::string& text);

}  // namespace mfabric::ocs
