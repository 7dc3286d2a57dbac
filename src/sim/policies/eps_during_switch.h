// `eps-during-switch`: the forward dispatch asks for its plan and starts at once, lowered GPU
// pair by GPU pair (`direct`) over what is up: the circuits that stay, and the EPS where they
// switch; when the new circuits come up its remaining bytes move onto them. The combine waits
// for what is left of the delay. Backward as `block`.
#pragma once

#include "control/policy_names.h"
#include "sim/policy.h"

namespace mfabric::sim {

class EpsDuringSwitchPolicy final : public Policy {
 public:
  const char* name() const override { return control::kEpsDuringSwitchPolicy; }
  bool hold(PolicyContext& ctx, const AllToAll& a,
            collective::CollectiveRequest& request) override {
    if (!a.forward_dispatch) return ctx.hold_for_plan(a);
    request.algorithm = "direct";
    if (!ctx.in_force(a.region, a.key)) ctx.request_plan(a);
    return false;
  }
  void circuits_up(PolicyContext& ctx, int region) override { ctx.move_onto_new_circuits(region); }
};

}  // namespace mfabric::sim
