// The policies `fabric.policy` accepts: one line each (a new policy is sim/policies/<name>.{h,cpp}
// on sim::Policy plus a line here).
#include <memory>

#include "control/policy_names.h"
#include "sim/policies/block.h"
#include "sim/policies/eps_during_switch.h"
#include "sim/policies/paper_sim.h"
#include "sim/policies/predict.h"
#include "sim/policies/reuse_previous.h"
#include "sim/policy.h"

namespace mfabric::sim {

PolicyRegistry& policies() {
  static PolicyRegistry registry(
      "policy",
      {
          {control::kBlockPolicy,
           "each layer's forward dispatch all-to-all waits for its circuits; backward plans go up "
           "under the compute of the layer before",
           make_as<Policy, BlockPolicy>},
          {control::kReusePreviousPolicy,
           "the dispatch runs on the circuits up, the plan follows under expert compute",
           make_as<Policy, ReusePreviousPolicy>},
          {control::kEpsDuringSwitchPolicy,
           "the dispatch starts over the EPS and moves to the circuits when they come up",
           make_as<Policy, EpsDuringSwitchPolicy>},
          {control::kPredictPolicy,
           "Copilot forecasts the next layer's plan under attention compute",
           make_as<Policy, PredictPolicy>},
          {control::kOraclePolicy, "block with no delay: an upper bound",
           make_as<Policy, OraclePolicy>},
          {control::kPaperSimPolicy,
           "the paper's simulator: every new layer's dispatch waits for a whole-region switch "
           "(switching every)",
           make_as<Policy, PaperSimPolicy>},
      });
  return registry;
}

std::vector<std::string> policy_names() {
  return policies().names();
}

std::unique_ptr<Policy> make_policy(const std::string& name) {
  const auto* entry = policies().find(name);
  return entry ? entry->factory() : nullptr;
}

}  // namespace mfabric::sim
