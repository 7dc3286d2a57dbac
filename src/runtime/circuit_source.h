// Where the data path gets its circuits: the region controller decides them; moe-bench asks for
// each layer's. CircuitSource is that question. LocalCircuitSource answers it with a planner of
// control/ in this process, standing in for the controller (src/controller/); the controller's own
// client is wired in by cli/ (moe-bench --controller), on rank 0 behind a
// BroadcastCircuitSource (runtime/mpi_transport.h); NoCircuits leaves everything on the EPS.
#pragma once

#include <memory>
#include <string>

#include "control/demand.h"
#include "control/planner.h"
#include "core/units.h"
#include "runtime/proxy_alltoallv.h"

namespace mfabric::runtime {

class CircuitSource {
 public:
  virtual ~CircuitSource() = default;
  // The circuits put in force for a layer's server-to-server demand. The generation number
  // grows when the circuits change and stays when they do not.
  virtual CircuitsInForce request(const control::ServerDemand& demand) = 0;
  // The circuits in force before any request of this run (a controller's may be left from an
  // earlier job): what reuse-previous runs the first layer on.
  virtual CircuitsInForce current() { return {}; }
};

class LocalCircuitSource final : public CircuitSource {
 public:
  // planner: a name of control::make_planner (mfabric::Error listing them otherwise); link: one
  // NIC's rate (the planner weighs circuits against the EPS share with it); switch_time: how
  // long a request that changes the circuits takes to answer, standing in for the OCS switching
  // before the new circuits are in force.
  LocalCircuitSource(const RankLayout& layout, const std::string& planner, Rate link,
                     Time switch_time = Time());
  CircuitsInForce request(const control::ServerDemand& demand) override;

 private:
  RankLayout layout_;
  std::unique_ptr<control::Planner> planner_;
  control::PlanLimits limits_;
  Time switch_time_;
  CircuitsInForce in_force_;
};

class NoCircuits final : public CircuitSource {
 public:
  CircuitsInForce request(const control::ServerDemand&) override { return {}; }
};

// When a layer gets its circuits (docs/runtime.md):
//   block: the layer waits for circuits planned for its own demand;
//   reuse-previous: the layer runs on the circuits already in force (none before the first
//   layer) and its demand is planned for the next one, off the critical path.
enum class CircuitPolicy { Block, ReusePrevious };
// By the policy names of sim/ (control/policy_names.h): "block" or "reuse-previous";
// mfabric::Error (field "policy") naming the two otherwise.
CircuitPolicy circuit_policy_from(const std::string& name);
const char* policy_name(CircuitPolicy policy);

// The circuits of one layer, and what getting them cost it.
struct LayerCircuits {
  CircuitsInForce circuits;
  bool reconfigured = false;  // they differ from the previous layer's
  bool waited = false;        // the layer waited for them
  double wait_seconds = 0;
};

// Applies a policy to a source, layer after layer.
class LayerCircuitSchedule {
 public:
  LayerCircuitSchedule(CircuitSource& source, CircuitPolicy policy)
      : source_(source), policy_(policy) {}
  // Before a layer runs on `demand`.
  LayerCircuits before_layer(const control::ServerDemand& demand);
  // After it ran.
  void after_layer(const control::ServerDemand& demand);

 private:
  CircuitSource& source_;
  CircuitPolicy policy_;
  CircuitsInForce in_force_;
  bool changed_since_last_layer_ = false;
  bool first_layer_ = true;
};

// A layer's server-to-server demand from its routing (control::demand_from_tokens).
control::ServerDemand layer_demand(const TokenRouting& routing, const RankLayout& layout);

}  // namespace mfabric::runtime
