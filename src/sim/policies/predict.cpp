#include "sim/policies/predict.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "control/prediction_metrics.h"
#include "control/token_demand.h"
#include "sim/mfabric_control.h"

namespace mfabric::sim {

namespace {

// Copilot counts tokens: the dispatch matrix is scaled so that its largest row sum is at most
// this many counts (whole numbers, with room to spare in 32 bits).
constexpr int kCopilotRowCounts = 1 << 26;
constexpr double kMaxCount = std::numeric_limits<std::int32_t>::max();

}  // namespace

void PredictPolicy::attach(PolicyContext& ctx) {
  const int regions = ctx.regions();
  units_.assign(static_cast<std::size_t>(regions), 0.0);
  for (int region = 0; region < regions; ++region) {
    const std::vector<int>& stage = ctx.stage_layers(region);
    const int ep = ctx.ep_size(region);
    copilots_.push_back(stage.empty() ? nullptr
                                      : std::make_unique<control::CopilotPredictor>(
                                            ep, ep, static_cast<int>(stage.size())));
  }
  ReusePreviousPolicy::attach(ctx);
}

std::vector<std::int32_t> PredictPolicy::counts_of(const PolicyContext& ctx, int region,
                                                   std::int64_t key, double& unit) const {
  const std::vector<workload::TaskId>* ids = ctx.dispatches(region, key);
  if (ids == nullptr) return {};
  const workload::Task& t = ctx.graph().task(ids->front());
  if (t.matrix() < 0) return {};
  const workload::ByteMatrix& m = ctx.graph().matrix(t.matrix());
  if (unit <= 0) {
    std::int64_t largest = 1;
    for (int i = 0; i < m.n; ++i) {
      std::int64_t row = 0;
      for (int j = 0; j < m.n; ++j)
        row += m.at(i, j);
      largest = std::max(largest, row);
    }
    unit = std::max(1.0, static_cast<double>(largest) / static_cast<double>(kCopilotRowCounts));
  }
  std::vector<std::int32_t> counts(static_cast<std::size_t>(m.n) * static_cast<std::size_t>(m.n));
  for (int i = 0; i < m.n; ++i) {
    for (int j = 0; j < m.n; ++j) {
      const double c = std::round(static_cast<double>(m.at(i, j)) / unit);
      counts[static_cast<std::size_t>(i * m.n + j)] =
          static_cast<std::int32_t>(std::min(c, kMaxCount));
    }
  }
  return counts;
}

std::int64_t PredictPolicy::neighbour_key(const PolicyContext& ctx, int region,
                                          const workload::Task& t, int step) const {
  const std::vector<int>& stage = ctx.stage_layers(region);
  const auto at = std::find(stage.begin(), stage.end(), static_cast<int>(t.layer));
  if (at == stage.end()) return -1;
  const auto index = (at - stage.begin()) + step;
  if (index < 0 || index >= static_cast<std::ptrdiff_t>(stage.size())) return -1;
  workload::Task other = t;
  other.layer = static_cast<std::int16_t>(stage[static_cast<std::size_t>(index)]);
  const std::int64_t key = plan_key(other, false);
  return ctx.dispatches(region, key) != nullptr ? key : -1;
}

void PredictPolicy::learn(PolicyContext& ctx, int region, const workload::Task& dispatch) {
  const std::int64_t key = plan_key(dispatch, false);
  const auto forecast = forecasts_.find({region, key});
  if (forecast != forecasts_.end()) {
    const control::ServerDemand real = ctx.demand_of(region, key);
    error_sum_ += control::demand_relative_error(real, forecast->second);
    ++predictions_;
    forecasts_.erase(forecast);
  }
  const std::int64_t previous = neighbour_key(ctx, region, dispatch, -1);
  control::CopilotPredictor* copilot = copilots_[static_cast<std::size_t>(region)].get();
  if (previous < 0 || copilot == nullptr) return;
  double& unit = units_[static_cast<std::size_t>(region)];
  const auto before = counts_of(ctx, region, previous, unit);
  const auto now = counts_of(ctx, region, key, unit);
  if (before.empty() || now.empty()) return;
  const std::vector<int>& stage = ctx.stage_layers(region);
  const auto index =
      std::find(stage.begin(), stage.end(), static_cast<int>(dispatch.layer)) - stage.begin();
  copilot->observe(static_cast<int>(index), before, now);
}

void PredictPolicy::forward_dispatches_done(PolicyContext& ctx, int region,
                                            const workload::Task& dispatch) {
  learn(ctx, region, dispatch);
  ReusePreviousPolicy::forward_dispatches_done(ctx, region, dispatch);
}

void PredictPolicy::forward_combines_done(PolicyContext& ctx, int region,
                                          const workload::Task& combine) {
  control::CopilotPredictor* copilot = copilots_[static_cast<std::size_t>(region)].get();
  const std::int64_t next = neighbour_key(ctx, region, combine, +1);
  if (next < 0 || copilot == nullptr) return;
  double& unit = units_[static_cast<std::size_t>(region)];
  const auto now = counts_of(ctx, region, plan_key(combine, false), unit);
  if (now.empty()) return;
  const std::vector<int>& stage = ctx.stage_layers(region);
  const auto index =
      std::find(stage.begin(), stage.end(), static_cast<int>(combine.layer)) - stage.begin() + 1;
  const std::vector<double> tokens = copilot->predict(static_cast<int>(index), now);
  const int n = copilot->ep();
  const workload::ByteMatrix bytes = control::rank_bytes_from_tokens(tokens, n, n, unit);
  control::ServerDemand d(ctx.region_servers(region));
  for (const workload::TaskId id : *ctx.dispatches(region, next))
    ctx.add_matrix_demand(bytes, id, region, d);
  forecasts_[{region, next}] = d;
  ctx.request(region, forecast_key(next), std::move(d));
}

void PredictPolicy::report(ControlStats& stats) const {
  stats.predictions += predictions_;
  stats.prediction_error += error_sum_;
}

}  // namespace mfabric::sim
