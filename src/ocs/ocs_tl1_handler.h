// The emulated OCS's TL1 dialect (docs/runtime.md, "OCS emulator"): one parsed command in, the
// messages that answer it out. No sockets and no clock here (the server passes the time), so
// that every rule of the dialect is tested without a network.
//
//   ACT-USER::USER:CTAG::PASSWORD;     log in (every other command but CANC-USER needs it)
//   CANC-USER::USER:CTAG;              log out
//   ENT-PATCH::A,B:CTAG;               cross-connect ports A and B: IP now, COMPLD once settled
//   DLT-PATCH::A[,B]:CTAG;             remove the patch on port A: IP now, COMPLD once settled
//   RTRV-PATCH:::CTAG;                 the patches, "A,B" (A < B)
//   RTRV-PORT-STATUS::[P]:CTAG;        "P:STATUS=IS" or "P:STATUS=FAILED", every port or P
//   OPR-PORT-FAIL::P:CTAG;             emulator only: port P fails (loses light)
//   RLS-PORT-FAIL::P:CTAG;             emulator only: port P is repaired
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/units.h"
#include "ocs/ocs_journal.h"
#include "ocs/ocs_state.h"
#include "tl1/tl1_message.h"

namespace mfabric::ocs {

// More TL1 error codes the dialect answers with (ocs_state.h has the switch's own).
namespace tl1_code {
inline constexpr const char* kNotLoggedIn = "PLNA";     // privilege: login not active
inline constexpr const char* kBadLogin = "PIUI";        // privilege: illegal user identity
inline constexpr const char* kUnknownVerb = "IICM";     // input: invalid command
inline constexpr const char* kBadSyntax = "IISP";       // input: invalid syntax or punctuation
inline constexpr const char* kTooManyPending = "SLEM";  // status: list exceeds maximum
inline constexpr const char* kNotRecorded = "SROF";     // the state file could not be written
}  // namespace tl1_code

// One session's login.
struct OcsLogin {
  bool active = false;
  std::string user;
};

// What answers a command: a message to send now and, for a change that moves mirrors, the
// completion to send when they have settled; for a port that fails or is repaired, also an alarm
// to every session (`REPT ALM PORT`, alarm code `*C` for a failure and `A` for a repair, one line
// `"P:STATUS=FAILED"` or `"P:STATUS=IS"`), as an OCS reports loss of light.
struct OcsReply {
  std::string now;
  std::optional<Time> later_at;
  std::string later;
  // An autonomous message for every logged-in session (a port failed or was repaired), sent
  // with `now`.
  std::string to_sessions = {};
};

// Failed logins from one peer address before logins from it are refused for a while, and how
// long the first refusal lasts (it doubles with every further failure, up to a minute).
inline constexpr int kFreeLoginFailures = 3;
inline constexpr Time kFirstLoginLockout = Time::milliseconds(1000);

class OcsTl1Handler {
 public:
  // `state` and `journal` are the emulator's; every change accepted is written to the journal and
  // applied to the state before the reply is returned. The caller sends no reply while
  // journal->unsynced(): it flushes first (OcsJournal::sync), so that the changes of many
  // commands share one flush and none is answered before it is on disk.
  OcsTl1Handler(OcsState* state, OcsJournal* journal, std::map<std::string, std::string> users,
                Time switching, std::string sid);

  // The reply to `command` from a session logged in as `login` (updated by ACT-/CANC-USER),
  // connected from `peer` (an address without the port: failed logins are counted per address).
  // Without `can_wait` (the session has as many commands waiting for mirrors as it may), a patch
  // change is refused (SLEM).
  OcsReply handle(const tl1::Tl1Command& command, OcsLogin* login, const std::string& peer,
                  bool can_wait, Time now);
  // The reply to input that is not a command (`error` from the TL1 reader or parser).
  std::string malformed(const std::string& error);

  std::uint64_t changes() const { return changes_; }

 private:
  struct LoginFailures {
    int count = 0;
    Time locked_until = Time::zero();
  };
  void forget_expired_failures(Time now);
  OcsReply log_in(const tl1::Tl1Command& command, OcsLogin* login, const std::string& peer,
                  Time now);
  OcsReply change(const tl1::Tl1Command& command, const OcsChange& change, bool can_wait, Time now);
  std::string response(const std::string& ctag, tl1::Tl1Completion completion,
                       std::vector<std::string> lines = {}) const;
  std::string deny(const std::string& ctag, const std::string& code, const std::string& text) const;
  std::string port_alarm(int port, bool failed);

  OcsState* state_;
  OcsJournal* journal_;
  std::map<std::string, std::string> users_;
  Time switching_;
  std::string sid_;
  std::map<std::string, LoginFailures> failures_;  // by peer address
  std::uint64_t changes_ = 0;
  std::uint64_t alarms_ = 0;  // the ATAG of the last alarm
};

}  // namespace mfabric::ocs
