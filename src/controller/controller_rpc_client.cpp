#include "controller/controller_rpc_client.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <optional>
#include <thread>

#include "controller/controller.grpc.pb.h"
#include "core/error.h"

namespace mfabric::controller {

// controller.proto's generated messages and service: its package is this folder's namespace;
// `api::` marks what is generated.
namespace api = mfabric::controller;

namespace {

const char* code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    default:
      return "error";
  }
}

RegionCircuits circuits_of(const api::Circuits& reply) {
  RegionCircuits out;
  out.region = reply.region();
  out.generation = reply.generation();
  out.layer = reply.layer();
  out.micro_batch = reply.micro_batch();
  out.circuits.reserve(static_cast<std::size_t>(reply.circuits_size()));
  for (const api::Circuit& c : reply.circuits()) {
    out.circuits.push_back({c.server(), c.nic(), c.peer_server(), c.peer_nic()});
  }
  return out;
}

}  // namespace

class ControllerClient::Impl {
 public:
  Impl(const std::string& address, ControllerAuth auth, Time deadline)
      : address_(address), token_(auth.token), tls_(!auth.tls_ca.empty()), deadline_(deadline) {
    auth.validate();
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (auth.tls_ca.empty()) {
      credentials = grpc::InsecureChannelCredentials();
    } else {
      grpc::SslCredentialsOptions tls;
      tls.pem_root_certs = auth.tls_ca;
      tls.pem_cert_chain = auth.tls_cert;
      tls.pem_private_key = auth.tls_key;
      credentials = grpc::SslCredentials(tls);
    }
    stub_ = api::RegionController::NewStub(grpc::CreateChannel(address, credentials));
  }

  // Makes the call (call(context, reply) -> status) until it is answered other than
  // UNAVAILABLE or the deadline passes; the channel reconnects by itself between attempts, so a
  // restarted controller is reached again. When the deadline passes after an UNAVAILABLE answer,
  // the error is that answer (the controller's own words name the fault, e.g. the OCS it cannot
  // reach), not the deadline's.
  template <typename Reply, typename Call>
  Reply call_with_retries(const char* name, Call call) const {
    const auto start = std::chrono::system_clock::now();
    const auto end = start + std::chrono::microseconds(deadline_.ps() / 1000000);
    std::optional<grpc::Status> unavailable;
    for (;;) {
      grpc::ClientContext context;
      context.set_deadline(end);
      if (!token_.empty()) context.AddMetadata("authorization", "Bearer " + token_);
      Reply reply;
      const grpc::Status status = call(context, reply);
      if (status.ok()) return reply;
      const auto now = std::chrono::system_clock::now();
      const auto retry_at = now + std::chrono::milliseconds(200);
      const bool retry = status.error_code() == grpc::StatusCode::UNAVAILABLE;
      if (retry) unavailable = status;
      if (!retry || retry_at >= end) {
        if (unavailable && (retry || status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)) {
          const auto seconds = std::chrono::duration<double>(now - start).count();
          fail(name, *unavailable, fmt::format(" (still after {:.1f}s of retries)", seconds));
        }
        fail(name, status, "");
      }
      std::this_thread::sleep_until(retry_at);
    }
  }

  [[noreturn]] void fail(const char* call, const grpc::Status& status,
                         const std::string& suffix) const {
    // gRPC says only that the connection closed when a TLS handshake fails: name the likely
    // causes on the same line.
    const bool no_connection =
        status.error_code() == grpc::StatusCode::UNAVAILABLE &&
        status.error_message().find("failed to connect") != std::string::npos;
    throw Error(fmt::format(
        "controller {}: {}: {}: {}{}{}", address_, call, code_name(status.error_code()),
        status.error_message(), suffix,
        no_connection && tls_
            ? " (not running, or the TLS handshake failed: the controller must trust the CA "
              "that signed --tls-cert, and --tls-ca must have signed the controller's "
              "certificate)"
            : ""));
  }

  std::string address_;
  std::string token_;
  bool tls_;
  Time deadline_;
  std::unique_ptr<api::RegionController::Stub> stub_;
};

ControllerClient::ControllerClient(const std::string& address, ControllerAuth auth, Time deadline)
    : impl_(std::make_unique<Impl>(address, std::move(auth), deadline)) {}

ControllerClient::~ControllerClient() = default;

RegionCircuits ControllerClient::submit_demand(const std::string& region, int layer,
                                               int micro_batch,
                                               const control::ServerDemand& demand) {
  api::DemandRequest request;
  request.set_region(region);
  request.set_layer(layer);
  request.set_micro_batch(micro_batch);
  request.set_servers(demand.servers());
  for (int i = 0; i < demand.servers(); ++i) {
    for (int j = 0; j < demand.servers(); ++j)
      request.add_bytes(i == j ? 0 : demand.at(i, j));
  }
  return circuits_of(impl_->call_with_retries<api::Circuits>(
      "SubmitDemand", [&](grpc::ClientContext& context, api::Circuits& reply) {
        return impl_->stub_->SubmitDemand(&context, request, &reply);
      }));
}

RegionCircuits ControllerClient::circuits(const std::string& region) {
  api::CircuitsRequest request;
  request.set_region(region);
  return circuits_of(impl_->call_with_retries<api::Circuits>(
      "GetCircuits", [&](grpc::ClientContext& context, api::Circuits& reply) {
        return impl_->stub_->GetCircuits(&context, request, &reply);
      }));
}

}  // namespace mfabric::controller
