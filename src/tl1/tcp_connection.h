// A TCP connection with deadlines (POSIX sockets, poll): the transport under a TL1 session.
// Every call that waits takes a deadline, so nothing blocks past it; a broken connection is a
// ConnectionBroken, a deadline passed is a ConnectionTimeout, so that a session can tell "try
// again on a new connection" from "the peer is slow". Writes never raise SIGPIPE.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/file_descriptor.h"

namespace mfabric::tl1 {

using Deadline = std::chrono::steady_clock::time_point;

// The peer closed or reset the connection, it never opened (refused, unreachable), or a send or
// receive failed otherwise: in every case the connection is closed and a new one may work.
class ConnectionBroken : public Error {
 public:
  using Error::Error;
};

// A deadline passed while connecting, sending or waiting for bytes.
class ConnectionTimeout : public Error {
 public:
  using Error::Error;
};

// "host:port" or "[v6-address]:port" split; mfabric::Error (field "address") naming what was
// expected otherwise (port 1 to 65535).
struct HostPort {
  std::string host;
  int port = 0;
};
HostPort parse_host_port(std::string_view address);

class TcpConnection {
 public:
  // Connects to `address` ("host:port"), trying each address the host resolves to, before
  // `deadline`. Name resolution itself (getaddrinfo) is not bounded by the deadline: give a
  // numeric address where that matters. ConnectionBroken when refused or unreachable,
  // ConnectionTimeout past the deadline, mfabric::Error for a bad address. The messages start
  // with what failed ("connect: ..."); the caller names the peer.
  static TcpConnection connect(std::string_view address, Deadline deadline);
  // Not connected.
  TcpConnection() = default;

  // Sends all of `bytes` before `deadline`.
  void send(std::string_view bytes, Deadline deadline);
  // Waits until bytes arrive or `deadline` passes; returns at most `max_bytes` of them.
  // ConnectionBroken when the peer closed the connection (end of stream) or reset it.
  std::string receive(std::size_t max_bytes, Deadline deadline);

  bool is_open() const { return socket_.get() >= 0; }
  void close() { socket_ = FileDescriptor(); }

 private:
  explicit TcpConnection(FileDescriptor socket) : socket_(std::move(socket)) {}
  // Waits for `events` (POLLIN, POLLOUT) until `deadline`; ConnectionTimeout after it.
  void wait_for(short events, Deadline deadline, const char* what);

  FileDescriptor socket_;
};

}  // namespace mfabric::tl1
