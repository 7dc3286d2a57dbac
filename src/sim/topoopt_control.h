// TopoOpt inside a simulation (docs/topoopt.md, "In simulations"): the patch-panel topology is
// planned once, from the whole job's demand (control::job_demand of the run's TaskGraph), and
// every planned link is connected as a circuit before the first event; it never changes.
// Traffic between servers without a direct circuit is forwarded by intermediate servers (the
// network Router does that, net/circuit_forwarding.h).
#pragma once

#include <cstdint>
#include <vector>

#include "control/topoopt.h"
#include "fabric/topology.h"
#include "sim/engine.h"
#include "sim/fabric_control.h"
#include "workload/task_graph.h"

namespace mfabric::sim {

// The plan's summary, for reports.
struct TopoOptStats {
  int servers = 0;
  int degree = 0;       // NICs per server on the patch panel
  int ring_degree = 0;  // of which the degree split gave to rings
  std::int64_t links = 0;
  std::int64_t ring_links = 0;
  std::int64_t matching_links = 0;
  std::int64_t connectivity_links = 0;
  std::int64_t leftover_links = 0;
  int ring_groups = 0;  // ring groups (all-reduce-like traffic) that received rings
  int rings = 0;        // rings placed, over all groups
  int matching_rounds = 0;
  bool connected = false;
  int unused_nics = 0;
  double planning_wall_s = 0;  // job demand + plan_topoopt, measured (not simulated) time
};

class TopoOptControl final : public FabricControl {
 public:
  // Plans the topology: the demand of `graph` (GPU g on server g / gpus_per_server) on all the
  // cluster's servers, degree = the fabric's circuit degree. mfabric::Error if the fabric has no
  // patch panel (circuit degree 0), or if the plan is not connected and two servers that
  // exchange traffic cannot reach each other (naming them).
  TopoOptControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                 const control::TopoOptOptions& options = {});

  // Connects every planned link through the backend, at time 0 before any traffic.
  void attach(EngineContext& engine) override;

  const control::TopoOptTopology& plan() const { return plan_; }
  // The circuits attach() made, one per plan link, in plan order.
  const std::vector<fabric::LinkId>& circuits() const { return circuits_; }
  TopoOptStats stats() const { return stats_; }
  void report(ControlReport& out) const override;

 private:
  void check_reachable(const control::JobDemand& demand) const;

  const fabric::Topology& topology_;
  control::TopoOptTopology plan_;
  std::vector<fabric::LinkId> circuits_;
  TopoOptStats stats_;
};

}  // namespace mfabric::sim
