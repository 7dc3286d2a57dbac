// How a command authenticates to the region controller, or how the controller authenticates its
// callers: a bearer-token file, or TLS with a certificate, a key and a CA (docs/runtime.md).
// Shared by `mfabric controller` (the server's side) and `mfabric moe-bench --controller` (the
// client's).
#pragma once

#ifdef MFABRIC_HAVE_GRPC

#include <string>

#include "controller/controller_rpc.h"

namespace mfabric::cli {

// Reads the files the options name (an empty path: not given) and checks that they make one way
// to authenticate; mfabric::Error naming --token-file otherwise.
controller::ControllerAuth controller_auth(const std::string& token_file,
                                           const std::string& tls_cert, const std::string& tls_key,
                                           const std::string& tls_ca);

}  // namespace mfabric::cli

#endif
