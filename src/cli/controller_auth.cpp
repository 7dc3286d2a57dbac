#include "cli/controller_auth.h"

#ifdef MFABRIC_HAVE_GRPC

#include "core/error.h"
#include "core/input_files.h"

namespace mfabric::cli {

controller::ControllerAuth controller_auth(const std::string& token_file,
                                           const std::string& tls_cert, const std::string& tls_key,
                                           const std::string& tls_ca) {
  controller::ControllerAuth auth;
  if (!token_file.empty()) auth.token = controller::read_token_file(token_file);
  const auto pem = [](const std::string& path, const char* what) {
    return path.empty() ? std::string() : read_text_file(path, what, "a PEM file", 1 << 20);
  };
  auth.tls_cert = pem(tls_cert, "TLS certificate");
  auth.tls_key = pem(tls_key, "TLS key");
  auth.tls_ca = pem(tls_ca, "TLS CA");
  try {
    auth.validate();
  } catch (const Error& e) {
    throw Error("", "--token-file",
                e.message() + " (--token-file, or --tls-cert, --tls-key and --tls-ca)");
  }
  return auth;
}

}  // namespace mfabric::cli

#endif
