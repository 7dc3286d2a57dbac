// `predict` (Copilot): when a layer's forward combines in a region have finished, the region's
// Copilot predictor (one per region, at EP-rank level: each rank's bytes to every rank)
// forecasts the next layer's dispatch from this layer's, and the plan for that forecast goes up
// under the next layer's attention compute; the next dispatch then runs on it, and
// recalibration before the combine follows `reuse-previous`. The first layer of a stage has
// nothing to predict from and runs on what is up. Prediction quality is reported.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "control/copilot.h"
#include "control/policy_names.h"
#include "sim/policies/reuse_previous.h"

namespace mfabric::sim {

class PredictPolicy final : public ReusePreviousPolicy {
 public:
  const char* name() const override { return control::kPredictPolicy; }
  void attach(PolicyContext& ctx) override;
  void forward_dispatches_done(PolicyContext& ctx, int region,
                               const workload::Task& dispatch) override;
  void forward_combines_done(PolicyContext& ctx, int region,
                             const workload::Task& combine) override;
  void report(ControlStats& stats) const override;

  // The key a forecast plan of `key` is requested under: below every real key (>= 0), the
  // plan installed before training and "no plan" (control/region_controller.h), so that the
  // real plan of that layer is never taken for it.
  static std::int64_t forecast_key(std::int64_t key) { return -3 - key; }

 private:
  // Observes a layer's real forward dispatch against the layer before it in the stage.
  void learn(PolicyContext& ctx, int region, const workload::Task& dispatch);
  // The forward dispatch matrix of (region, key)'s first EP group as whole-number counts for
  // Copilot (bytes / unit), or empty.
  std::vector<std::int32_t> counts_of(const PolicyContext& ctx, int region, std::int64_t key,
                                      double& unit) const;
  // The forward key of the MoE layer after (before) `t`'s in its region's stage, or -1.
  std::int64_t neighbour_key(const PolicyContext& ctx, int region, const workload::Task& t,
                             int step) const;

  std::vector<std::unique_ptr<control::CopilotPredictor>> copilots_;  // per region, or null
  std::vector<double> units_;  // per region: bytes per Copilot count (set on first use)
  std::map<std::pair<int, std::int64_t>, control::ServerDemand> forecasts_;
  std::int64_t predictions_ = 0;
  double error_sum_ = 0;  // summed relative errors, in the order the forecasts are checked
};

}  // namespace mfabric::sim
