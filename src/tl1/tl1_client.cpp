#include "tl1/tl1_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "core/output_text.h"

namespace mfabric::tl1 {
namespace {

// Largest read from the socket at once.
constexpr std::size_t kReceiveBytes = 64 << 10;
// A response continued over several messages ('>') is gathered up to this many bytes.
constexpr std::size_t kMaxGatheredBytes = 16 * kMaxTl1ResponseBytes;
// CTAGs count 1 to 999999 (6 digits), then start again.
constexpr std::int64_t kMaxCtag = 999'999;

std::chrono::steady_clock::duration as_duration(Time t) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::nanoseconds(t.ps() / 1000));
}

std::string seconds_text(Time t) {
  return fmt::format("{:g} s", t.seconds());
}

bool is_bare_password_char(char c) {
  return c > 0x20 && c <= 0x7e && c != ',' && c != ':' && c != ';' && c != '"';
}

// A command sent and not yet answered (Tl1Client::exchange_all).
struct PendingCommand {
  std::size_t index;
  std::string what;
  std::chrono::steady_clock::time_point bound;     // max_command_time after it was sent
  std::chrono::steady_clock::time_point deadline;  // command_timeout after sent or last heard of
  Tl1Response gathered;                            // the lines of continued responses ('>') so far
  bool gathering = false;
  std::size_t gathered_bytes = 0;
};

// Adds one response to the command's answer, which a response continued over several messages
// ('>') builds up; true once the answer is whole.
bool gather(PendingCommand& p, Tl1Response& response) {
  if (p.gathering) {
    p.gathered.lines.insert(p.gathered.lines.end(), response.lines.begin(), response.lines.end());
    if (!response.comment.empty()) {
      p.gathered.comment += (p.gathered.comment.empty() ? "" : " ") + response.comment;
    }
    p.gathered.completion = response.completion;
    p.gathered.error_code = response.error_code;
    p.gathered.continued = response.continued;
  } else {
    p.gathered = std::move(response);
    p.gathering = true;
  }
  return !p.gathered.continued;
}

}  // namespace

Tl1Client::Tl1Client(std::string address, Tl1Credentials credentials, Tl1ClientOptions options)
    : address_(std::move(address)),
      credentials_(std::move(credentials)),
      options_(std::move(options)) {
  const std::string source = "OCS " + printable(address_);
  with_context(source, "", [&] { parse_host_port(address_); });
  if (credentials_.user.empty()) throw Error(source, "user", "expected a user name, got none");
  // The login command must be writable: check it once with a placeholder CTAG.
  try {
    format_tl1_command({"ACT-USER", options_.tid, credentials_.user, "1", "", {"x"}});
  } catch (const Error& e) {
    throw Error(source, e.field() == "aid" ? "user" : e.field(), e.message());
  }
  for (const char c : credentials_.password) {
    if (c < 0x20 || c > 0x7e || c == '"') {
      throw Error(source, "password", "expected printable ASCII without '\"'");
    }
  }
  if (options_.max_attempts < 1 || options_.connect_timeout <= Time::zero() ||
      options_.command_timeout <= Time::zero() || options_.max_command_time <= Time::zero() ||
      options_.retry_delay < Time::zero()) {
    throw Error(source, "options",
                "expected positive timeouts, a non-negative retry delay and at least 1 attempt");
  }
}

Tl1Client::~Tl1Client() {
  // Best effort: a session the OCS does not see end stays until its own idle timeout. Nothing
  // here may throw, and the destructor does not wait for the answer.
  try {
    if (logged_in_ && connection_.is_open()) {
      Tl1Command logout{"CANC-USER", options_.tid, credentials_.user, next_ctag(), "", {}};
      connection_.send(format_tl1_command(logout) + "\r\n",
                       std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
    }
  } catch (...) {
  }
}

void Tl1Client::fail(const std::string& message) const {
  throw Error("OCS " + printable(address_), "", message);
}

std::string Tl1Client::next_ctag() {
  ctag_counter_ = ctag_counter_ >= kMaxCtag ? 1 : ctag_counter_ + 1;
  return std::to_string(ctag_counter_);
}

std::string Tl1Client::describe(const Tl1Command& command) {
  if (command.verb == "ACT-USER") return fmt::format("login as {}", quote_input(command.aid));
  return fmt::format("'{}:{}:{}'", command.verb, command.tid, command.aid);
}

void Tl1Client::open_and_login() {
  connection_.close();
  reader_.reset();
  logged_in_ = false;
  const auto deadline = std::chrono::steady_clock::now() + as_duration(options_.connect_timeout);
  try {
    connection_ = TcpConnection::connect(address_, deadline);
  } catch (const ConnectionTimeout&) {
    throw ConnectionTimeout(
        fmt::format("connect: no connection within {}", seconds_text(options_.connect_timeout)));
  }
  const bool bare = std::all_of(credentials_.password.begin(), credentials_.password.end(),
                                is_bare_password_char) &&
                    !credentials_.password.empty();
  Tl1Command login{"ACT-USER",
                   options_.tid,
                   credentials_.user,
                   "",
                   "",
                   {bare ? credentials_.password : "\"" + credentials_.password + "\""}};
  exchange(login, describe(login));
  logged_in_ = true;
}

void Tl1Client::connect() {
  if (connection_.is_open() && logged_in_) return;
  std::string last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(as_duration(options_.retry_delay));
    try {
      open_and_login();
      return;
    } catch (const ConnectionBroken& e) {
      last = e.message();
    } catch (const ConnectionTimeout& e) {
      last = e.message();
    }
  }
  connection_.close();
  fail(fmt::format("could not connect and log in ({} attempt{}): {}", options_.max_attempts,
                   options_.max_attempts == 1 ? "" : "s", last));
}

void Tl1Client::logout() {
  const auto end_session = [&] {
    connection_.close();
    reader_.reset();
    logged_in_ = false;
  };
  if (connection_.is_open() && logged_in_) {
    Tl1Command command{"CANC-USER", options_.tid, credentials_.user, "", "", {}};
    try {
      exchange(command, describe(command));
    } catch (const ConnectionBroken&) {
      // Closed before answering: the session has ended either way.
    } catch (...) {
      end_session();
      throw;
    }
  }
  end_session();
}

Tl1Response Tl1Client::exchange(Tl1Command& command, const std::string& description) {
  std::vector<Tl1Command> one{command};
  Tl1Response answer;
  exchange_all(
      one, 1, [&](std::size_t, Tl1Response& response) { answer = std::move(response); },
      &description);
  command = std::move(one.front());
  if (answer.completion == Tl1Completion::Deny) {
    const std::string what =
        command.verb == "ACT-USER" ? description : fmt::format("'{}'", format_tl1_command(command));
    const std::string code = answer.error_code.empty() ? "no code" : answer.error_code;
    throw Tl1Denied(
        "OCS " + printable(address_),
        fmt::format("{}: denied ({}{})", what, code,
                    answer.comment.empty() ? "" : ": " + quote_input(answer.comment, 200)),
        answer.error_code, command.verb);
  }
  return answer;
}

void Tl1Client::exchange_all(std::vector<Tl1Command>& commands, std::size_t window,
                             const std::function<void(std::size_t, Tl1Response&)>& answered,
                             const std::string* description) {
  using Clock = std::chrono::steady_clock;
  using Pending = PendingCommand;
  const std::string source = "OCS " + printable(address_);
  std::map<std::string, Pending> pending;  // by CTAG
  std::size_t next = 0;
  const auto drop_connection = [&] {
    connection_.close();
    reader_.reset();
  };
  const auto earliest = [&] {
    auto first = pending.begin();
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (it->second.deadline < first->second.deadline) first = it;
    }
    return first;
  };
  while (next < commands.size() || !pending.empty()) {
    // Send while the window has room: one write for all of them.
    std::string out;
    const auto now = Clock::now();
    while (next < commands.size() && pending.size() < window) {
      Tl1Command& command = commands[next];
      command.ctag = next_ctag();
      Pending p{next,
                command.verb == "ACT-USER" && description
                    ? *description
                    : fmt::format("'{}'", format_tl1_command(command)),
                now + as_duration(options_.max_command_time),
                {},
                {}};
      p.deadline = std::min(p.bound, now + as_duration(options_.command_timeout));
      out += format_tl1_command(command) + "\r\n";
      pending.emplace(command.ctag, std::move(p));
      ++next;
    }
    if (!out.empty()) connection_.send(out, earliest()->second.deadline);

    std::optional<Tl1Message> message;
    try {
      message = reader_.next();
    } catch (const Error& e) {
      drop_connection();
      throw Error(source, "",
                  fmt::format("{}: a malformed answer ({})", earliest()->second.what, e.what()));
    }
    if (!message) {
      const auto first = earliest();
      std::string bytes;
      try {
        bytes = connection_.receive(kReceiveBytes, first->second.deadline);
      } catch (const ConnectionTimeout&) {
        throw Error(
            source, "",
            fmt::format(
                "{}: no response within {}{}", first->second.what,
                seconds_text(options_.command_timeout),
                first->second.deadline == first->second.bound ? " (in progress too long)" : ""));
      }
      try {
        reader_.feed(bytes);
      } catch (const Error& e) {
        // The stream's framing is lost: nothing after this point can be matched to a command.
        drop_connection();
        throw Error(source, "",
                    fmt::format("{}: a malformed answer ({})", first->second.what, e.what()));
      }
      continue;
    }
    if (const auto* ack = std::get_if<Tl1Acknowledgment>(&*message)) {
      const auto it = pending.find(ack->ctag);
      if (it == pending.end()) continue;
      if (ack->code == "IP") {
        it->second.deadline =
            std::min(it->second.bound, Clock::now() + as_duration(options_.command_timeout));
      } else if (ack->code != "PF" && ack->code != "OK") {
        // NA, NG, RL: the OCS will not carry the command out now.
        throw Tl1Denied(
            source, fmt::format("{} not accepted (acknowledgment {})", it->second.what, ack->code),
            ack->code, commands[it->second.index].verb);
      }
      continue;
    }
    if (std::holds_alternative<Tl1AutonomousMessage>(*message)) {
      ++autonomous_messages_;
      continue;
    }
    Tl1Response& response = std::get<Tl1Response>(*message);
    const auto it = pending.find(response.ctag);
    if (it == pending.end()) continue;  // a late answer to an earlier command
    Pending& p = it->second;
    if (!gather(p, response)) {
      p.deadline = std::min(p.bound, Clock::now() + as_duration(options_.command_timeout));
      p.gathered_bytes += kMaxTl1LineBytes;  // counted high: a message's lines are at most this
      if (p.gathered_bytes > kMaxGatheredBytes) {
        drop_connection();
        throw Error(source, "",
                    fmt::format("{}: an answer continued over more than {} bytes", p.what,
                                kMaxGatheredBytes));
      }
      continue;
    }
    const std::size_t index = p.index;
    Tl1Response whole = std::move(p.gathered);
    pending.erase(it);
    answered(index, whole);
  }
}

std::optional<Tl1AutonomousMessage> Tl1Client::await_autonomous(Time wait) {
  if (!connection_.is_open() || !logged_in_) connect();
  const std::string source = "OCS " + printable(address_);
  const auto deadline = std::chrono::steady_clock::now() + as_duration(wait);
  const auto lost = [&](const std::string& what) {
    connection_.close();
    reader_.reset();
    logged_in_ = false;
    return Error(source, "", "waiting for alarms: " + what);
  };
  for (;;) {
    std::optional<Tl1Message> message;
    try {
      message = reader_.next();
    } catch (const Error& e) {
      throw lost(fmt::format("a malformed message ({})", e.what()));
    }
    if (message) {
      if (auto* alarm = std::get_if<Tl1AutonomousMessage>(&*message)) return std::move(*alarm);
      continue;  // a late answer or acknowledgment
    }
    try {
      reader_.feed(connection_.receive(kReceiveBytes, deadline));
    } catch (const ConnectionTimeout&) {
      return std::nullopt;
    } catch (const ConnectionBroken& e) {
      throw lost(e.message());
    } catch (const Error& e) {
      throw lost(fmt::format("a malformed message ({})", e.what()));
    }
  }
}

void Tl1Client::execute_pipelined(
    std::vector<Tl1Command> commands, std::size_t window,
    const std::function<void(std::size_t, const Tl1Response&)>& answered) {
  if (window == 0) window = 1;
  for (Tl1Command& command : commands)
    command.tid = command.tid.empty() ? options_.tid : command.tid;
  try {
    if (!connection_.is_open() || !logged_in_) connect();
    exchange_all(commands, window,
                 [&](std::size_t k, Tl1Response& response) { answered(k, response); });
  } catch (const ConnectionBroken& e) {
    connection_.close();
    logged_in_ = false;
    fail(fmt::format("{} pipelined commands: the connection broke ({})", commands.size(),
                     e.message()));
  } catch (const ConnectionTimeout& e) {
    connection_.close();
    logged_in_ = false;
    fail(fmt::format("{} pipelined commands: {}", commands.size(), e.message()));
  }
}

Tl1Response Tl1Client::execute_counting(Tl1Command command, bool& reconnected) {
  reconnected = false;
  command.tid = command.tid.empty() ? options_.tid : command.tid;
  std::string last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    try {
      if (attempt > 1) {
        std::this_thread::sleep_for(as_duration(options_.retry_delay));
        reconnected = true;
      }
      if (!connection_.is_open() || !logged_in_) open_and_login();
      return exchange(command, describe(command));
    } catch (const ConnectionBroken& e) {
      connection_.close();
      logged_in_ = false;
      last = e.message();
    } catch (const ConnectionTimeout& e) {
      connection_.close();
      logged_in_ = false;
      last = e.message();
    }
  }
  fail(fmt::format("{}: the connection broke {} time{} (last: {})", describe(command),
                   options_.max_attempts, options_.max_attempts == 1 ? "" : "s", last));
}

void Tl1Client::require_done(const Tl1Response& response, const char* verb) const {
  if (response.completion != Tl1Completion::Compld && response.completion != Tl1Completion::Rtrv) {
    fail(fmt::format("{} answered {} (expected COMPLD){}", verb,
                     completion_name(response.completion),
                     response.comment.empty() ? "" : ": " + quote_input(response.comment, 200)));
  }
}

Tl1Response Tl1Client::execute(Tl1Command command) {
  bool reconnected = false;
  return execute_counting(std::move(command), reconnected);
}

void Tl1Client::connect_ports(int a, int b) {
  bool reconnected = false;
  try {
    require_done(
        execute_counting({"ENT-PATCH", "", format_patch_line(a, b), "", "", {}}, reconnected),
        "ENT-PATCH");
  } catch (const Tl1Denied&) {
    if (!reconnected) throw;
    const auto in_force = patches();
    const bool done = std::find_if(in_force.begin(), in_force.end(), [&](const auto& p) {
                        return (p.first == a && p.second == b) || (p.first == b && p.second == a);
                      }) != in_force.end();
    if (!done) throw;
  }
}

void Tl1Client::disconnect_port(int a) {
  bool reconnected = false;
  try {
    require_done(execute_counting({"DLT-PATCH", "", std::to_string(a), "", "", {}}, reconnected),
                 "DLT-PATCH");
  } catch (const Tl1Denied&) {
    if (!reconnected) throw;
    const auto in_force = patches();
    const bool free = std::none_of(in_force.begin(), in_force.end(),
                                   [&](const auto& p) { return p.first == a || p.second == a; });
    if (!free) throw;
  }
}

std::vector<std::pair<int, int>> Tl1Client::patches() {
  const Tl1Response response = execute({"RTRV-PATCH", "", "", "", "", {}});
  require_done(response, "RTRV-PATCH");
  try {
    return parse_patches(response);
  } catch (const Error& e) {
    fail(fmt::format("RTRV-PATCH answered an unreadable line: {}", e.what()));
  }
}

std::vector<PortStatus> Tl1Client::port_status() {
  const Tl1Response response = execute({"RTRV-PORT-STATUS", "", "ALL", "", "", {}});
  require_done(response, "RTRV-PORT-STATUS");
  try {
    return parse_port_status(response);
  } catch (const Error& e) {
    fail(fmt::format("RTRV-PORT-STATUS answered an unreadable line: {}", e.what()));
  }
}

}  // namespace mfabric::tl1
