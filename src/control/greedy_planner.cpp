// Algorithm 1 of the paper (docs/control-plane.md): serve the bottleneck pair first.
#include "control/planner_impl.h"

namespace mfabric::control::detail {
namespace {

class GreedyPlanner final : public Planner {
 public:
  explicit GreedyPlanner(bool paper) : paper_(paper) {}

  std::string name() const override { return paper_ ? "greedy-paper" : "greedy"; }

  CircuitPlan plan(const ServerDemand& demand, const PlanLimits& limits) const override {
    Allocation allocation(demand, limits);  // validates limits
    // The printed algorithm stops at the first bottleneck it cannot serve; the practical one
    // (the authors' simulator) skips that pair and goes on.
    run_greedy(allocation, limits, GreedyKey::Paper, /*stop_at_first_blocked=*/paper_);
    return allocation.to_plan();
  }

 private:
  bool paper_;
};

}  // namespace

std::unique_ptr<Planner> make_greedy_planner(bool paper) {
  return std::make_unique<GreedyPlanner>(paper);
}

}  // namespace mfabric::control::detail
