// A TL1 server for the client's tests: listens on a free loopback port and plays one script per
// connection it accepts, in order, on its own thread. Every wait is bounded (kWait), so the
// server stops by itself even when the client under test misbehaves; the destructor joins it.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/file_descriptor.h"
#include "tl1/tl1_message.h"

namespace mfabric::tl1::scripted {

// Longest the server waits for a connection or a command.
inline constexpr std::chrono::milliseconds kWait{5000};

// One accepted connection, as a script sees it.
class ScriptedConnection {
 public:
  explicit ScriptedConnection(FileDescriptor socket, std::vector<std::string>& log,
                              std::mutex& log_mutex)
      : socket_(std::move(socket)), log_(log), log_mutex_(log_mutex) {}

  // The next command; nullopt when the client closed the connection or sent nothing for kWait.
  std::optional<Tl1Command> read_command() {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (true) {
      if (std::optional<std::string> text = reader_.next_text()) {
        {
          const std::lock_guard lock(log_mutex_);
          log_.push_back(*text);
        }
        return parse_tl1_command(*text);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{socket_.get(), POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char buffer[4096];
      const ssize_t got = ::recv(socket_.get(), buffer, sizeof buffer, 0);
      if (got <= 0) return std::nullopt;
      reader_.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }

  // Reads a command and answers COMPLD with `lines`; returns the command (nullopt: none came).
  std::optional<Tl1Command> complete(std::vector<std::string> lines = {}) {
    std::optional<Tl1Command> command = read_command();
    if (command) send(format_tl1_response(response(command->ctag, std::move(lines))));
    return command;
  }

  // False when the client went away (its test says what it expected).
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(socket_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // Waits until the client closes the connection (or kWait), reading and dropping what it sends.
  void wait_for_close() {
    while (read_command()) {
    }
  }

  static Tl1Response response(std::string ctag, std::vector<std::string> lines = {},
                              Tl1Completion completion = Tl1Completion::Compld) {
    Tl1Response r;
    r.sid = "OCS-TEST";
    r.date = "26-11-26";
    r.time = "13:44:05";
    r.ctag = std::move(ctag);
    r.completion = completion;
    r.lines = std::move(lines);
    return r;
  }

  static Tl1Response deny(std::string ctag, std::string code, std::string comment) {
    Tl1Response r = response(std::move(ctag), {}, Tl1Completion::Deny);
    r.error_code = std::move(code);
    r.comment = std::move(comment);
    return r;
  }

 private:
  FileDescriptor socket_;
  Tl1CommandReader reader_;
  std::vector<std::string>& log_;
  std::mutex& log_mutex_;
};

class ScriptedTl1Server {
 public:
  using Script = std::function<void(ScriptedConnection&)>;

  explicit ScriptedTl1Server(std::vector<Script> scripts) : scripts_(std::move(scripts)) {
    listener_ = FileDescriptor(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;  // a free port, read back below
    socklen_t length = sizeof address;
    if (listener_.get() < 0 ||
        ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_.get(), 4) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("scripted TL1 server: cannot listen on a loopback port");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  // Stops waiting for connections that have not come, and joins.
  ~ScriptedTl1Server() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // Waits until every script has run (or its connection never came within kWait).
  void join() {
    if (thread_.joinable()) thread_.join();
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // Every command text received, in order, over all connections.
  std::vector<std::string> commands() {
    const std::lock_guard lock(log_mutex_);
    return log_;
  }
  // Connections accepted so far.
  int accepted() const { return accepted_; }

 private:
  void serve() {
    for (Script& script : scripts_) {
      // In short slices, so that the destructor need not wait kWait for a client that is done.
      const auto deadline = std::chrono::steady_clock::now() + kWait;
      pollfd p{listener_.get(), POLLIN, 0};
      while (!stop_ && std::chrono::steady_clock::now() < deadline && ::poll(&p, 1, 20) == 0) {
      }
      if (!(p.revents & POLLIN)) return;
      FileDescriptor socket(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (socket.get() < 0) return;
      ++accepted_;
      // Each send() goes out at once, as an OCS's messages do (no Nagle delay in the tests).
      const int one = 1;
      ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ScriptedConnection connection(std::move(socket), log_, log_mutex_);
      try {
        script(connection);
      } catch (const std::exception&) {
        // A command the script could not read: the client's test sees the connection close.
      }
    }
  }

  std::vector<Script> scripts_;
  FileDescriptor listener_;
  int port_ = 0;
  std::thread thread_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace mfabric::tl1::scripted
