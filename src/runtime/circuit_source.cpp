#include "runtime/circuit_source.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "control/nic_mapping.h"
#include "control/policy_names.h"
#include "core/error.h"

namespace mfabric::runtime {

LocalCircuitSource::LocalCircuitSource(const RankLayout& layout, const std::string& planner,
                                       Rate link, Time switch_time)
    : layout_(layout), planner_(control::make_planner(planner)), switch_time_(switch_time) {
  layout_.validate();
  limits_ = control::region_limits(layout.alpha, layout.gpus_per_server(), link, layout.servers);
}

CircuitsInForce LocalCircuitSource::request(const control::ServerDemand& demand) {
  const control::CircuitPlan plan = planner_->plan(demand, limits_);
  std::vector<control::PortCircuit> circuits = control::map_to_nics(plan, layout_.server_nics());
  std::sort(circuits.begin(), circuits.end());
  if (circuits != in_force_.circuits) {
    in_force_.circuits = std::move(circuits);
    ++in_force_.generation;
    std::this_thread::sleep_for(std::chrono::duration<double>(switch_time_.seconds()));
  }
  return in_force_;
}

namespace {

// The policies the runtime carries out, named as sim/ names them.
constexpr std::pair<CircuitPolicy, const char*> kPolicies[] = {
    {CircuitPolicy::Block, control::kBlockPolicy},
    {CircuitPolicy::ReusePrevious, control::kReusePreviousPolicy},
};

}  // namespace

CircuitPolicy circuit_policy_from(const std::string& name) {
  std::string known;
  for (const auto& [policy, policy_text] : kPolicies) {
    if (name == policy_text) return policy;
    known += (known.empty() ? "" : " or ") + std::string(policy_text);
  }
  throw Error("", "policy", "expected " + known + ", got '" + name + "'");
}

const char* policy_name(CircuitPolicy policy) {
  for (const auto& [known, policy_text] : kPolicies) {
    if (known == policy) return policy_text;
  }
  return "";
}

LayerCircuits LayerCircuitSchedule::before_layer(const control::ServerDemand& demand) {
  LayerCircuits out;
  if (policy_ == CircuitPolicy::Block) {
    const auto start = std::chrono::steady_clock::now();
    CircuitsInForce next = source_.request(demand);
    out.reconfigured = next.circuits != in_force_.circuits;
    // The layer waits only when the circuits change (the OCS switches); planning to keep them
    // costs the same call but no switching.
    out.waited = out.reconfigured;
    if (out.waited)
      out.wait_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    in_force_ = std::move(next);
  } else {
    if (first_layer_) in_force_ = source_.current();
    out.reconfigured = changed_since_last_layer_;
  }
  first_layer_ = false;
  changed_since_last_layer_ = false;
  out.circuits = in_force_;
  return out;
}

void LayerCircuitSchedule::after_layer(const control::ServerDemand& demand) {
  if (policy_ != CircuitPolicy::ReusePrevious) return;
  CircuitsInForce next = source_.request(demand);
  changed_since_last_layer_ = next.circuits != in_force_.circuits;
  in_force_ = std::move(next);
}

control::ServerDemand layer_demand(const TokenRouting& routing, const RankLayout& layout) {
  return control::demand_from_tokens(routing.tokens, routing.ranks, routing.ranks,
                                     {layout.gpus_per_server(), 1, routing.token_bytes});
}

}  // namespace mfabric::runtime
