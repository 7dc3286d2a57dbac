#include "control/region_controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/error.h"

namespace mfabric::control {

// Failures and pins while a reconfiguration is under way (busy_): ports_ holds the circuits of
// the plan under way (kept and coming up), adding_ those still coming up. A failed or pinned NIC
// takes its planned circuit out of plan_ and ports_ at once, and out of adding_ when it was still
// coming up (so finish() never sets it up; a circuit never set up is never torn down); a circuit
// already torn down by the reconfiguration under way is no longer in ports_ and is left alone.
// The reconfiguration itself goes on unchanged: its waiters are told when its delay ends, on the
// circuits left. Requests queued behind it plan when they start, so around every failure and pin
// made meanwhile. A pin comes up on its own timer, not at the reconfiguration's end: the OCS
// steers each port on its own. A request for the key in force is served by the circuits left
// (key_ is kept): a failure does not by itself cost a reconfiguration; the next new key plans
// around it.

RegionController::RegionController(int region, ServerNics nics, PlanLimits limits,
                                   const Planner& planner, Time delay, CircuitSwitch& fabric,
                                   SwitchRule rule)
    : region_(region),
      nics_(nics),
      limits_(limits),
      planner_(planner),
      delay_(delay),
      fabric_(fabric),
      rule_(rule) {
  nics_.validate();
  limits_.validate();
}

bool RegionController::request(std::int64_t key, DemandSource demand, std::function<void()> ready) {
  // The plan in force, nothing under way: go at once.
  if (!busy_ && key == key_) return true;
  if (busy_) {
    // The same plan as the one under way (or already queued): wait for it.
    if (key == key_) {
      waiting_.push_back(std::move(ready));
      return false;
    }
    for (Request& q : queue_) {
      if (q.key == key) {
        q.ready.push_back(std::move(ready));
        return false;
      }
    }
    ++stats_.conflicts;
    queue_.push_back(Request{key, std::move(demand), {}});
    queue_.back().ready.push_back(std::move(ready));
    return false;
  }
  Request r{key, std::move(demand), {}};
  r.ready.push_back(std::move(ready));
  return start(std::move(r), /*from_request=*/true);
}

void RegionController::install(std::int64_t key, const ServerDemand& demand) {
  if (busy_ || !ports_.empty() || !queue_.empty()) {
    throw std::logic_error("RegionController::install: the region already has circuits");
  }
  key_ = key;
  ports_ = plan_for(demand);
  if (!ports_.empty()) fabric_.set_up(region_, ports_);
}

std::vector<PortCircuit> RegionController::plan_for(const ServerDemand& demand) {
  plan_ = planner_.plan(demand, limits_for(demand.servers()));
  if (servers_ == 0) servers_ = demand.servers();
  std::vector<PortCircuit> ports = failed_.empty() && pinned_.empty()
                                       ? map_to_nics(plan_, nics_)
                                       : map_to_nics(plan_, nics_, unusable());
  std::sort(ports.begin(), ports.end());
  return ports;
}

PlanLimits RegionController::limits_for(int servers) const {
  if (failed_.empty() && pinned_.empty()) return limits_;
  std::vector<int> lost(static_cast<std::size_t>(servers), 0);
  for (const auto& [server, nic] : unusable()) {
    if (server >= servers) {
      throw Error("", "server",
                  fmt::format("server {} has a failed or pinned OCS NIC but the region's demand "
                              "has {} servers",
                              server, servers));
    }
    ++lost[static_cast<std::size_t>(server)];
  }
  const PlanLimits& given = limits_;
  given.validate(servers);
  PlanLimits limits = limits_;
  limits.ports.resize(static_cast<std::size_t>(servers));
  for (int s = 0; s < servers; ++s) {
    const std::size_t u = static_cast<std::size_t>(s);
    // The server's working, unpinned OCS NICs, never more than the limits allowed already.
    limits.ports[u] = std::max(0, std::min(given.ports_of(s), nics_.alpha - lost[u]));
  }
  return limits;
}

std::set<std::pair<int, int>> RegionController::unusable() const {
  std::set<std::pair<int, int>> out = failed_;
  for (const PortCircuit& c : pinned_) {
    out.insert({c.server, c.nic});
    out.insert({c.peer_server, c.peer_nic});
  }
  return out;
}

bool RegionController::is_pinned_nic(int server, int nic) const {
  return std::any_of(pinned_.begin(), pinned_.end(), [&](const PortCircuit& c) {
    return (c.server == server && c.nic == nic) || (c.peer_server == server && c.peer_nic == nic);
  });
}

std::optional<int> RegionController::free_ocs_nic(int server) const {
  for (int nic = nics_.first_ocs_nic(); nic < nics_.nics; ++nic) {
    if (!failed_.contains({server, nic}) && !is_pinned_nic(server, nic)) return nic;
  }
  return std::nullopt;
}

std::optional<PortCircuit> RegionController::planned_circuit_on(int server, int nic) const {
  // Each NIC carries at most one circuit.
  for (const PortCircuit& c : ports_) {
    if ((c.server == server && c.nic == nic) || (c.peer_server == server && c.peer_nic == nic)) {
      return c;
    }
  }
  return std::nullopt;
}

void RegionController::remove_planned(const PortCircuit& circuit, bool tear_down_if_up) {
  ports_.erase(std::find(ports_.begin(), ports_.end(), circuit));
  const auto pair = std::find_if(
      plan_.circuits.begin(), plan_.circuits.end(),
      [&](const Circuit& c) { return c.i == circuit.server && c.j == circuit.peer_server; });
  if (pair != plan_.circuits.end() && --pair->count == 0) plan_.circuits.erase(pair);
  --plan_.ports_used[static_cast<std::size_t>(circuit.server)];
  --plan_.ports_used[static_cast<std::size_t>(circuit.peer_server)];
  const auto coming = std::find(adding_.begin(), adding_.end(), circuit);
  if (coming != adding_.end()) {
    adding_.erase(coming);  // never set up, so nothing to tear down
    return;
  }
  if (!tear_down_if_up) return;
  fabric_.tear_down(region_, {circuit});
  ++stats_.circuits_torn_down;
}

void RegionController::drop_pin(std::size_t k) {
  const PortCircuit circuit = pinned_[k];
  const bool up = pins_[k].up;
  pinned_.erase(pinned_.begin() + static_cast<std::ptrdiff_t>(k));
  pins_.erase(pins_.begin() + static_cast<std::ptrdiff_t>(k));
  if (up) {
    fabric_.tear_down(region_, {circuit});
    ++stats_.circuits_torn_down;
  }
}

void RegionController::set_up_pin(std::int64_t id) {
  for (std::size_t k = 0; k < pins_.size(); ++k) {
    if (pins_[k].id != id) continue;
    if (pins_[k].up) return;
    pins_[k].up = true;
    fabric_.set_up(region_, {pinned_[k]});
    // Switching the pin's ports took the delay, like any reconfiguration (zero without one).
    fabric_.reconfigured(region_, fabric_.now() - delay_);
    ++stats_.reconfigurations;
    ++stats_.circuits_set_up;
    return;
  }
  // Unpinned meanwhile (a failed port): nothing to put up.
}

void RegionController::fail_port(int server, int nic) {
  if (nic < nics_.first_ocs_nic() || nic >= nics_.nics) {
    throw Error(
        "", "nic",
        fmt::format("NIC {} of server {} is not an OCS NIC: expected {} to {} (the last "
                    "alpha = {} of {} NICs)",
                    nic, server, nics_.first_ocs_nic(), nics_.nics - 1, nics_.alpha, nics_.nics));
  }
  if (server < 0 || (servers_ > 0 && server >= servers_)) {
    throw Error(
        "", "server",
        servers_ > 0
            ? fmt::format("server {} is not a server of the region (0 to {})", server, servers_ - 1)
            : fmt::format("expected a region-local server index >= 0, got {}", server));
  }
  if (!failed_.insert({server, nic}).second) return;
  ++stats_.failed_ports;
  for (std::size_t k = 0; k < pinned_.size(); ++k) {
    const PortCircuit& c = pinned_[k];
    if ((c.server == server && c.nic == nic) || (c.peer_server == server && c.peer_nic == nic)) {
      drop_pin(k);
      return;  // a NIC carries one circuit: no planned one
    }
  }
  if (const auto circuit = planned_circuit_on(server, nic)) remove_planned(*circuit, true);
}

std::optional<PortCircuit> RegionController::pin_relay(int server,
                                                       const std::vector<bool>& can_relay) {
  const int servers = static_cast<int>(can_relay.size());
  if (servers_ > 0 && servers != servers_) {
    throw Error(
        "", "can_relay",
        fmt::format("expected one entry per server of the region ({}), got {}", servers_, servers));
  }
  if (server < 0 || server >= servers) {
    throw Error(
        "", "server",
        fmt::format("server {} is not a server of the region (0 to {})", server, servers - 1));
  }
  if (servers_ == 0) servers_ = servers;
  for (std::size_t k = 0; k < pins_.size(); ++k) {
    if (pins_[k].server == server) return pinned_[k];
  }
  const std::optional<int> nic = free_ocs_nic(server);
  if (!nic) return std::nullopt;
  int peer = -1;
  std::optional<int> peer_nic;
  for (int p = 0; p < servers && !peer_nic; ++p) {
    // A pinned server has no EPS to relay over, whatever can_relay says.
    const bool without_eps =
        std::any_of(pins_.begin(), pins_.end(), [p](const Pin& pin) { return pin.server == p; });
    if (p == server || !can_relay[static_cast<std::size_t>(p)] || without_eps) continue;
    peer_nic = free_ocs_nic(p);
    peer = p;
  }
  if (!peer_nic) return std::nullopt;
  const PortCircuit circuit = server < peer ? PortCircuit{server, *nic, peer, *peer_nic}
                                            : PortCircuit{peer, *peer_nic, server, *nic};

  // The planned circuits on the two NICs go; the very same circuit, already up, stays up as the
  // pinned one (taking it down to put it back would only interrupt it).
  bool up = false;
  for (const auto& [s, n] : {std::pair{server, *nic}, std::pair{peer, *peer_nic}}) {
    const std::optional<PortCircuit> planned = planned_circuit_on(s, n);
    if (!planned) continue;
    const bool coming = std::find(adding_.begin(), adding_.end(), *planned) != adding_.end();
    if (*planned == circuit && !coming) {
      remove_planned(*planned, /*tear_down_if_up=*/false);
      up = true;
    } else {
      remove_planned(*planned, /*tear_down_if_up=*/true);
    }
  }
  const std::int64_t id = next_pin_id_++;
  pinned_.push_back(circuit);
  pins_.push_back(Pin{server, id, up});
  ++stats_.relays_pinned;
  if (!up) {
    if (delay_ == Time::zero()) {
      set_up_pin(id);
    } else {
      fabric_.at(fabric_.now() + delay_, [this, id] { set_up_pin(id); });
    }
  }
  return circuit;
}

bool RegionController::worth_switching(const ServerDemand& demand,
                                       const CircuitPlan& in_force) const {
  // A switch that costs nothing is always worth making: the planner's plan may be better for
  // the pairs that do not decide max_finish.
  if (delay_ == Time::zero()) return true;
  const PlanLimits limits = limits_for(demand.servers());
  return max_finish(demand, in_force, limits) >
         max_finish(demand, plan_, limits) + delay_.seconds();
}

bool RegionController::start(Request r, bool from_request) {
  key_ = r.key;
  const ServerDemand demand = r.demand();
  // The plan in force, kept aside only when the rule may return to it.
  std::optional<CircuitPlan> in_force;
  if (rule_ == SwitchRule::WhenFaster && planned_from_request_) in_force = plan_;
  std::vector<PortCircuit> next = plan_for(demand);
  // The circuits in force are compared only once a requested plan is up: the first requested
  // plan always goes up, also over a plan installed before training (made without demand).
  bool kept = false;
  if (in_force && next != ports_ && in_force->servers == demand.servers() &&
      !worth_switching(demand, *in_force)) {
    plan_ = std::move(*in_force);
    next = ports_;
    kept = true;
    ++stats_.kept;
  }
  planned_from_request_ = true;
  std::vector<PortCircuit> going, coming;
  // Every: the whole region switches, whatever the two plans share.
  const bool whole = rule_ == SwitchRule::Every;
  if (whole) {
    going = ports_;
    coming = next;
  } else {
    std::set_difference(ports_.begin(), ports_.end(), next.begin(), next.end(),
                        std::back_inserter(going));
    std::set_difference(next.begin(), next.end(), ports_.begin(), ports_.end(),
                        std::back_inserter(coming));
  }
  ports_ = std::move(next);
  if (!whole && going.empty() && coming.empty()) {
    // Nothing to switch: the circuits in force serve this plan (or were kept).
    if (!kept) ++stats_.unchanged;
    // Straight from request(), nothing is queued (the region was idle): the caller goes on.
    if (from_request) return true;
    for (auto& fn : r.ready)
      fn();
    if (!queue_.empty()) {
      Request following = std::move(queue_.front());
      queue_.pop_front();
      start(std::move(following));
    }
    return false;
  }
  busy_ = true;
  busy_since_ = fabric_.now();
  waiting_ = std::move(r.ready);
  adding_ = std::move(coming);
  ++stats_.reconfigurations;
  stats_.circuits_torn_down += static_cast<std::int64_t>(going.size());
  if (!going.empty()) fabric_.tear_down(region_, going);
  fabric_.at(fabric_.now() + delay_, [this] { finish(); });
  return false;
}

void RegionController::finish() {
  fabric_.set_up(region_, adding_);
  fabric_.reconfigured(region_, busy_since_);
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
