#include "ocs/ocs_emulator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <queue>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/file_descriptor.h"
#include "core/input_files.h"
#include "core/output_text.h"
#include "ocs/ocs_tl1_handler.h"
#include "tl1/tl1_message.h"

namespace mfabric::ocs {
namespace {

// Output a session has not read yet beyond which it is dropped (a peer that never reads).
constexpr std::size_t kMaxUnsentBytes = std::size_t{4} << 20;
constexpr std::size_t kReadChunk = 16384;

std::string socket_error_text(int error) {
  return std::strerror(error);
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    throw Error("", "", "cannot make a socket non-blocking: " + socket_error_text(errno));
}

// "HOST:PORT" -> (host, port); the host may be "[v6]". Not tcp_connection.h's parse_host_port:
// a listening address may name port 0 (any free port), a peer's may not.
std::pair<std::string, std::string> split_address(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  const auto bad = [&] {
    return Error("", "--listen",
                 fmt::format("expected HOST:PORT (e.g. 127.0.0.1:0; port 0 picks a free one), "
                             "got {}",
                             quote_input(text)));
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw bad();
  std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) > 65535)
    throw bad();
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return {host, port};
}

// The numeric host and port of a socket address.
std::pair<std::string, int> numeric(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    port = ntohs(in6.sin6_port);
  }
  return {host, port};
}

FileDescriptor listen_on(const std::string& text, std::string* bound) {
  const auto [host, port] = split_address(text);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw Error("", "--listen",
                fmt::format("cannot resolve {}: {}", quote_input(host), ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, ::freeaddrinfo);
  int last_error = 0;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    FileDescriptor fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) {
      last_error = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 16) != 0) {
      last_error = errno;
      continue;
    }
    set_nonblocking(fd.get());
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &length);
    const auto [bound_host, bound_port] = numeric(local);
    *bound = local.ss_family == AF_INET6 ? fmt::format("[{}]:{}", bound_host, bound_port)
                                         : fmt::format("{}:{}", bound_host, bound_port);
    return fd;
  }
  throw Error(
      "", "--listen",
      fmt::format("cannot listen on {}: {}", quote_input(text), socket_error_text(last_error)));
}

}  // namespace

std::map<std::string, std::string> read_users_file(const std::string& path) {
  const std::string text =
      read_text_file(path, "users file", "a file of user:password lines", std::int64_t{1} << 20);
  std::map<std::string, std::string> users;
  std::istringstream in(text);
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
    const std::size_t colon = line.find(':');
    const std::string user = line.substr(0, colon);
    const bool word = !user.empty() && user.find_first_not_of(
                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789-_.") == std::string::npos;
    if (colon == std::string::npos || !word || colon + 1 == line.size()) {
      throw Error(path, "",
                  fmt::format("line {}: expected USER:PASSWORD (a user of letters, digits, - _ .)",
                              number));
    }
    if (!users.emplace(user, line.substr(colon + 1)).second)
      throw Error(path, "", fmt::format("line {}: user '{}' given twice", number, user));
  }
  if (users.empty()) throw Error(path, "", "no user (expected USER:PASSWORD lines)");
  return users;
}

class OcsEmulator::Server {
 public:
  explicit Server(OcsEmulatorOptions options)
      : options_(std::move(options)),
        // Listening first: a bad --listen is refused before the state file is created.
        listener_(listen_on(options_.listen, &address_)),
        state_(options_.ports),
        journal_(options_.state_file, options_.ports, &state_, options_.compact_after),
        handler_(&state_, &journal_,
                 options_.users.empty()
                     ? std::map<std::string, std::string>{{kDefaultUser, kDefaultPassword}}
                     : options_.users,
                 options_.switching, options_.sid),
        started_(std::chrono::steady_clock::now()) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0)
      throw Error("", "", "cannot make the stop pipe: " + socket_error_text(errno));
    stop_read_ = FileDescriptor(pipe_fds[0]);
    stop_write_ = FileDescriptor(pipe_fds[1]);
  }

  const std::string& address() const { return address_; }
  const OcsState& state() const { return state_; }
  const JournalReplay& replay() const { return journal_.replay(); }

  void request_stop() {
    const char byte = 1;
    // A full pipe already holds a request.
    [[maybe_unused]] const ssize_t rc = ::write(stop_write_.get(), &byte, 1);
  }

  OcsEmulatorStats run() {
    const std::optional<Time> deadline =
        options_.run_for ? std::optional<Time>(now() + *options_.run_for) : std::nullopt;
    for (;;) {
      deliver_due();
      const Time t = now();
      if (deadline && t >= *deadline) break;
      std::optional<Time> wake = deadline;
      if (!due_.empty()) wake = wake ? std::min(*wake, due_.top().at) : due_.top().at;

      std::vector<pollfd> fds;
      fds.push_back({stop_read_.get(), POLLIN, 0});
      fds.push_back({listener_.get(), POLLIN, 0});
      for (const auto& [id, session] : sessions_) {
        short events = POLLIN;
        if (!session.unsent.empty()) events |= POLLOUT;
        fds.push_back({session.fd.get(), events, 0});
      }
      int timeout_ms = -1;
      if (wake) {
        // Rounded up: a completion is never sent before its mirrors have settled.
        const std::int64_t ps = std::max<std::int64_t>(0, (*wake - t).ps());
        timeout_ms = static_cast<int>(std::min<std::int64_t>((ps + 999999999) / 1000000000, 1000));
      }
      if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
        if (errno == EINTR) continue;
        throw Error("", "", "poll failed: " + socket_error_text(errno));
      }
      if (fds[0].revents) break;
      std::vector<std::uint64_t> ids;
      for (const auto& [id, session] : sessions_)
        ids.push_back(id);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const short revents = fds[k + 2].revents;
        if (revents & (POLLIN | POLLHUP | POLLERR)) read_from(ids[k]);
        if (sessions_.count(ids[k]) && (revents & POLLOUT)) flush(ids[k]);
      }
      commit();
      if (fds[1].revents & POLLIN) accept_sessions();
    }
    commit();
    // Changes waiting for their mirrors are journaled already; say so to whoever is still here.
    for (auto& [id, session] : sessions_)
      (void)::send(session.fd.get(), session.unsent.data(), session.unsent.size(),
                   MSG_NOSIGNAL | MSG_DONTWAIT);
    sessions_.clear();
    stats_.changes = handler_.changes();
    return stats_;
  }

 private:
  struct Session {
    FileDescriptor fd;
    std::string peer;  // the address without the port
    tl1::Tl1CommandReader reader;
    OcsLogin login;
    std::string unsent;
    std::size_t waiting = 0;  // completions not sent yet
  };
  struct Due {
    Time at;
    std::uint64_t order;  // arrival, so that equal times go out in the order accepted
    std::uint64_t session;
    std::string message;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  Time now() const {
    return Time::nanoseconds(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now() - started_)
                                 .count());
  }

  void accept_sessions() {
    for (;;) {
      sockaddr_storage from{};
      socklen_t length = sizeof from;
      FileDescriptor fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&from), &length,
                                  SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (fd.get() < 0) return;  // EAGAIN, or a connection gone before it was taken
      if (sessions_.size() >= options_.max_sessions) {
        const std::string text = handler_.malformed(
            fmt::format("too many sessions (at most {}); try again later", options_.max_sessions));
        (void)::send(fd.get(), text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        continue;  // closed
      }
      const int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      Session session;
      session.fd = std::move(fd);
      session.peer = numeric(from).first;
      sessions_.emplace(next_session_++, std::move(session));
      ++stats_.sessions;
    }
  }

  void read_from(std::uint64_t id) {
    Session& session = sessions_.at(id);
    char buffer[kReadChunk];
    const ssize_t n = ::recv(session.fd.get(), buffer, sizeof buffer, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      sessions_.erase(id);
      return;
    }
    if (n < 0) return;
    try {
      session.reader.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    } catch (const Error& e) {
      // Too long a command: refused, and the reader has skipped it.
      send(session, handler_.malformed(e.what()));
    }
    for (;;) {
      std::optional<tl1::Tl1Command> command;
      try {
        command = session.reader.next();
      } catch (const Error& e) {
        send(session, handler_.malformed(e.what()));
        ++stats_.commands;
        continue;
      }
      if (!command) break;
      ++stats_.commands;
      const bool can_wait = session.waiting < options_.max_pending_per_session;
      OcsReply reply;
      try {
        reply = handler_.handle(*command, &session.login, session.peer, can_wait, now());
      } catch (const Error& e) {
        // An answer that would not format (a bug, or input the checks missed): the session is
        // told, the emulator goes on.
        reply = OcsReply{handler_.malformed(e.what()), {}, {}};
      }
      send(session, reply.now);
      if (!reply.to_sessions.empty()) {
        for (auto& [other_id, other] : sessions_) {
          if (other.login.active) send(other, reply.to_sessions);
        }
      }
      if (reply.later_at) {
        ++session.waiting;
        due_.push({*reply.later_at, next_order_++, id, std::move(reply.later)});
      }
    }
    if (session.unsent.size() > kMaxUnsentBytes) sessions_.erase(id);
  }

  void deliver_due() {
    const Time t = now();
    while (!due_.empty() && due_.top().at <= t) {
      const Due& due = due_.top();
      const auto session = sessions_.find(due.session);
      if (session != sessions_.end()) {
        --session->second.waiting;
        send(session->second, due.message);
      }
      due_.pop();
    }
  }

  // The group commit: every change the commands read in this round wrote is flushed at once,
  // then the replies held back for it go out. A flush that fails stops the emulator (an error out
  // of run()) with those replies unsent: a change that may not be on disk is never answered.
  void commit() {
    if (!journal_.unsynced()) return;
    journal_.sync();
    ++stats_.flushes;
    std::vector<std::uint64_t> gone;
    for (auto& [id, session] : sessions_) {
      if (!session.unsent.empty() && !flush_session(session)) gone.push_back(id);
    }
    for (const std::uint64_t id : gone)
      sessions_.erase(id);
  }

  // Queues `text` for the session and sends what the socket takes, unless a change is waiting
  // for the journal's flush (then commit() sends it).
  void send(Session& session, const std::string& text) {
    session.unsent += text;
    if (journal_.unsynced()) return;
    const ssize_t n = ::send(session.fd.get(), session.unsent.data(), session.unsent.size(),
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) session.unsent.erase(0, static_cast<std::size_t>(n));
  }

  void flush(std::uint64_t id) {
    if (journal_.unsynced()) return;
    if (!flush_session(sessions_.at(id))) sessions_.erase(id);
  }
  // Sends what the socket takes; false when the connection is gone.
  static bool flush_session(Session& session) {
    const ssize_t n = ::send(session.fd.get(), session.unsent.data(), session.unsent.size(),
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) session.unsent.erase(0, static_cast<std::size_t>(n));
    return n >= 0 || errno == EAGAIN || errno == EINTR;
  }

  OcsEmulatorOptions options_;
  std::string address_;
  FileDescriptor listener_;
  OcsState state_;
  OcsJournal journal_;
  OcsTl1Handler handler_;
  std::chrono::steady_clock::time_point started_;
  FileDescriptor stop_read_;
  FileDescriptor stop_write_;
  std::map<std::uint64_t, Session> sessions_;
  std::uint64_t next_session_ = 1;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::uint64_t next_order_ = 0;
  OcsEmulatorStats stats_;
};

OcsEmulator::OcsEmulator(OcsEmulatorOptions options)
    : server_(std::make_unique<Server>(std::move(options))) {}
OcsEmulator::~OcsEmulator() = default;
const std::string& OcsEmulator::address() const {
  return server_->address();
}
const OcsState& OcsEmulator::state() const {
  return server_->state();
}
const JournalReplay& OcsEmulator::replay() const {
  return server_->replay();
}
OcsEmulatorStats OcsEmulator::run() {
  return server_->run();
}
void OcsEmulator::request_stop() {
  server_->request_stop();
}

}  // namespace mfabric::ocs
