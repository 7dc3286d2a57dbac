// `paper-sim`: the controller of the paper's own simulator (the MixNet simulator, htsim lineage;
// docs/control-plane.md, "paper-sim"), to compare with the paper's evaluation on its terms.
//  - Every forward dispatch all-to-all of a (layer, micro-batch) that is not the region's
//    current one waits for a reconfiguration of the whole region, identical circuits or not
//    (SwitchRule::Every: every circuit goes dark for the delay; transfers on them pause, EPS
//    transfers go on). The forward combine runs on the dispatch's circuits.
//  - A layer's backward reconfiguration starts when the backward compute just before its first
//    backward all-to-all starts (the attention backward of the layer above in the stage, or the
//    LM head's backward for the top layer of the last stage), hidden under that compute as far
//    as it is long; the backward all-to-alls wait for what is left. The paper's simulator starts
//    it at the backward of the expert aggregation, a compute mfabric's task graph folds into
//    the layer above; a stage's top layer with no compute before it (another stage's gradient
//    arrives) reconfigures when its all-to-all is ready, exposed.
// `block` under `always` differs: an identical plan costs nothing, only changed circuits go
// dark, and backward plans are asked for when the layer above has finished its backward
// dispatches.
#pragma once

#include "control/policy_names.h"
#include "sim/policy.h"

namespace mfabric::sim {

class PaperSimPolicy final : public Policy {
 public:
  const char* name() const override { return control::kPaperSimPolicy; }
  std::optional<fabric::SwitchRule> switching() const override { return fabric::SwitchRule::Every; }
  bool plans_backward() const override { return true; }
  bool hold(PolicyContext& ctx, const AllToAll& a, collective::CollectiveRequest&) override {
    return ctx.hold_for_plan(a);
  }
  void compute_started(PolicyContext& ctx, int region, const workload::Task& task) override;
};

}  // namespace mfabric::sim
