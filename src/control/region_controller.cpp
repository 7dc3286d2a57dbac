#include "control/region_controller.h"

#include <utility>

namespace mfabric::control {

RegionController::RegionController(int region, ServerNics nics, PlanLimits limits,
                                   const Planner& planner, Time delay, CircuitSwitch& fabric)
    : region_(region),
      nics_(nics),
      limits_(limits),
      planner_(planner),
      delay_(delay),
      fabric_(fabric) {
  nics_.validate();
  limits_.validate();
}

void RegionController::request(std::int64_t key, const ServerDemand& demand,
                               std::function<void()> ready) {
  // The plan in force, nothing under way: go at once.
  if (!busy_ && key == key_) {
    ready();
    return;
  }
  if (busy_) {
    // The same plan as the one under way (or already queued): wait for it.
    if (key == key_) {
      waiting_.push_back(std::move(ready));
      return;
    }
    for (Request& q : queue_) {
      if (q.key == key) {
        q.ready.push_back(std::move(ready));
        return;
      }
    }
    ++stats_.conflicts;
    queue_.push_back(Request{key, demand, {}});
    queue_.back().ready.push_back(std::move(ready));
    return;
  }
  Request r{key, demand, {}};
  r.ready.push_back(std::move(ready));
  start(std::move(r));
}

void RegionController::start(Request r) {
  busy_ = true;
  key_ = r.key;
  busy_since_ = fabric_.now();
  waiting_ = std::move(r.ready);
  plan_ = planner_.plan(r.demand, limits_);
  ports_ = map_to_nics(plan_, nics_);
  ++stats_.reconfigurations;
  fabric_.tear_down(region_);
  fabric_.at(fabric_.now() + delay_, [this] { finish(); });
}

void RegionController::finish() {
  fabric_.set_up(region_, ports_);
  stats_.circuits_set_up += static_cast<std::int64_t>(ports_.size());
  stats_.busy += fabric_.now() - busy_since_;
  busy_ = false;
  std::vector<std::function<void()>> ready = std::move(waiting_);
  waiting_.clear();
  if (!queue_.empty()) {
    Request next = std::move(queue_.front());
    queue_.pop_front();
    // The waiters of this plan go first: their transfers start on the new circuits before the
    // next reconfiguration tears them down (and pauses them).
    for (auto& fn : ready)
      fn();
    start(std::move(next));
    return;
  }
  for (auto& fn : ready)
    fn();
}

}  // namespace mfabric::control
