// The mFabric control plane inside a simulation (docs/control-plane.md): one
// control::RegionController per region of the fabric, driven by the engine's FabricController
// hooks, changing circuits through the network backend.
//
// The policy (sim/policy.h; one file each in sim/policies/, docs/control-plane.md, "Policies")
// decides when an EP all-to-all waits for its circuits; this class does the bookkeeping: which
// all-to-alls belong to which region and plan, their demand, holding and releasing them,
// counting finished ones, and the circuits through the backend. Backward all-to-alls are the
// same for every policy: a layer's backward plan (the same demand as forward, known since then)
// is asked for as soon as the layer after it (the one before it in backward order) has
// finished its last backward dispatch in the region, so that it hides under that layer's
// attention backward compute when it is long enough; the backward all-to-alls wait for what is
// left. With 1F1B, work of several micro-batches meets in one region: requests are served one
// at a time in the order they come, and a request that finds another under way counts as a
// conflict.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "control/planner.h"
#include "control/region_controller.h"
#include "fabric/topology.h"
#include "sim/engine.h"
#include "sim/fabric_control.h"
#include "sim/policy.h"
#include "workload/task_graph.h"

namespace mfabric::sim {

struct ReconfigurationSpan {
  int region = 0;
  Time start;
  Time end;
};

// What the control plane did in a run.
struct ControlStats {
  std::string planner;
  std::string policy;
  std::int64_t reconfigurations = 0;  // that switched at least one circuit
  std::int64_t unchanged = 0;         // plans that needed no switching
  std::string switching = "always";   // fabric.switching (control/region_controller.h)
  std::int64_t kept = 0;  // when-faster: plans not put up, the circuits up being as fast
  std::int64_t circuits_torn_down = 0;
  std::int64_t conflicts = 0;
  Time reconfiguration_time;  // summed over regions: time circuits were down
  Time held_time;             // summed over all-to-alls: time they waited for circuits (exposed)
  std::int64_t held = 0;      // all-to-alls that waited
  std::vector<ReconfigurationSpan> spans;
  // Per all-to-all that waited and was released: its region, when it asked and when it went.
  std::vector<ReconfigurationSpan> holds;
  // predict: plans made from a forecast, and the mean relative error of their region demand
  // against the real one (sum |predicted - real| / sum real over server pairs).
  std::int64_t predictions = 0;
  double prediction_error = 0;
  // Failures (config/failures.h): OCS ports taken out of their regions, relay circuits pinned for
  // servers cut off from the EPS.
  std::int64_t failed_ports = 0;
  std::int64_t relays = 0;
};

// An mFabric topology's control plane, resolved from its typed OCS parameters (fabric::OcsParams)
// in one place: the planner and the policy by name, the switching rule, and the delay the
// regions wait (the policy's view of the OCS's).
struct ControlPlane {
  std::unique_ptr<control::Planner> planner;
  std::unique_ptr<Policy> policy;
  fabric::SwitchRule switching = fabric::SwitchRule::Always;
  Time delay;
};
// mfabric::Error naming fabric.planner or fabric.policy for an unknown name, or fabric for a
// topology without OCS regions. The experiment loader calls it to check an experiment before
// any run; the simulation to make the controller.
ControlPlane make_control_plane(const fabric::Topology& topology);

class MfabricControl final : public FabricControl,
                             public control::CircuitSwitch,
                             private PolicyContext {
 public:
  // Throws mfabric::Error when the topology has no regions or an EP all-to-all spans two
  // regions. Members of an EP group on `spare_gpus` (spares that took failed GPUs' ranks,
  // sim/spares.h) may sit outside the group's region: their traffic goes over the EPS, and the
  // region's circuits are planned for the members inside it.
  MfabricControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                 ControlPlane plane, const std::vector<std::int32_t>& spare_gpus = {});

  // FabricController
  void attach(EngineContext& engine) override;
  bool hold_collective(workload::TaskId id, collective::CollectiveRequest& r) override;
  void compute_started(workload::TaskId id) override;
  void collective_finished(workload::TaskId id) override;

  // control::CircuitSwitch
  Time now() const override;
  void at(Time t, std::function<void()> fn) override;
  void tear_down(int region, const std::vector<control::PortCircuit>& circuits) override;
  void set_up(int region, const std::vector<control::PortCircuit>& circuits) override;
  void reconfigured(int region, Time since) override;

  // Failures (sim/failure_injector.h). The OCS port of this OCS NIC is gone: its circuit goes
  // at once (its transfers move to what is up) and the region plans without it.
  void fail_port(fabric::NodeId nic);
  // `server` has no working EPS NIC left: its region keeps a circuit from it to a peer that can
  // relay (can_relay, per server of the region) up at all times. mfabric::Error when none can.
  void isolate(int server, const std::vector<bool>& can_relay);
  const fabric::Region& region_of_server(int server) const;

  ControlStats stats() const;
  void report(ControlReport& out) const override;
  MfabricControl* region_control() override { return this; }

 private:
  int region_of_gpu(int gpu) const;
  // The region an EP all-to-all's circuits are planned in: its members' (spares aside).
  int home_region(const workload::Task& t) const {
    return group_region_[static_cast<std::size_t>(t.group())];
  }
  void add_demand(workload::TaskId all_to_all, int region, control::ServerDemand& d) const;
  // a's demand: its plan's dispatches', or its own matrix for an all-to-all of no known dispatch.
  control::RegionController::DemandSource demand_for(const AllToAll& a) const;

  // PolicyContext
  bool in_force(int region, std::int64_t key) const override;
  bool hold_for_plan(const AllToAll& a) override;
  void request_plan(const AllToAll& a) override;
  void request(int region, std::int64_t key, control::ServerDemand demand) override;
  void recalibrate(int region, std::int64_t key) override;
  void install_uniform_plans() override;
  void move_onto_new_circuits(int region) override;
  const workload::TaskGraph& graph() const override { return graph_; }
  int regions() const override { return static_cast<int>(regions_.size()); }
  int region_servers(int region) const override;
  const std::vector<workload::TaskId>* dispatches(int region, std::int64_t key) const override;
  const std::vector<int>& stage_layers(int region) const override {
    return stage_layers_[static_cast<std::size_t>(region)];
  }
  int ep_size(int region) const override;
  control::ServerDemand demand_of(int region, std::int64_t key) const override;
  void add_matrix_demand(const workload::ByteMatrix& m, workload::TaskId like, int region,
                         control::ServerDemand& d) const override;

  const workload::TaskGraph& graph_;
  const fabric::Topology& topology_;
  std::vector<int> group_region_;  // per group of the graph: its EP all-to-all's region, or -1
  bool failures_ = false;          // a part has failed: transfers may wait on down links
  ControlPlane plane_;
  EngineContext* engine_ = nullptr;
  bool installing_ = false;  // set_up() of the plans put up before training
  std::vector<std::unique_ptr<control::RegionController>> regions_;
  std::vector<std::map<control::PortCircuit, fabric::LinkId>> circuits_;  // per region, up now
  std::vector<std::vector<fabric::NodeId>> ocs_nics_;  // per region: its servers' OCS NICs
  // (region, key) -> the dispatch all-to-alls of that plan (one per EP group of the region).
  std::map<std::pair<int, std::int64_t>, std::vector<workload::TaskId>> dispatches_;
  // (region, key) -> its dispatch all-to-alls not finished yet.
  std::map<std::pair<int, std::int64_t>, int> unfinished_;
  // Per region: its MoE layers (ascending) and its EP group size; the forward combines not
  // finished yet per (region, key).
  std::vector<std::vector<int>> stage_layers_;
  std::map<int, int> ep_sizes_;
  std::map<std::pair<int, std::int64_t>, int> combines_left_;
  ControlStats stats_;
};

}  // namespace mfabric::sim
