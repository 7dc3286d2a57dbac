#include "tl1/tcp_connection.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include "core/output_text.h"

namespace mfabric::tl1 {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

int milliseconds_until(Deadline deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 60'000 ? 60'000 : static_cast<int>(left.count());
}

}  // namespace

HostPort parse_host_port(std::string_view address) {
  const auto bad = [&] {
    throw Error("", "address",
                fmt::format("expected host:port (or [IPv6]:port) with a port of 1 to 65535, got {}",
                            quote_input(address)));
  };
  HostPort out;
  std::string_view port;
  if (!address.empty() && address.front() == '[') {
    const std::size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      bad();
    }
    out.host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) bad();
    out.host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (out.host.find(':') != std::string::npos) bad();
  }
  if (out.host.empty() || port.empty() || port.size() > 5) bad();
  for (const char c : out.host) {
    if (c <= 0x20 || c >= 0x7f) bad();
  }
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (ec != std::errc() || end != port.data() + port.size() || out.port < 1 || out.port > 65535) {
    bad();
  }
  return out;
}

TcpConnection TcpConnection::connect(std::string_view address, Deadline deadline) {
  const HostPort where = parse_host_port(address);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(where.port);
  if (const int rc = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw ConnectionBroken(fmt::format("connect: cannot resolve host {}: {}",
                                       quote_input(where.host), ::gai_strerror(rc)));
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  std::string last_failure = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    FileDescriptor socket(
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (socket.get() < 0) {
      last_failure = errno_text(errno);
      continue;
    }
    TcpConnection connection(std::move(socket));
    if (::connect(connection.socket_.get(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_failure = errno_text(errno);
        continue;
      }
      connection.wait_for(POLLOUT, deadline, "connect");
      int error = 0;
      socklen_t length = sizeof error;
      ::getsockopt(connection.socket_.get(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        last_failure = errno_text(error);
        continue;
      }
    }
    // Commands are small and each waits for its answer: send them at once.
    const int one = 1;
    ::setsockopt(connection.socket_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return connection;
  }
  throw ConnectionBroken(fmt::format("connect: {}", last_failure));
}

void TcpConnection::wait_for(short events, Deadline deadline, const char* what) {
  while (true) {
    pollfd p{socket_.get(), events, 0};
    const int ready = ::poll(&p, 1, milliseconds_until(deadline));
    if (ready > 0) return;  // readable, writable, or an error the next call reports
    if (ready < 0 && errno != EINTR) {
      throw ConnectionBroken(fmt::format("{}: poll: {}", what, errno_text(errno)));
    }
    if (ready == 0 && std::chrono::steady_clock::now() >= deadline) {
      throw ConnectionTimeout(fmt::format("{}: timed out", what));
    }
  }
}

void TcpConnection::send(std::string_view bytes, Deadline deadline) {
  if (!is_open()) throw ConnectionBroken("send: not connected");
  while (!bytes.empty()) {
    const ssize_t sent = ::send(socket_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_for(POLLOUT, deadline, "send");
      continue;
    }
    const int error = errno;
    close();
    throw ConnectionBroken(fmt::format("send: {}", errno_text(error)));
  }
}

std::string TcpConnection::receive(std::size_t max_bytes, Deadline deadline) {
  if (!is_open()) throw ConnectionBroken("receive: not connected");
  std::string buffer(max_bytes, '\0');
  while (true) {
    const ssize_t got = ::recv(socket_.get(), buffer.data(), buffer.size(), 0);
    if (got > 0) {
      buffer.resize(static_cast<std::size_t>(got));
      return buffer;
    }
    if (got == 0) {
      close();
      throw ConnectionBroken("receive: the connection was closed by the peer");
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_for(POLLIN, deadline, "receive");
      continue;
    }
    const int error = errno;
    close();
    throw ConnectionBroken(fmt::format("receive: {}", errno_text(error)));
  }
}

}  // namespace mfabric::tl1
