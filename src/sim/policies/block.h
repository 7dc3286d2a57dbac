// `block` (the paper's simulations): an EP all-to-all whose region does not have its plan waits
// for it; `oracle`: the same with no reconfiguration delay, an upper bound no OCS reaches.
#pragma once

#include "control/policy_names.h"
#include "sim/policy.h"

namespace mfabric::sim {

class BlockPolicy : public Policy {
 public:
  const char* name() const override { return control::kBlockPolicy; }
  bool hold(PolicyContext& ctx, const AllToAll& a, collective::CollectiveRequest&) override {
    return ctx.hold_for_plan(a);
  }
};

class OraclePolicy final : public BlockPolicy {
 public:
  const char* name() const override { return control::kOraclePolicy; }
  Time delay(Time) const override { return Time::zero(); }
};

}  // namespace mfabric::sim
