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
// `oracle` (an upper bound, not a real system): `block` with a zero reconfiguration delay, so
// every all-to-all runs on circuits planned from its own exact demand and waits for nothing.
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
  std::int64_t circuits_torn_down = 0;
  std::int64_t conflicts = 0;
  Time reconfiguration_time;  // summed over regions: time circuits were down
  Time held_time;             // summed over all-to-alls: time they waited for circuits (exposed)
  std::int64_t held = 0;      // all-to-alls that waited
  std::vector<ReconfigurationSpan> spans;
};

class MfabricControl final : public FabricController, public control::CircuitSwitch {
 public:
  // Throws mfabric::Error when the topology has no regions, the planner or policy is unknown, or
  // an EP all-to-all spans two regions.
  MfabricControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                 const std::string& planner, const std::string& policy);

  // FabricController
  void attach(EngineContext& engine) override;
  bool hold_collective(workload::TaskId id, collective::CollectiveRequest& r) override;
  void collective_finished(workload::TaskId id) override;

  // control::CircuitSwitch
  Time now() const override;
  void at(Time t, std::function<void()> fn) override;
  void tear_down(int region, const std::vector<control::PortCircuit>& circuits) override;
  void set_up(int region, const std::vector<control::PortCircuit>& circuits) override;

  ControlStats stats() const;
  // The policies `fabric.policy` accepts.
  static std::vector<std::string> policy_names();

 private:
  enum class Policy { Block, ReusePrevious, EpsDuringSwitch, Oracle };

  // Forward and backward plans of (iteration, layer, micro-batch).
  static std::int64_t key_of(const workload::Task& t, bool backward);
  int region_of_gpu(int gpu) const;
  // The region's demand for a plan: its dispatch all-to-alls' matrices, summed.
  control::ServerDemand demand_of(int region, std::int64_t key) const;
  void add_demand(workload::TaskId all_to_all, int region, control::ServerDemand& d) const;

  const workload::TaskGraph& graph_;
  const fabric::Topology& topology_;
  std::unique_ptr<control::Planner> planner_;
  Policy policy_ = Policy::Block;
  EngineContext* engine_ = nullptr;
  bool installing_ = false;  // set_up() of the plans put up before training
  std::vector<std::unique_ptr<control::RegionController>> regions_;
  std::vector<std::map<control::PortCircuit, fabric::LinkId>> circuits_;  // per region, up now
  // (region, key) -> the dispatch all-to-alls of that plan (one per EP group of the region).
  std::map<std::pair<int, std::int64_t>, std::vector<workload::TaskId>> dispatches_;
  std::map<workload::TaskId, Time> held_since_;
  workload::TaskId asking_ = -1;  // the collective whose request is being made
  bool served_at_once_ = false;
  // (region, key) -> its dispatch all-to-alls not finished yet.
  std::map<std::pair<int, std::int64_t>, int> unfinished_;
  ControlStats stats_;
};

}  // namespace mfabric::sim
