// The policies `fabric.policy` accepts: one line each.
#include <functional>
#include <utility>

#include "control/policy_names.h"
#include "sim/policies/block.h"
#include "sim/policies/eps_during_switch.h"
#include "sim/policies/paper_sim.h"
#include "sim/policies/predict.h"
#include "sim/policies/reuse_previous.h"
#include "sim/policy.h"

namespace mfabric::sim {

namespace {

using Make = std::function<std::unique_ptr<Policy>()>;

const std::vector<std::pair<std::string, Make>>& registry() {
  static const std::vector<std::pair<std::string, Make>> policies = {
      {control::kBlockPolicy, [] { return std::make_unique<BlockPolicy>(); }},
      {control::kReusePreviousPolicy, [] { return std::make_unique<ReusePreviousPolicy>(); }},
      {control::kEpsDuringSwitchPolicy, [] { return std::make_unique<EpsDuringSwitchPolicy>(); }},
      {control::kPredictPolicy, [] { return std::make_unique<PredictPolicy>(); }},
      {control::kOraclePolicy, [] { return std::make_unique<OraclePolicy>(); }},
      {control::kPaperSimPolicy, [] { return std::make_unique<PaperSimPolicy>(); }},
  };
  return policies;
}

}  // namespace

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry())
    names.push_back(entry.first);
  return names;
}

std::unique_ptr<Policy> make_policy(const std::string& name) {
  for (const auto& [known, make] : registry()) {
    if (known == name) return make();
  }
  return nullptr;
}

}  // namespace mfabric::sim
