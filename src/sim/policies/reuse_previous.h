// `reuse-previous`: a demand-free plan is up before training; a forward dispatch goes at once on
// what is up (the previous layer's circuits), and once the region's dispatches of its layer and
// micro-batch have finished the region recalibrates from their real demand under expert compute;
// the combine waits for what is left of the delay. Backward as `block`.
#pragma once

#include "control/policy_names.h"
#include "sim/policy.h"

namespace mfabric::sim {

class ReusePreviousPolicy : public Policy {
 public:
  const char* name() const override { return control::kReusePreviousPolicy; }
  void attach(PolicyContext& ctx) override { ctx.install_uniform_plans(); }
  bool hold(PolicyContext& ctx, const AllToAll& a, collective::CollectiveRequest&) override {
    if (a.forward_dispatch) return false;
    return ctx.hold_for_plan(a);
  }
  void forward_dispatches_done(PolicyContext& ctx, int region,
                               const workload::Task& dispatch) override {
    ctx.recalibrate(region, plan_key(dispatch, false));
  }
};

}  // namespace mfabric::sim
