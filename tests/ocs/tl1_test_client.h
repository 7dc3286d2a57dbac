// A TL1 client for tests of the OCS emulator: a blocking loopback socket with a receive timeout
// and the TL1 message layer's reader, so that a test that waits for an answer fails instead of
// hanging.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <variant>

#include "tl1/tl1_message.h"

namespace mfabric::testing {

class Tl1TestClient {
 public:
  // Connects to "127.0.0.1:PORT" (what the emulator prints).
  explicit Tl1TestClient(const std::string& address,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    const std::size_t colon = address.rfind(':');
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0)
      throw std::runtime_error("cannot connect to " + address);
  }
  ~Tl1TestClient() { ::close(fd_); }
  Tl1TestClient(const Tl1TestClient&) = delete;
  Tl1TestClient& operator=(const Tl1TestClient&) = delete;

  void send(const std::string& text) {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const ssize_t n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<std::size_t>(n);
    }
  }

  // The next message; throws when none comes within the timeout or the server closes.
  tl1::Tl1Message receive() {
    for (;;) {
      if (auto message = reader_.next()) return *message;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) throw std::runtime_error("no answer from the emulator (timeout or closed)");
      reader_.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    }
  }

  // The next message, which must be a response.
  tl1::Tl1Response response() {
    tl1::Tl1Message message = receive();
    if (!std::holds_alternative<tl1::Tl1Response>(message))
      throw std::runtime_error("expected a response, got " + tl1::format_tl1_message(message));
    return std::get<tl1::Tl1Response>(message);
  }

  // Sends `command` and returns its response (for commands answered at once).
  tl1::Tl1Response ask(const std::string& command) {
    send(command);
    return response();
  }

  void log_in(const std::string& user = "admin", const std::string& password = "admin") {
    const tl1::Tl1Response r = ask("ACT-USER::" + user + ":1::" + password + ";");
    ASSERT_EQ(r.completion, tl1::Tl1Completion::Compld) << r.error_code << " " << r.comment;
  }

 private:
  int fd_ = -1;
  tl1::Tl1ResponseReader reader_;
};

}  // namespace mfabric::testing
