// The region controller's gRPC API (controller.proto) in front of a RegionControllerService, with
// its authentication: every call carries the daemon's bearer token, or comes over TLS from a
// client whose certificate the configured CA signed, or both when both are configured; anything
// else is UNAUTHENTICATED. A server with neither is refused: the API moves circuits.
//
// Built only with gRPC (MFABRIC_HAVE_GRPC); the header itself does not include gRPC.
#pragma once

#include <memory>
#include <string>

#include "controller/region_service.h"
#include "core/units.h"

namespace mfabric::controller {

struct ControllerAuth {
  std::string token;  // empty: no token; otherwise "authorization: Bearer TOKEN" on every call
  // PEM texts; all three or none: TLS that requires and verifies client certificates.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;

  // mfabric::Error (field "auth") unless a token or the whole TLS triple is given.
  void validate() const;
};

// Tokens are at least this long, so that guessing one is hopeless.
inline constexpr std::size_t kMinTokenBytes = 16;

// The token of a --token-file: its first line, without trailing spaces. mfabric::Error naming the
// file unless it is kMinTokenBytes to 4096 printable ASCII characters without spaces.
std::string read_token_file(const std::string& path);

// Whether `given` equals `expected`, in a time that depends only on their lengths.
bool same_secret(const std::string& given, const std::string& expected);

class ControllerRpcServer {
 public:
  // Listens on `listen` (HOST:PORT; port 0 picks a free one) and serves on gRPC's threads.
  // mfabric::Error (field "--listen" or "auth") when it cannot bind, or no authentication or an
  // incomplete TLS triple is given.
  ControllerRpcServer(RegionControllerService& service, const std::string& listen,
                      ControllerAuth auth);
  // Shuts down (see shutdown()).
  ~ControllerRpcServer();
  ControllerRpcServer(const ControllerRpcServer&) = delete;
  ControllerRpcServer& operator=(const ControllerRpcServer&) = delete;

  // "127.0.0.1:40123": the address listened on, the port the one bound.
  const std::string& address() const;
  // Stops taking calls; calls under way get `grace` to finish, then are cancelled.
  void shutdown(Time grace = Time::milliseconds(2000));

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mfabric::controller
