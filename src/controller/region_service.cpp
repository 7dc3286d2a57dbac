#include "controller/region_service.h"

#include <fmt/format.h>

#include <algorithm>

#include <fmt/ranges.h>

#include "control/ocs_commands.h"
#include "core/error.h"
#include "core/output_text.h"

namespace mfabric::controller {

RegionControllerService::RegionControllerService(std::vector<RegionSpec> regions,
                                                 std::unique_ptr<tl1::Tl1Client> ocs,
                                                 std::size_t tl1_window)
    : regions_(std::move(regions)),
      ocs_(std::move(ocs)),
      tl1_window_(tl1_window),
      states_(regions_.size()),
      published_(regions_.size()) {
  if (!ocs_) throw Error("region controller: no OCS session");
  if (tl1_window_ < 1) throw Error("", "tl1 window", "expected at least 1 command at a time");
  for (const RegionSpec& region : regions_)
    planners_.push_back(control::make_planner(region.planner));
  health_.ocs_address = ocs_->address();
}

RegionControllerService::~RegionControllerService() = default;

void RegionControllerService::start() {
  const std::lock_guard lock(mutex_);
  try {
    reconcile();
    record(true, "");
  } catch (const Error& e) {
    record(false, e.what());
    throw;
  }
}

std::size_t RegionControllerService::index_of(const std::string& region) const {
  for (std::size_t k = 0; k < regions_.size(); ++k) {
    if (regions_[k].name == region) return k;
  }
  std::vector<std::string> names;
  for (const RegionSpec& r : regions_)
    names.push_back(r.name);
  throw Error("", "region",
              fmt::format("unknown region '{}' (regions: {})", region, fmt::join(names, ", ")));
}

std::pair<int, int> RegionControllerService::place(std::size_t index, int device_port) const {
  const RegionSpec& region = regions_[index];
  const int offset = device_port - region.first_port;
  if (offset < 0 || offset >= region.servers * region.nics.alpha) return {-1, -1};
  return {offset / region.nics.alpha, region.nics.first_ocs_nic() + offset % region.nics.alpha};
}

std::pair<int, int> RegionControllerService::device_ports(
    const std::string& region, const control::PortCircuit& circuit) const {
  const control::RegionPorts ports = regions_[index_of(region)].ports();
  return {ports.port(circuit.server, circuit.nic) + 1,
          ports.port(circuit.peer_server, circuit.peer_nic) + 1};
}

void RegionControllerService::mark_stale() {
  stale_ = true;
  const std::lock_guard lock(published_mutex_);
  published_stale_ = true;
}

void RegionControllerService::publish(std::size_t index) {
  const std::lock_guard lock(published_mutex_);
  published_[index] = report(index);
}

void RegionControllerService::reconcile() {
  try {
    read_back();
  } catch (...) {
    mark_stale();
    throw;
  }
}

void RegionControllerService::read_back() {
  // Readers keep the published state while the OCS is read (it holds at least that), unless a
  // patch is to be removed here.
  stale_ = true;
  const std::vector<tl1::PortStatus> statuses = ocs_->port_status();
  int ports = 0;
  std::set<int> unusable;
  for (const tl1::PortStatus& status : statuses) {
    ports = std::max(ports, status.port);
    if (status.state != tl1::PortState::InService) unusable.insert(status.port);
  }
  for (const RegionSpec& region : regions_) {
    const int last = region.first_port + region.servers * region.nics.alpha - 1;
    if (last > ports) {
      throw Error("", "regions",
                  fmt::format("region '{}' needs device ports {}-{}, the OCS at {} has {}",
                              region.name, region.first_port, last, ocs_->address(), ports));
    }
  }
  std::vector<std::set<control::PortCircuit>> held(regions_.size());
  for (const auto& [a, b] : ocs_->patches()) {
    std::size_t owner = regions_.size();
    control::PortCircuit circuit;
    for (std::size_t k = 0; k < regions_.size(); ++k) {
      const auto [server_a, nic_a] = place(k, a);
      const auto [server_b, nic_b] = place(k, b);
      if (server_a < 0 || server_b < 0 || server_a == server_b) continue;
      owner = k;
      circuit = server_a < server_b ? control::PortCircuit{server_a, nic_a, server_b, nic_b}
                                    : control::PortCircuit{server_b, nic_b, server_a, nic_a};
    }
    if (owner == regions_.size()) {
      // Not ours: its ports are taken.
      unusable.insert(a);
      unusable.insert(b);
      continue;
    }
    if (unusable.contains(a) || unusable.contains(b)) {
      // A circuit on a failed port carries nothing; free its healthy end for the next plan.
      mark_stale();
      ocs_->disconnect_port(unusable.contains(a) ? a : b);
      continue;
    }
    held[owner].insert(circuit);
  }
  ocs_ports_ = ports;
  unusable_ports_ = std::move(unusable);
  for (std::size_t k = 0; k < regions_.size(); ++k) {
    RegionState& state = states_[k];
    if (state.generation == 0 || held[k] != state.in_force) {
      state.in_force = std::move(held[k]);
      ++state.generation;
      state.layer = -1;
      state.micro_batch = -1;
    }
  }
  stale_ = false;
  {
    const std::lock_guard lock(published_mutex_);
    for (std::size_t k = 0; k < regions_.size(); ++k)
      published_[k] = report(k);
    published_stale_ = false;
  }
  const std::lock_guard lock(health_mutex_);
  ++health_.reconciliations;
  health_.ocs_reachable = true;
  health_.unusable_ports.assign(unusable_ports_.begin(), unusable_ports_.end());
}

void RegionControllerService::reconcile_if_stale() {
  if (stale_ || !ocs_->connected()) reconcile();
}

std::vector<control::PortCircuit> RegionControllerService::plan(
    std::size_t index, const control::ServerDemand& demand) {
  const RegionSpec& region = regions_[index];
  if (demand.servers() != region.servers) {
    throw Error("", "demand",
                fmt::format("region '{}' has {} servers, the demand {}", region.name,
                            region.servers, demand.servers()));
  }
  std::set<std::pair<int, int>> unusable;
  control::PlanLimits limits =
      control::region_limits(region.nics.alpha, region.nics.nics, region.link, region.servers);
  limits.ports.assign(static_cast<std::size_t>(region.servers), region.nics.alpha);
  for (const int port : unusable_ports_) {
    const auto [server, nic] = place(index, port);
    if (server < 0) continue;
    unusable.insert({server, nic});
    --limits.ports[static_cast<std::size_t>(server)];
  }
  const control::CircuitPlan plan = planners_[index]->plan(demand, limits);
  return control::map_to_nics(plan, region.nics, unusable);
}

bool RegionControllerService::apply(std::size_t index,
                                    const std::vector<control::PortCircuit>& target,
                                    std::string& error) {
  const RegionSpec& region = regions_[index];
  RegionState& state = states_[index];
  const control::RegionPorts ports = region.ports();
  const std::vector<control::PortCircuit> current(state.in_force.begin(), state.in_force.end());
  const auto changes =
      control::reconfiguration(control::configuration_of(current, ports, ocs_ports_),
                               control::configuration_of(target, ports, ocs_ports_));
  // Two pipelined rounds: every disconnect, then (once each completed, so that their ports are
  // free) every connect.
  std::vector<tl1::Tl1Command> disconnects;
  std::vector<tl1::Tl1Command> connects;
  std::vector<control::PortCircuit> connected;  // by connect
  for (const control::CrossConnect& change : changes) {
    const auto [server_a, nic_a] = place(index, change.a + 1);
    const auto [server_b, nic_b] = place(index, change.b + 1);
    const control::PortCircuit circuit{server_a, nic_a, server_b, nic_b};
    if (change.action == control::CrossConnect::Action::Disconnect) {
      // Reported no longer as soon as its removal may have begun.
      state.in_force.erase(circuit);
      disconnects.push_back({"DLT-PATCH", "", std::to_string(change.a + 1), "", "", {}});
    } else {
      connects.push_back(
          {"ENT-PATCH", "", tl1::format_patch_line(change.a + 1, change.b + 1), "", "", {}});
      connected.push_back(circuit);
    }
  }
  if (!disconnects.empty()) {
    // Readers stop seeing the circuits about to go before their DLT-PATCHes are sent: a set of
    // its own, so a generation of its own.
    ++state.generation;
    publish(index);
  }
  const auto round = [&](std::vector<tl1::Tl1Command> commands, bool connecting) {
    std::string refused;
    ocs_->execute_pipelined(
        std::move(commands), tl1_window_, [&](std::size_t k, const tl1::Tl1Response& response) {
          if (response.completion != tl1::Tl1Completion::Compld) {
            if (refused.empty()) {
              refused = fmt::format(
                  "OCS {}: {} answered {}{}{}", ocs_->address(),
                  connecting ? "ENT-PATCH" : "DLT-PATCH", tl1::completion_name(response.completion),
                  response.error_code.empty() ? "" : " (" + response.error_code + ")",
                  response.comment.empty() ? "" : ": " + quote_input(response.comment, 200));
            }
            return;
          }
          // A circuit counts as in force once its ENT-PATCH completed.
          if (connecting) state.in_force.insert(connected[k]);
          const std::lock_guard lock(health_mutex_);
          ++health_.commands;
        });
    if (!refused.empty()) throw Error(refused);
  };
  try {
    if (!disconnects.empty()) round(std::move(disconnects), false);
    if (!connects.empty()) round(std::move(connects), true);
  } catch (const Error& e) {
    error = e.what();
    mark_stale();
    return false;
  }
  return true;
}

RegionCircuits RegionControllerService::submit(const std::string& region, int layer,
                                               int micro_batch,
                                               const control::ServerDemand& demand) {
  const std::lock_guard lock(mutex_);
  const std::size_t index = index_of(region);
  RegionState& state = states_[index];
  try {
    // The diff is against what the OCS holds now (a port may have failed, a patch gone).
    reconcile();
    const std::set<control::PortCircuit> before = state.in_force;
    std::vector<control::PortCircuit> target = plan(index, demand);
    std::string error;
    bool done = apply(index, target, error);
    if (!done) {
      // Roll forward once: read back what the OCS holds and finish the plan from there (a port
      // may have failed meanwhile: plan again on the ports that work).
      try {
        reconcile();
        target = plan(index, demand);
        done = apply(index, target, error);
      } catch (const Error& e) {
        error = e.what();
      }
    }
    if (state.in_force != before) {
      ++state.generation;
      const std::lock_guard health_lock(health_mutex_);
      ++health_.reconfigurations;
    }
    if (!done) {
      state.layer = -1;
      state.micro_batch = -1;
      if (!stale_) publish(index);
      throw Error("", "",
                  fmt::format("region '{}': reconfiguration incomplete ({}); {} circuits in force",
                              region, error, state.in_force.size()));
    }
    state.layer = layer;
    state.micro_batch = micro_batch;
    publish(index);
    record(true, "");
    return report(index);
  } catch (const Error& e) {
    record(!stale_, e.what());
    throw;
  }
}

RegionCircuits RegionControllerService::circuits(const std::string& region) {
  const std::size_t index = index_of(region);
  {
    // Without waiting for the OCS session: what was last read back or completed, unless an
    // exchange failed since.
    const std::lock_guard lock(published_mutex_);
    if (!published_stale_) return published_[index];
  }
  const std::lock_guard lock(mutex_);
  try {
    reconcile_if_stale();
  } catch (const Error& e) {
    // Nothing can be vouched for: the OCS may have lost circuits while unreachable.
    record(false, e.what());
    throw Error("", "",
                fmt::format("region '{}': circuits unknown, the OCS is unreachable ({})", region,
                            e.what()));
  }
  return report(index);
}

void RegionControllerService::ocs_alarm() {
  const std::lock_guard lock(mutex_);
  {
    const std::lock_guard health_lock(health_mutex_);
    ++health_.alarms;
  }
  try {
    reconcile();
    record(true, "");
  } catch (const Error& e) {
    mark_stale();
    record(false, e.what());
  }
}

RegionCircuits RegionControllerService::report(std::size_t index) const {
  const RegionState& state = states_[index];
  return {regions_[index].name, state.generation,
          std::vector<control::PortCircuit>(state.in_force.begin(), state.in_force.end()),
          state.layer, state.micro_batch};
}

ControllerHealth RegionControllerService::health() const {
  const std::lock_guard lock(health_mutex_);
  return health_;
}

void RegionControllerService::record(bool reachable, const std::string& error) {
  const std::lock_guard lock(health_mutex_);
  health_.ocs_reachable = reachable;
  health_.last_error = error;
}

}  // namespace mfabric::controller
