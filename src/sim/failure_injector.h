// Fails the parts an experiment's `failures:` name, at their times, during a run
// (docs/reliability.md, "Failures"). It wraps the fabric's own controller (mFabric's, TopoOpt's
// or none) and passes every engine hook on to it.
//
// When a part fails:
//   - its links go down in the backend (a NIC's cable and PCIe link; a GPU's NVLink and PCIe
//     links and its NICs; all of a server's), and the lowerings stop using it as a proxy;
//   - on mFabric, an OCS NIC's port is taken out of its region: its circuit goes at once and
//     the region controller plans without the port from then on (MfabricControl::fail_port);
//     a server left without a working EPS NIC gets a relay circuit to a healthy peer of its
//     region, which forwards its traffic over the EPS (MfabricControl::isolate);
//   - transfers crossing the failed links move to what is up (proxies, the other EPS NIC, the
//     EPS, a relay): Backend::reroute_down(). None is lost.
// GPU and server failures happen at start (config/failures.h), after the spares took their ranks
// (the task graph was moved before the run): the failed parts are then idle.
#pragma once

#include <cstdint>
#include <vector>

#include "config/failures.h"
#include "fabric/topology.h"
#include "sim/engine.h"
#include "sim/spares.h"

namespace mfabric::sim {

class MfabricControl;

class FailureInjector final : public FabricController {
 public:
  // inner: the fabric's controller or null; mfabric: the same object when it is mFabric's.
  FailureInjector(std::vector<config::Failure> failures, const fabric::Topology& topology,
                  FabricController* inner, MfabricControl* mfabric);

  void attach(EngineContext& engine) override;
  bool hold_collective(workload::TaskId id, collective::CollectiveRequest& r) override;
  void compute_started(workload::TaskId id) override;
  void collective_finished(workload::TaskId id) override;

  // Per topology node, nonzero once the GPU or NIC failed (EngineOptions::failed_nodes).
  const std::vector<std::uint8_t>& failed_nodes() const { return failed_; }
  // Failures applied so far.
  int applied() const { return applied_; }

 private:
  void apply(const config::Failure& f);
  void fail_nic(fabric::NodeId nic);
  void links_down(fabric::NodeId node);
  // A server whose EPS NICs have all failed (and that is not itself down).
  bool cut_off_from_eps(int server) const;

  std::vector<config::Failure> failures_;
  const fabric::Topology& topology_;
  FabricController* inner_;
  MfabricControl* mfabric_;
  EngineContext* engine_ = nullptr;
  std::vector<std::uint8_t> failed_;
  std::vector<bool> server_down_;
  int applied_ = 0;
};

}  // namespace mfabric::sim
