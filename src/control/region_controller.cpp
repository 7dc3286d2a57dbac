#include "control/region_controller.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
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

void RegionController::request(std::int64_t key, DemandSource demand, std::function<void()> ready) {
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
    queue_.push_back(Request{key, std::move(demand), {}});
    queue_.back().ready.push_back(std::move(ready));
    return;
  }
  Request r{key, std::move(demand), {}};
  r.ready.push_back(std::move(ready));
  start(std::move(r));
}

void RegionController::install(std::int64_t key, const ServerDemand& demand) {
  if (busy_ || !ports_.empty() || !queue_.empty()) {
    throw std::logic_error("RegionController::install: the region already has circuits");
  }
  key_ = key;
  plan_ = planner_.plan(demand, limits_);
  ports_ = map_to_nics(plan_, nics_);
  std::sort(ports_.begin(), ports_.end());
  if (!ports_.empty()) fabric_.set_up(region_, ports_);
}

void RegionController::start(Request r) {
  key_ = r.key;
  plan_ = planner_.plan(r.demand(), limits_);
  std::vector<PortCircuit> next = map_to_nics(plan_, nics_);
  std::sort(next.begin(), next.end());
  std::vector<PortCircuit> going, coming;
  std::set_difference(ports_.begin(), ports_.end(), next.begin(), next.end(),
                      std::back_inserter(going));
  std::set_difference(next.begin(), next.end(), ports_.begin(), ports_.end(),
                      std::back_inserter(coming));
  ports_ = std::move(next);
  if (going.empty() && coming.empty()) {
    // Nothing to switch: the circuits in force serve this plan.
    ++stats_.unchanged;
    for (auto& fn : r.ready)
      fn();
    if (!queue_.empty()) {
      Request following = std::move(queue_.front());
      queue_.pop_front();
      start(std::move(following));
    }
    return;
  }
  busy_ = true;
  busy_since_ = fabric_.now();
  waiting_ = std::move(r.ready);
  adding_ = std::move(coming);
  ++stats_.reconfigurations;
  stats_.circuits_torn_down += static_cast<std::int64_t>(going.size());
  if (!going.empty()) fabric_.tear_down(region_, going);
  fabric_.at(fabric_.now() + delay_, [this] { finish(); });
}

void RegionController::finish() {
  fabric_.set_up(region_, adding_);
  stats_.circuits_set_up += static_cast<std::int64_t>(adding_.size());
  adding_.clear();
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
