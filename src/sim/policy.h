// mFabric's control policies as objects (docs/control-plane.md, "Policies"): when an EP
// all-to-all waits for its circuits, and what the control plane does meanwhile. MfabricControl
// (mfabric_control.h) does the bookkeeping (regions, demand, holding and releasing, counting
// finished all-to-alls) and asks its Policy at each decision; a policy acts through the
// PolicyContext. A new policy is one file in sim/policies/ and one line in
// sim/policies/registry.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collective/lowering.h"
#include "control/demand.h"
#include "core/registry.h"
#include "core/units.h"
#include "fabric/ocs_params.h"
#include "workload/task_graph.h"

namespace mfabric::sim {

struct ControlStats;

// The plan an all-to-all runs on: (iteration, layer, micro-batch, direction), dense enough to
// sort in time order. Keys are >= 0.
std::int64_t plan_key(const workload::Task& t, bool backward);

// An EP all-to-all as the control plane sees it.
struct AllToAll {
  workload::TaskId id = -1;
  const workload::Task* task = nullptr;
  int region = -1;       // where its circuits are planned
  std::int64_t key = 0;  // plan_key(*task, backward)
  bool backward = false;
  bool forward_dispatch = false;
};

// What a policy may ask of the control plane.
class PolicyContext {
 public:
  virtual ~PolicyContext() = default;

  // The region has `key`'s plan in force and nothing under way.
  virtual bool in_force(int region, std::int64_t key) const = 0;
  // Holds `a` until its region has its plan (asking for it from its demand); false when the plan
  // is in force or is served at once: `a` goes now.
  virtual bool hold_for_plan(const AllToAll& a) = 0;
  // Asks a's region for its plan without holding it.
  virtual void request_plan(const AllToAll& a) = 0;
  // Asks the region for (region, key)'s plan from the demand it is given.
  virtual void request(int region, std::int64_t key, control::ServerDemand demand) = 0;
  // Asks the region for (region, key)'s plan from its dispatches' real demand, unless that plan
  // is the one in force or under way.
  virtual void recalibrate(int region, std::int64_t key) = 0;
  // Puts a demand-free plan (every pair of a region's servers equally wanted) up in every region
  // before training.
  virtual void install_uniform_plans() = 0;
  // Moves the transfers from the region's servers onto its new circuits where cheaper.
  virtual void move_onto_new_circuits(int region) = 0;

  // The job, as the policy may need it to plan ahead.
  virtual const workload::TaskGraph& graph() const = 0;
  virtual int regions() const = 0;
  virtual int region_servers(int region) const = 0;
  // The dispatch all-to-alls of (region, key) (one per EP group of the region), or null.
  virtual const std::vector<workload::TaskId>* dispatches(int region, std::int64_t key) const = 0;
  // The region's MoE layers, ascending.
  virtual const std::vector<int>& stage_layers(int region) const = 0;
  // The size of the EP group of the region's first dispatch (in key order); 1 without any.
  virtual int ep_size(int region) const = 0;
  // The region demand of (region, key): its dispatches' matrices, summed.
  virtual control::ServerDemand demand_of(int region, std::int64_t key) const = 0;
  // Adds the region demand of a GPU-pair matrix laid out like the all-to-all `like`.
  virtual void add_matrix_demand(const workload::ByteMatrix& m, workload::TaskId like, int region,
                                 control::ServerDemand& d) const = 0;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual const char* name() const = 0;
  // The reconfiguration delay the regions wait, given the OCS's.
  virtual Time delay(Time ocs_delay) const { return ocs_delay; }
  // The switching rule the policy needs, if it needs one (fabric.switching otherwise).
  virtual std::optional<fabric::SwitchRule> switching() const { return std::nullopt; }
  // True when the policy asks for the backward plans itself (compute_started()); false leaves
  // them to the control plane's schedule (mfabric_control.h).
  virtual bool plans_backward() const { return false; }
  // Once, before training, after the regions' controllers exist.
  virtual void attach(PolicyContext& /*ctx*/) {}
  // `a` is ready: true to hold it (it starts when its plan is up). May set
  // request.algorithm to lower it another way.
  virtual bool hold(PolicyContext& ctx, const AllToAll& a,
                    collective::CollectiveRequest& request) = 0;
  // The last forward dispatch (combine) of a layer and micro-batch in `region` finished.
  virtual void forward_dispatches_done(PolicyContext& /*ctx*/, int /*region*/,
                                       const workload::Task& /*dispatch*/) {}
  virtual void forward_combines_done(PolicyContext& /*ctx*/, int /*region*/,
                                     const workload::Task& /*combine*/) {}
  // A compute task of a GPU in `region` started.
  virtual void compute_started(PolicyContext& /*ctx*/, int /*region*/,
                               const workload::Task& /*task*/) {}
  // New circuits of `region` are up and its paused transfers resumed.
  virtual void circuits_up(PolicyContext& /*ctx*/, int /*region*/) {}
  // Adds what the policy measured to the run's statistics.
  virtual void report(ControlStats& /*stats*/) const {}
};

// The policies `fabric.policy` accepts, one line each in sim/policies/registry.cpp, in the
// order the docs list them.
using PolicyRegistry = Registry<std::function<std::unique_ptr<Policy>()>>;
PolicyRegistry& policies();
std::vector<std::string> policy_names();
// The policy of that name, or null.
std::unique_ptr<Policy> make_policy(const std::string& name);

}  // namespace mfabric::sim
