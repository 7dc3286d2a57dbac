#include "sim/mfabric_control.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "net/circuits.h"
#include "sim/fabric_controllers.h"

namespace mfabric::sim {

using workload::Task;
using workload::TaskId;

namespace {

bool is_ep_all_to_all(const Task& t) {
  return t.kind == workload::TaskKind::Collective &&
         t.collective == workload::CollectiveKind::AllToAll && t.traffic == workload::Traffic::EP;
}

}  // namespace

namespace {

// Layers and micro-batches of one iteration, as they pack into a plan key.
constexpr std::int64_t kKeyRange = 65536;

}  // namespace

std::int64_t plan_key(const Task& t, bool backward) {
  const std::int64_t layer = t.layer + 1;  // -1 (no layer) is a key of its own
  const std::int64_t mb = t.micro_batch + 1;
  return ((static_cast<std::int64_t>(t.iteration) * kKeyRange + layer) * kKeyRange + mb) * 2 +
         (backward ? 1 : 0);
}

ControlPlane make_control_plane(const fabric::Topology& topology) {
  const fabric::OcsParams* ocs = topology.ocs();
  if (topology.regions().empty() || ocs == nullptr) {
    throw Error("", "fabric", "the mFabric control plane needs a fabric with OCS regions");
  }
  ControlPlane plane;
  plane.planner =
      with_context("", "fabric.planner", [&] { return control::make_planner(ocs->planner); });
  plane.policy =
      with_context("", "fabric.policy", [&] { return policies().at(ocs->policy).factory(); });
  plane.switching = ocs->switching;
  if (const std::optional<fabric::SwitchRule> needed = plane.policy->switching()) {
    // `always`, the default, gives way; another rule would be silently ignored.
    if (ocs->switching != fabric::SwitchRule::Always && ocs->switching != *needed) {
      throw Error(
          "", "fabric.switching",
          fmt::format("policy {} switches by rule '{}'; '{}' does not apply to it (leave "
                      "switching out)",
                      ocs->policy, fabric::to_string(*needed), fabric::to_string(ocs->switching)));
    }
    plane.switching = *needed;
  }
  plane.delay = plane.policy->delay(ocs->reconfiguration);
  return plane;
}

MfabricControl::MfabricControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                               ControlPlane plane, const std::vector<std::int32_t>& spare_gpus)
    : graph_(graph),
      topology_(topology),
      group_region_(graph.groups().size(), -1),
      plane_(std::move(plane)) {
  if (topology.regions().empty() || !plane_.planner || !plane_.policy) {
    throw Error("", "fabric", "the mFabric control plane needs a fabric with OCS regions");
  }
  const std::set<std::int32_t> spares(spare_gpus.begin(), spare_gpus.end());
  for (TaskId id = 0; id < static_cast<TaskId>(graph.size()); ++id) {
    const Task& t = graph.task(id);
    if (!is_ep_all_to_all(t)) continue;
    const auto& members = graph.group(t.group());
    // The region of its first member not on a spare (a spare may lie outside it).
    std::int32_t first = members.front();
    for (std::int32_t g : members) {
      if (spares.count(g) == 0) {
        first = g;
        break;
      }
    }
    const int region = region_of_gpu(first);
    group_region_[static_cast<std::size_t>(t.group())] = region;
    for (std::int32_t g : members) {
      if (region_of_gpu(g) != region && spares.count(g) == 0) {
        throw Error("", "fabric.region",
                    fmt::format("an expert-parallel all-to-all ({}) spans GPUs {} and {}, in "
                                "regions {} and {}: a region ({} servers) must hold whole EP "
                                "groups (EP x TP / GPUs per server servers)",
                                graph.label(id), first, g, region, region_of_gpu(g),
                                topology.regions().front().servers));
      }
    }
    if (t.op == workload::Op::Dispatch) {
      dispatches_[{region, plan_key(t, t.phase == workload::Phase::Backward)}].push_back(id);
    }
    if (t.op == workload::Op::Combine && t.phase != workload::Phase::Backward) {
      ++combines_left_[{region, plan_key(t, false)}];
    }
  }
  // Each region's stage: its MoE layers, in order (for predict).
  std::vector<std::set<int>> layers(topology.regions().size());
  for (const auto& [k, ids] : dispatches_) {
    const Task& t = graph.task(ids.front());
    if (t.phase != workload::Phase::Backward)
      layers[static_cast<std::size_t>(k.first)].insert(t.layer);
  }
  for (const auto& s : layers)
    stage_layers_.emplace_back(s.begin(), s.end());
  for (const auto& [k, ids] : dispatches_)
    unfinished_[k] = static_cast<int>(ids.size());
  for (const auto& [k, ids] : dispatches_) {
    if (ep_sizes_.emplace(k.first, 0).second) {
      ep_sizes_[k.first] = static_cast<int>(graph.group(graph.task(ids.front()).group()).size());
    }
  }
  stats_.planner = plane_.planner->name();
  stats_.policy = plane_.policy->name();
  stats_.switching = fabric::to_string(plane_.switching);
}

int MfabricControl::region_of_gpu(int gpu) const {
  const int server = gpu / topology_.cluster().gpus_per_server;
  return server / topology_.regions().front().servers;
}

void MfabricControl::attach(EngineContext& engine) {
  engine_ = &engine;
  const fabric::ClusterSpec& c = topology_.cluster();
  const control::ServerNics nics{c.nics_per_server, topology_.circuit_degree(), c.numa()};
  for (const fabric::Region& r : topology_.regions()) {
    const control::PlanLimits limits =
        control::region_limits(nics.alpha, nics.nics, c.link, r.servers);
    regions_.push_back(std::make_unique<control::RegionController>(
        r.id, nics, limits, *plane_.planner, plane_.delay, *this, plane_.switching));
  }
  circuits_.assign(regions_.size(), {});
  ocs_nics_.assign(regions_.size(), {});
  for (const fabric::Region& r : topology_.regions()) {
    std::vector<fabric::NodeId>& ocs = ocs_nics_[static_cast<std::size_t>(r.id)];
    for (int s = r.first_server; s < r.first_server + r.servers; ++s) {
      for (int n = nics.first_ocs_nic(); n < nics.nics; ++n)
        ocs.push_back(topology_.nic(s, n));
    }
  }
  plane_.policy->attach(*this);
}

void MfabricControl::install_uniform_plans() {
  // Every pair of the region's servers equally wanted: the first dispatch has circuits to reuse.
  installing_ = true;
  for (std::size_t region = 0; region < regions_.size(); ++region) {
    const int servers = topology_.regions()[region].servers;
    control::ServerDemand uniform(servers);
    for (int i = 0; i < servers; ++i) {
      for (int j = i + 1; j < servers; ++j)
        uniform.add(i, j, 1);
    }
    regions_[region]->install(control::kInstalledPlanKey, uniform);
  }
  installing_ = false;
}

control::ServerDemand MfabricControl::demand_of(int region, std::int64_t key) const {
  const fabric::Region& r = topology_.regions()[static_cast<std::size_t>(region)];
  control::ServerDemand d(r.servers);
  const auto it = dispatches_.find({region, key});
  if (it == dispatches_.end()) return d;
  for (TaskId id : it->second)
    add_demand(id, region, d);
  return d;
}

void MfabricControl::add_demand(TaskId id, int region, control::ServerDemand& d) const {
  const Task& t = graph_.task(id);
  const auto& members = graph_.group(t.group());
  if (t.matrix() >= 0) {
    add_matrix_demand(graph_.matrix(t.matrix()), id, region, d);
    return;
  }
  // Without a matrix every member sends bytes / n to each member (task_graph.h).
  const int n = static_cast<int>(members.size());
  workload::ByteMatrix uniform(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      uniform.at(i, j) = t.bytes().count() / n;
  }
  add_matrix_demand(uniform, id, region, d);
}

void MfabricControl::add_matrix_demand(const workload::ByteMatrix& m, TaskId like, int region,
                                       control::ServerDemand& d) const {
  const auto& members = graph_.group(graph_.task(like).group());
  const fabric::Region& r = topology_.regions()[static_cast<std::size_t>(region)];
  // Members in the region; a spare outside it sends and receives over the EPS.
  std::vector<int> inside;
  std::vector<int> server_of;
  for (std::size_t k = 0; k < members.size(); ++k) {
    const int s = members[k] / topology_.cluster().gpus_per_server - r.first_server;
    if (s < 0 || s >= r.servers) continue;
    inside.push_back(static_cast<int>(k));
    server_of.push_back(s);
  }
  const auto add_all = [&](const workload::ByteMatrix& bytes) {
    for (const control::DemandPair& p :
         control::demand_from_gpu_bytes(bytes, server_of, r.servers).pairs())
      d.add(p.i, p.j, p.bytes);
  };
  if (inside.size() == members.size()) {
    add_all(m);
    return;
  }
  const int n = static_cast<int>(inside.size());
  workload::ByteMatrix part(n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b)
      part.at(a, b) =
          m.at(inside[static_cast<std::size_t>(a)], inside[static_cast<std::size_t>(b)]);
  }
  add_all(part);
}

bool MfabricControl::in_force(int region, std::int64_t key) const {
  const control::RegionController& rc = *regions_[static_cast<std::size_t>(region)];
  return !rc.reconfiguring() && rc.current_key() == key;
}

control::RegionController::DemandSource MfabricControl::demand_for(const AllToAll& a) const {
  return [this, region = a.region, key = a.key, id = a.id] {
    control::ServerDemand d = demand_of(region, key);
    // An all-to-all of no known dispatch (an imported trace's) plans from its own matrix.
    if (dispatches_.find({region, key}) == dispatches_.end()) add_demand(id, region, d);
    return d;
  };
}

void MfabricControl::request_plan(const AllToAll& a) {
  regions_[static_cast<std::size_t>(a.region)]->request(a.key, demand_for(a), [] {});
}

bool MfabricControl::hold_for_plan(const AllToAll& a) {
  if (in_force(a.region, a.key)) return false;
  control::RegionController& rc = *regions_[static_cast<std::size_t>(a.region)];
  const workload::TaskId id = a.id;
  const Time since = engine_->now();
  const int region = a.region;
  const bool served_at_once = rc.request(a.key, demand_for(a), [this, id, since, region] {
    stats_.held_time += engine_->now() - since;
    stats_.holds.push_back({region, since, engine_->now()});
    engine_->release(id);
  });
  if (served_at_once) return false;
  ++stats_.held;
  return true;
}

void MfabricControl::request(int region, std::int64_t key, control::ServerDemand demand) {
  regions_[static_cast<std::size_t>(region)]->request(
      key, [d = std::move(demand)] { return d; }, [] {});
}

void MfabricControl::recalibrate(int region, std::int64_t key) {
  control::RegionController& rc = *regions_[static_cast<std::size_t>(region)];
  if (rc.current_key() == key) return;
  rc.request(
      key, [this, region, key] { return demand_of(region, key); }, [] {});
}

void MfabricControl::move_onto_new_circuits(int region) {
  net::require_circuits(engine_->backend()).reroute(ocs_nics_[static_cast<std::size_t>(region)]);
}

const std::vector<workload::TaskId>* MfabricControl::dispatches(int region,
                                                                std::int64_t key) const {
  const auto it = dispatches_.find({region, key});
  return it == dispatches_.end() ? nullptr : &it->second;
}

int MfabricControl::region_servers(int region) const {
  return topology_.regions()[static_cast<std::size_t>(region)].servers;
}

int MfabricControl::ep_size(int region) const {
  const auto it = ep_sizes_.find(region);
  return it == ep_sizes_.end() ? 1 : it->second;
}

bool MfabricControl::hold_collective(TaskId id, collective::CollectiveRequest& request) {
  const Task& t = graph_.task(id);
  if (!is_ep_all_to_all(t)) return false;
  AllToAll a;
  a.id = id;
  a.task = &t;
  a.region = home_region(t);
  a.backward = t.phase == workload::Phase::Backward;
  a.key = plan_key(t, a.backward);
  a.forward_dispatch = !a.backward && t.op == workload::Op::Dispatch;
  return plane_.policy->hold(*this, a, request);
}

void MfabricControl::compute_started(TaskId id) {
  const Task& t = graph_.task(id);
  if (t.gpu() < 0) return;
  const int region = region_of_gpu(t.gpu());
  if (region >= regions()) return;  // a server outside every region
  plane_.policy->compute_started(*this, region, t);
}

void MfabricControl::collective_finished(TaskId id) {
  const Task& t = graph_.task(id);
  if (!is_ep_all_to_all(t)) return;
  const bool backward = t.phase == workload::Phase::Backward;
  const int region = home_region(t);
  if (!backward && t.op == workload::Op::Combine) {
    const auto left = combines_left_.find({region, plan_key(t, false)});
    if (left != combines_left_.end() && --left->second == 0) {
      plane_.policy->forward_combines_done(*this, region, t);
    }
    return;
  }
  if (t.op != workload::Op::Dispatch) return;
  const auto left = unfinished_.find({region, plan_key(t, backward)});
  if (left == unfinished_.end() || --left->second > 0) return;
  if (!backward) {
    plane_.policy->forward_dispatches_done(*this, region, t);
    return;
  }
  if (plane_.policy->plans_backward()) return;
  // The region is done with this layer's circuits: the layer before it comes next in backward.
  Task previous = t;
  previous.layer = static_cast<std::int16_t>(t.layer - 1);
  const std::int64_t key = plan_key(previous, true);
  if (dispatches_.find({region, key}) == dispatches_.end()) return;  // not in this stage
  recalibrate(region, key);
}

Time MfabricControl::now() const {
  return engine_->now();
}

void MfabricControl::at(Time t, std::function<void()> fn) {
  engine_->at(t, std::move(fn));
}

void MfabricControl::tear_down(int region, const std::vector<control::PortCircuit>& circuits) {
  auto& up = circuits_[static_cast<std::size_t>(region)];
  for (const control::PortCircuit& p : circuits) {
    const auto it = up.find(p);
    net::require_circuits(engine_->backend()).disconnect(it->second);
    up.erase(it);
  }
}

void MfabricControl::set_up(int region, const std::vector<control::PortCircuit>& circuits) {
  const fabric::Region& r = topology_.regions()[static_cast<std::size_t>(region)];
  auto& up = circuits_[static_cast<std::size_t>(region)];
  net::Backend& net = engine_->backend();
  net::Circuits& ocs = net::require_circuits(net);
  for (const control::PortCircuit& p : circuits) {
    up.emplace(p, ocs.connect(topology_.nic(r.first_server + p.server, p.nic),
                              topology_.nic(r.first_server + p.peer_server, p.peer_nic)));
  }
  ocs.resume_paused(ocs_nics_[static_cast<std::size_t>(region)]);
  plane_.policy->circuits_up(*this, region);
  // After a failure, transfers stalled on down links may have a way now (a relay circuit).
  if (failures_) net.reroute_down();
}

void MfabricControl::reconfigured(int region, Time since) {
  if (installing_) return;  // before training: not a reconfiguration
  stats_.spans.push_back({region, since, engine_->now()});
  stats_.reconfiguration_time += engine_->now() - since;
}

const fabric::Region& MfabricControl::region_of_server(int server) const {
  return topology_
      .regions()[static_cast<std::size_t>(server / topology_.regions().front().servers)];
}

void MfabricControl::fail_port(fabric::NodeId nic) {
  failures_ = true;
  const fabric::Node& n = topology_.node(nic);
  const fabric::Region& r = region_of_server(n.server);
  regions_[static_cast<std::size_t>(r.id)]->fail_port(n.server - r.first_server, n.index);
  ++stats_.failed_ports;
  // The transfers of its circuit paused when it went: they take what is up now.
  net::require_circuits(engine_->backend())
      .resume_paused(ocs_nics_[static_cast<std::size_t>(r.id)]);
}

void MfabricControl::isolate(int server, const std::vector<bool>& can_relay) {
  failures_ = true;
  const fabric::Region& r = region_of_server(server);
  if (!regions_[static_cast<std::size_t>(r.id)]->pin_relay(server - r.first_server, can_relay)) {
    throw Error("", "failures",
                fmt::format("server {} has lost its EPS NICs and no server of its region (servers "
                            "{} to {}) has a working OCS port and EPS NIC to relay for it",
                            server, r.first_server, r.first_server + r.servers - 1));
  }
  ++stats_.relays;
}

ControlStats MfabricControl::stats() const {
  ControlStats s = stats_;
  plane_.policy->report(s);
  if (s.predictions > 0) s.prediction_error /= static_cast<double>(s.predictions);
  for (const auto& rc : regions_) {
    s.reconfigurations += rc->stats().reconfigurations;
    s.unchanged += rc->stats().unchanged;
    s.kept += rc->stats().kept;
    s.circuits_torn_down += rc->stats().circuits_torn_down;
    s.conflicts += rc->stats().conflicts;
  }
  return s;
}

void MfabricControl::report(ControlReport& out) const {
  out.control = stats();
}

}  // namespace mfabric::sim
