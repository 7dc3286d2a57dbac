// A TL1 session with one OCS over TCP (docs/runtime.md, "TL1"): log in, send commands, match
// responses to them, and read the Polatis answers mfabric needs.
//
// One command at a time (or a pipelined batch, execute_pipelined): each gets a fresh CTAG, and the
// session reads until the response with that CTAG; responses to other CTAGs (late answers to a
// command that timed out), acknowledgments of other commands and autonomous messages (alarms) are
// skipped. An in-progress acknowledgment
// ("IP CTAG") of the command restarts its timeout, up to a bound on the whole command. When the
// connection breaks (closed, reset, refused), the session reconnects, logs in again and resends
// the command with a new CTAG, a bounded number of times. Every failure is one mfabric::Error
// whose text starts "OCS HOST:PORT: " and says what failed; a DENY is a Tl1Denied, which carries
// the error code. Not thread-safe: one session per thread (or a lock around it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/units.h"
#include "tl1/tcp_connection.h"
#include "tl1/tl1_message.h"

namespace mfabric::tl1 {

struct Tl1Credentials {
  std::string user;      // an AID: letters, digits, '-', '_', '.'
  std::string password;  // printable ASCII without '"' (sent quoted when it needs to be)
};

struct Tl1ClientOptions {
  Time connect_timeout = Time::milliseconds(2000);  // each connection attempt
  // For the response (or an acknowledgment) to a command; an IP acknowledgment starts it again,
  // up to max_command_time since the command was sent. A switch takes about 25 ms.
  Time command_timeout = Time::milliseconds(2000);
  Time max_command_time = Time::milliseconds(30000);
  // Connections tried per call (the first included) when the connection breaks or is refused.
  int max_attempts = 3;
  Time retry_delay = Time::milliseconds(100);  // before each new attempt
  std::string tid;                             // the target identifier; empty for "this OCS"
};

// A DENY response: the command was refused. what() is "OCS HOST:PORT: COMMAND denied (CODE: the
// response's comment)".
class Tl1Denied : public Error {
 public:
  Tl1Denied(std::string source, std::string message, std::string code, std::string verb)
      : Error(std::move(source), "", std::move(message)),
        code_(std::move(code)),
        verb_(std::move(verb)) {}
  const std::string& code() const { return code_; }  // e.g. "IIAC", "SNVS"; may be empty
  const std::string& verb() const { return verb_; }  // e.g. "ENT-PATCH"

 private:
  std::string code_;
  std::string verb_;
};

class Tl1Client {
 public:
  // Checks the address, the credentials and the options (mfabric::Error); connects on the first
  // call that needs the OCS.
  Tl1Client(std::string address, Tl1Credentials credentials, Tl1ClientOptions options = {});
  // Logs out (CANC-USER, without waiting for the answer) if logged in; never throws.
  ~Tl1Client();
  Tl1Client(const Tl1Client&) = delete;
  Tl1Client& operator=(const Tl1Client&) = delete;

  // Connects and logs in now (otherwise the first command does). Tl1Denied when the login is
  // refused (not retried); mfabric::Error when no connection opens within max_attempts.
  void connect();
  // CANC-USER, waiting for its answer, then closes; a later command connects again.
  void logout();
  bool connected() const { return connection_.is_open(); }

  // Sends `command` with a fresh CTAG (command.ctag is replaced) and returns its response (the
  // lines of a continued response, '>', gathered into one). Tl1Denied on DENY; mfabric::Error on
  // a timeout (the connection is kept: a late answer is skipped), a malformed or oversized answer
  // (the connection is dropped), or a connection that broke max_attempts times.
  Tl1Response execute(Tl1Command command);

  // Sends `commands` on one connection with up to `window` of them awaiting their answers at
  // once (pipelined; each gets a fresh CTAG and no retry) and calls answered(k, response) as
  // command k's response arrives, in whatever order the OCS answers; a DENY is a response like
  // any other here. Connects first if needed. mfabric::Error (Tl1Denied for an NA, NG or RL
  // acknowledgment) on the first failure, as execute() but without resending: the commands not
  // answered by then may or may not have been carried out, and the caller reads the OCS back.
  void execute_pipelined(std::vector<Tl1Command> commands, std::size_t window,
                         const std::function<void(std::size_t, const Tl1Response&)>& answered);

  // The typed calls below want COMPLD (or RTRV): PRTL or DELAY is an mfabric::Error.
  //
  // ENT-PATCH::A,B: cross-connects device ports a and b (numbered from 1). After a reconnect a
  // DENY is checked against RTRV-PATCH: if the patch is in force, the first attempt made it.
  void connect_ports(int a, int b);
  // DLT-PATCH::A: removes the patch on port a (same check after a reconnect: the port is free).
  void disconnect_port(int a);
  // RTRV-PATCH: the cross-connects in force, as the OCS lists them.
  std::vector<std::pair<int, int>> patches();
  // RTRV-PORT-STATUS::ALL: every port's state.
  std::vector<PortStatus> port_status();

  // Waits up to `wait` for an autonomous message (an alarm or event the OCS sends unasked) and
  // returns it; nullopt when none came. Logs in first if needed (as connect(): the OCS sends
  // alarms to logged-in sessions). Answers to earlier commands are skipped. mfabric::Error when
  // the connection breaks or the stream is malformed (the session is then closed; the next call
  // connects again).
  std::optional<Tl1AutonomousMessage> await_autonomous(Time wait);

  const std::string& address() const { return address_; }
  // Autonomous messages (alarms, events) skipped so far.
  std::int64_t autonomous_messages() const { return autonomous_messages_; }

 private:
  // The response to `command` on the current connection (one attempt); Tl1Denied on DENY.
  Tl1Response exchange(Tl1Command& command, const std::string& description);
  // The responses to `commands` on the current connection, at most `window` awaiting an answer
  // at once, each given to answered() as it arrives (DENY included); `description` names a
  // single ACT-USER in messages (its password unsaid).
  void exchange_all(std::vector<Tl1Command>& commands, std::size_t window,
                    const std::function<void(std::size_t, Tl1Response&)>& answered,
                    const std::string* description = nullptr);
  // execute(), and whether it needed a new connection (so a DENY may be an echo of the first try).
  Tl1Response execute_counting(Tl1Command command, bool& reconnected);
  void open_and_login();
  // mfabric::Error unless the OCS answered COMPLD (or RTRV): PRTL and DELAY are not done.
  void require_done(const Tl1Response& response, const char* verb) const;
  std::string next_ctag();
  [[noreturn]] void fail(const std::string& message) const;
  // `command` as text for messages, without the password of ACT-USER.
  static std::string describe(const Tl1Command& command);

  std::string address_;
  Tl1Credentials credentials_;
  Tl1ClientOptions options_;
  TcpConnection connection_;
  Tl1ResponseReader reader_;
  std::int64_t ctag_counter_ = 0;
  std::int64_t autonomous_messages_ = 0;
  bool logged_in_ = false;
};

}  // namespace mfabric::tl1
