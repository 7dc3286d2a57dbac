// The mFabric control plane inside a simulation (docs/control-plane.md): one
// control::RegionController per region of the fabric, driven by the engine's FabricController
// hooks, changing circuits through the network backend.
//
// Policies (docs/control-plane.md, "Policies"), chosen by the fabric's `policy`:
//
// `block` (the paper's simulations): an EP all-to-all whose region does not have the plan of its
// layer, micro-batch and direction waits. The forward dispatch of a layer and micro-batch plans
// from its demand (the dispatch matrices of every EP group of the region, one per TP rank,
// summed) and waits the reconfiguration delay; the forward combine reuses those circuits. The
// four matrices of a layer are equal or transposes, so the backward plan is the same demand,
// known since forward: it is put up as soon as the layer after it (the one before it in backward
// order) has finished its last all-to-all in the region, so it hides under that layer's
// attention backward compute when it is long enough; the backward all-to-alls wait for
// whatever is left (the last layer of a stage, first in backward, waits it all). With
// 1F1B, work of several micro-batches meets in one region: requests are served one at a time in
// the order they come, and a request that finds another under way counts as a conflict.
//
// `reuse-previous`: every region starts with a demand-free plan (uniform demand) put up before
// training. The forward dispatch starts at once on whatever circuits are up (the previous
// layer's); when the region's dispatches of that layer and micro-batch have finished, the
// controller recalibrates from their real demand during expert compute, and the combine waits
// for whatever of the delay is left. Backward as `block`.
//
// `eps-during-switch`: the forward dispatch asks for its plan and starts at once, lowered GPU pair
// by GPU pair (`direct`) over what is up: the circuits that stay, and the EPS where they switch.
// When the new circuits come up its remaining bytes move onto them (Backend::reroute). The
// combine waits for whatever of the delay is left. Backward as `block`.
//
// `predict` (Copilot): when a layer's forward combines in the region have finished, the
// region's Copilot predictor (one per region, at EP-rank level: each rank's bytes to every rank)
// forecasts the next layer's dispatch from this layer's, and the controller puts the plan for
// that forecast up under the next layer's attention compute; the next dispatch then runs on it
// and recalibration before the combine follows `reuse-previous`. The first layer of a stage has
// nothing to predict from and runs on what is up. Prediction quality is reported.
//
// `oracle` (an upper bound, not a real system): `block` with a zero reconfiguration delay, so
// every all-to-all runs on circuits planned from its own exact demand and waits for nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "control/copilot.h"
#include "control/planner.h"
#include "control/region_controller.h"
#include "fabric/topology.h"
#include "sim/engine.h"
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
  // predict: plans made from a forecast, and the mean relative error of their region demand
  // against the real one (sum |predicted - real| / sum real over server pairs).
  std::int64_t predictions = 0;
  double prediction_error = 0;
  // Failures (sim/failures.h): OCS ports taken out of their regions, relay circuits pinned for
  // servers cut off from the EPS.
  std::int64_t failed_ports = 0;
  std::int64_t relays = 0;
};

class MfabricControl final : public FabricController, public control::CircuitSwitch {
 public:
  // Throws mfabric::Error when the topology has no regions, the planner or policy is unknown, or
  // an EP all-to-all spans two regions.
  // Members of an EP group on `spare_gpus` (spares that took failed GPUs' ranks, sim/failures.h)
  // may sit outside the group's region: their traffic goes over the EPS, and the region's
  // circuits are planned for the members inside it.
  MfabricControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                 const std::string& planner, const std::string& policy,
                 const std::vector<std::int32_t>& spare_gpus = {});

  // FabricController
  void attach(EngineContext& engine) override;
  bool hold_collective(workload::TaskId id, collective::CollectiveRequest& r) override;
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
  // The policies `fabric.policy` accepts.
  static std::vector<std::string> policy_names();

 private:
  enum class Policy { Block, ReusePrevious, EpsDuringSwitch, Predict, Oracle };

  // Forward and backward plans of (iteration, layer, micro-batch).
  static std::int64_t key_of(const workload::Task& t, bool backward);
  int region_of_gpu(int gpu) const;
  // The region an EP all-to-all's circuits are planned in: its members' (spares aside).
  int home_region(const workload::Task& t) const {
    return group_region_[static_cast<std::size_t>(t.group)];
  }
  // The region's demand for a plan: its dispatch all-to-alls' matrices, summed.
  control::ServerDemand demand_of(int region, std::int64_t key) const;
  void add_demand(workload::TaskId all_to_all, int region, control::ServerDemand& d) const;
  // The region demand of a GPU-pair matrix laid out like the all-to-all `like`.
  void add_matrix_demand(const workload::ByteMatrix& m, workload::TaskId like, int region,
                         control::ServerDemand& d) const;
  // predict: the forward dispatch matrix of (region, key)'s first EP group as whole-number
  // counts for Copilot (bytes / unit), or empty.
  std::vector<std::int32_t> counts_of(int region, std::int64_t key, double& unit) const;
  // predict: after a layer's forward dispatches (observe) and combines (forecast the next).
  void learn(int region, const workload::Task& dispatch);
  void forecast_next(int region, const workload::Task& combine);
  // The forward key of the MoE layer after (before) `t`'s in its region's stage, or -1.
  std::int64_t neighbour_key(int region, const workload::Task& t, int step) const;
  static std::int64_t predicted(std::int64_t key) { return -3 - key; }

  const workload::TaskGraph& graph_;
  const fabric::Topology& topology_;
  std::vector<int> group_region_;  // per group of the graph: its EP all-to-all's region, or -1
  bool failures_ = false;          // a part has failed: transfers may wait on down links
  std::unique_ptr<control::Planner> planner_;
  Policy policy_ = Policy::Block;
  control::SwitchRule switching_ = control::SwitchRule::Always;
  EngineContext* engine_ = nullptr;
  bool installing_ = false;  // set_up() of the plans put up before training
  std::vector<std::unique_ptr<control::RegionController>> regions_;
  std::vector<std::map<control::PortCircuit, fabric::LinkId>> circuits_;  // per region, up now
  std::vector<std::vector<fabric::NodeId>> ocs_nics_;  // per region: its servers' OCS NICs
  // (region, key) -> the dispatch all-to-alls of that plan (one per EP group of the region).
  std::map<std::pair<int, std::int64_t>, std::vector<workload::TaskId>> dispatches_;
  std::map<workload::TaskId, Time> held_since_;
  workload::TaskId asking_ = -1;  // the collective whose request is being made
  bool served_at_once_ = false;
  // (region, key) -> its dispatch all-to-alls not finished yet.
  std::map<std::pair<int, std::int64_t>, int> unfinished_;
  // predict: per region, its Copilot, its stage's MoE layers (ascending), the forward combines
  // not finished yet per key, and the demand each forecast predicted.
  std::vector<std::unique_ptr<control::CopilotPredictor>> copilots_;
  std::vector<std::vector<int>> stage_layers_;
  std::vector<double> units_;  // per region: bytes per Copilot count (set on first use)
  std::map<std::pair<int, std::int64_t>, int> combines_left_;
  std::map<std::pair<int, std::int64_t>, control::ServerDemand> forecasts_;
  ControlStats stats_;
};

}  // namespace mfabric::sim
