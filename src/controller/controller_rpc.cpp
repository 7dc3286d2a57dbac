#include "controller/controller_rpc.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

#include <algorithm>
#include <chrono>
#include <span>

#include "control/demand.h"
#include "controller/controller.grpc.pb.h"
#include "core/error.h"
#include "core/input_files.h"

namespace mfabric::controller {

// controller.proto's generated messages and service: its package is this folder's namespace;
// `api::` marks what is generated.
namespace api = mfabric::controller;

std::string read_token_file(const std::string& path) {
  const std::string text = read_text_file(path, "token file", "a file holding a token", 4096);
  std::string token = text.substr(0, text.find('\n'));
  while (!token.empty() && (token.back() == ' ' || token.back() == '\r' || token.back() == '\t')) {
    token.pop_back();
  }
  const bool printable =
      std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c < 127; });
  if (token.size() < kMinTokenBytes || !printable) {
    throw Error(path, "",
                fmt::format("expected a token of at least {} printable characters without spaces "
                            "on the first line",
                            kMinTokenBytes));
  }
  return token;
}

void ControllerAuth::validate() const {
  const bool tls = !tls_cert.empty() || !tls_key.empty() || !tls_ca.empty();
  if (tls && (tls_cert.empty() || tls_key.empty() || tls_ca.empty())) {
    throw Error("", "auth", "TLS needs a certificate, its key and the clients' CA");
  }
  if (!tls && token.empty()) {
    throw Error("", "auth", "expected a token file or TLS with client certificates");
  }
}

bool same_secret(const std::string& given, const std::string& expected) {
  // Every byte of both is looked at, whatever differs first.
  unsigned difference = given.size() == expected.size() ? 0u : 1u;
  const std::size_t n = std::max(given.size(), expected.size());
  for (std::size_t k = 0; k < n; ++k) {
    const unsigned char a = k < given.size() ? static_cast<unsigned char>(given[k]) : 0;
    const unsigned char b = k < expected.size() ? static_cast<unsigned char>(expected[k]) : 0;
    difference |= static_cast<unsigned>(a ^ b);
  }
  return difference == 0;
}

namespace {

grpc::Status status_of(const Error& e) {
  // Errors naming a field are the caller's input; the rest are the OCS's (or the plan's) doing.
  const std::string message = e.what();
  return e.field().empty() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, message)
                           : grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

void to_message(const RegionControllerService& service, const RegionCircuits& in_force,
                api::Circuits& reply) {
  reply.set_region(in_force.region);
  reply.set_generation(in_force.generation);
  reply.set_layer(in_force.layer);
  reply.set_micro_batch(in_force.micro_batch);
  for (const control::PortCircuit& circuit : in_force.circuits) {
    api::Circuit* c = reply.add_circuits();
    c->set_server(circuit.server);
    c->set_nic(circuit.nic);
    c->set_peer_server(circuit.peer_server);
    c->set_peer_nic(circuit.peer_nic);
    const auto [port, peer_port] = service.device_ports(in_force.region, circuit);
    c->set_port(port);
    c->set_peer_port(peer_port);
  }
}

// The handlers: each checks the caller first, then calls the service.
class Handlers final : public api::RegionController::Service {
 public:
  Handlers(RegionControllerService& service, std::string token)
      : service_(service), token_(std::move(token)) {}

  grpc::Status SubmitDemand(grpc::ServerContext* context, const api::DemandRequest* request,
                            api::Circuits* reply) override {
    if (!authenticated(*context)) return refused();
    const int servers = request->servers();
    if (servers < 1 || servers > control::kMaxRegionServers ||
        request->bytes_size() != servers * servers) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("expected servers of 1 to {} and servers x servers bytes, got {} and {}",
                          control::kMaxRegionServers, servers, request->bytes_size())};
    }
    if (request->layer() < 0 || request->micro_batch() < 0) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "expected layer and micro_batch >= 0"};
    }
    try {
      const control::ServerDemand demand = control::demand_from_server_bytes(
          std::span<const std::int64_t>(request->bytes().data(),
                                        static_cast<std::size_t>(request->bytes_size())),
          servers);
      to_message(
          service_,
          service_.submit(request->region(), request->layer(), request->micro_batch(), demand),
          *reply);
      return grpc::Status::OK;
    } catch (const Error& e) {
      return status_of(e);
    }
  }

  grpc::Status GetCircuits(grpc::ServerContext* context, const api::CircuitsRequest* request,
                           api::Circuits* reply) override {
    if (!authenticated(*context)) return refused();
    try {
      to_message(service_, service_.circuits(request->region()), *reply);
      return grpc::Status::OK;
    } catch (const Error& e) {
      return status_of(e);
    }
  }

  grpc::Status Health(grpc::ServerContext* context, const api::HealthRequest*,
                      api::HealthReply* reply) override {
    if (!authenticated(*context)) return refused();
    const ControllerHealth health = service_.health();
    reply->set_ocs_address(health.ocs_address);
    reply->set_ocs_reachable(health.ocs_reachable);
    reply->set_last_error(health.last_error);
    reply->set_reconciliations(health.reconciliations);
    reply->set_reconfigurations(health.reconfigurations);
    reply->set_commands(health.commands);
    reply->set_alarms(health.alarms);
    for (const int port : health.unusable_ports)
      reply->add_unusable_ports(port);
    for (const RegionSpec& region : service_.regions())
      reply->add_regions(region.name);
    return grpc::Status::OK;
  }

 private:
  // TLS client certificates are checked by the handshake; the token here.
  bool authenticated(const grpc::ServerContext& context) const {
    if (token_.empty()) return true;
    const auto& metadata = context.client_metadata();
    const auto found = metadata.find("authorization");
    if (found == metadata.end()) return false;
    return same_secret(std::string(found->second.data(), found->second.size()), "Bearer " + token_);
  }
  static grpc::Status refused() {
    return {grpc::StatusCode::UNAUTHENTICATED, "expected the controller's credentials"};
  }

  RegionControllerService& service_;
  std::string token_;
};

}  // namespace

class ControllerRpcServer::Impl {
 public:
  Impl(RegionControllerService& service, const std::string& listen, ControllerAuth auth)
      : handlers_(std::make_unique<Handlers>(service, auth.token)) {
    auth.validate();
    const bool tls = !auth.tls_cert.empty();
    const std::size_t colon = listen.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw Error("", "--listen", "expected HOST:PORT, got '" + listen + "'");
    }
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
    if (tls) {
      grpc::SslServerCredentialsOptions ssl(
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
      ssl.pem_root_certs = auth.tls_ca;
      ssl.pem_key_cert_pairs.push_back({auth.tls_key, auth.tls_cert});
      credentials = grpc::SslServerCredentials(ssl);
    }
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(listen, credentials, &port);
    builder.RegisterService(handlers_.get());
    // A 1024-server region's demand is 8 MiB.
    builder.SetMaxReceiveMessageSize(16 << 20);
    server_ = builder.BuildAndStart();
    if (!server_ || port == 0) {
      throw Error("", "--listen", "cannot listen on '" + listen + "'");
    }
    address_ = listen.substr(0, colon) + ":" + std::to_string(port);
  }
  ~Impl() { shutdown(Time::milliseconds(2000)); }

  void shutdown(Time grace) {
    if (!server_) return;
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::microseconds(grace.ps() / 1'000'000));
    server_->Wait();
    server_.reset();
  }
  const std::string& address() const { return address_; }

 private:
  // Outlives server_ (declared first).
  std::unique_ptr<api::RegionController::Service> handlers_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

ControllerRpcServer::ControllerRpcServer(RegionControllerService& service,
                                         const std::string& listen, ControllerAuth auth)
    : impl_(std::make_unique<Impl>(service, listen, std::move(auth))) {}

ControllerRpcServer::~ControllerRpcServer() = default;

const std::string& ControllerRpcServer::address() const {
  return impl_->address();
}

void ControllerRpcServer::shutdown(Time grace) {
  impl_->shutdown(grace);
}

}  // namespace mfabric::controller
