// A client of the region controller's gRPC API (controller.proto): what a training job's runtime
// uses to submit a layer's demand and read the circuits in force. It authenticates as the daemon
// requires (a bearer token, a TLS client certificate, or both; ControllerAuth), and every call
// has a deadline, so a controller that is gone or stuck is an error, never a wait without end.
// A call answered UNAVAILABLE (the controller restarting, or its OCS not reachable yet) is made
// again every 200 ms within that deadline: the controller keeps no state, and a submit made
// again after a crash completes the same plan (docs/runtime.md, "What survives which crash").
//
// Built only with gRPC (MFABRIC_HAVE_GRPC); the header itself does not include gRPC.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "control/demand.h"
#include "controller/controller_rpc.h"
#include "controller/region_service.h"
#include "core/units.h"

namespace mfabric::controller {

class ControllerClient {
 public:
  // deadline: how long one call, its retries included, may take. address: HOST:PORT of `mfabric
  // controller`. With TLS, auth.tls_cert and tls_key are this client's certificate and key, and
  // tls_ca the CA the controller's certificate is checked against. mfabric::Error (field "auth")
  // unless a token or the whole TLS triple is given.
  ControllerClient(const std::string& address, ControllerAuth auth,
                   Time deadline = Time::milliseconds(60000));
  ~ControllerClient();
  ControllerClient(const ControllerClient&) = delete;
  ControllerClient& operator=(const ControllerClient&) = delete;

  // The answers are region_service.h's RegionCircuits (NIC to NIC: region-local servers, local
  // NIC indices), as the controller reports them.
  // SubmitDemand: answers once the OCS holds the region's circuits for the demand.
  // mfabric::Error "controller ADDR: SubmitDemand: CODE: message" on any failure (the last
  // one's, when the deadline ran out while retrying).
  RegionCircuits submit_demand(const std::string& region, int layer, int micro_batch,
                               const control::ServerDemand& demand);
  // GetCircuits: the circuits in force.
  RegionCircuits circuits(const std::string& region);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mfabric::controller
