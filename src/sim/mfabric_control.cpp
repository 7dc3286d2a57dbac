#include "sim/mfabric_control.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "control/prediction_metrics.h"
#include "control/token_demand.h"
#include "core/error.h"

namespace mfabric::sim {

using workload::Task;
using workload::TaskId;

namespace {

bool is_ep_all_to_all(const Task& t) {
  return t.kind == workload::TaskKind::Collective &&
         t.collective == workload::CollectiveKind::AllToAll && t.traffic == workload::Traffic::EP;
}

}  // namespace

std::int64_t MfabricControl::key_of(const Task& t, bool backward) {
  const std::int64_t layer = t.layer + 1;  // -1 (no layer) is a key of its own
  const std::int64_t mb = t.micro_batch + 1;
  return ((static_cast<std::int64_t>(t.iteration) * 65536 + layer) * 65536 + mb) * 2 +
         (backward ? 1 : 0);
}

MfabricControl::MfabricControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                               const std::string& planner, const std::string& policy,
                               const std::vector<std::int32_t>& spare_gpus)
    : graph_(graph), topology_(topology), group_region_(graph.groups().size(), -1) {
  planner_ = with_context("", "fabric.planner", [&] { return control::make_planner(planner); });
  if (policy == "block") {
    policy_ = Policy::Block;
  } else if (policy == "reuse-previous") {
    policy_ = Policy::ReusePrevious;
  } else if (policy == "predict") {
    policy_ = Policy::Predict;
  } else if (policy == "eps-during-switch") {
    policy_ = Policy::EpsDuringSwitch;
  } else if (policy == "oracle") {
    policy_ = Policy::Oracle;
  } else {
    throw Error(
        "", "fabric.policy",
        fmt::format("unknown policy '{}' (known: {})", policy, fmt::join(policy_names(), ", ")));
  }
  if (topology.regions().empty() || topology.ocs() == nullptr) {
    throw Error("", "fabric", "the mFabric control plane needs a fabric with OCS regions");
  }
  const std::set<std::int32_t> spares(spare_gpus.begin(), spare_gpus.end());
  for (TaskId id = 0; id < static_cast<TaskId>(graph.size()); ++id) {
    const Task& t = graph.task(id);
    if (!is_ep_all_to_all(t)) continue;
    const auto& members = graph.group(t.group);
    // The region of its first member not on a spare (a spare may lie outside it).
    std::int32_t first = members.front();
    for (std::int32_t g : members) {
      if (spares.count(g) == 0) {
        first = g;
        break;
      }
    }
    const int region = region_of_gpu(first);
    group_region_[static_cast<std::size_t>(t.group)] = region;
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
      dispatches_[{region, key_of(t, t.phase == workload::Phase::Backward)}].push_back(id);
    }
    if (t.op == workload::Op::Combine && t.phase != workload::Phase::Backward) {
      ++combines_left_[{region, key_of(t, false)}];
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
  stats_.planner = planner_->name();
  stats_.policy = policy;
  switching_ = topology.ocs()->switching;
  stats_.switching = fabric::to_string(switching_);
}

int MfabricControl::region_of_gpu(int gpu) const {
  const int server = gpu / topology_.cluster().gpus_per_server;
  return server / topology_.regions().front().servers;
}

void MfabricControl::attach(EngineContext& engine) {
  engine_ = &engine;
  const fabric::ClusterSpec& c = topology_.cluster();
  const control::ServerNics nics{c.nics_per_server, topology_.circuit_degree(), c.numa()};
  const Time delay = policy_ == Policy::Oracle ? Time::zero() : topology_.reconfiguration_delay();
  for (const fabric::Region& r : topology_.regions()) {
    const control::PlanLimits limits =
        control::region_limits(nics.alpha, nics.nics, c.link, r.servers);
    regions_.push_back(std::make_unique<control::RegionController>(r.id, nics, limits, *planner_,
                                                                   delay, *this, switching_));
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
  units_.assign(regions_.size(), 0.0);
  if (policy_ == Policy::Predict) {
    for (std::size_t region = 0; region < regions_.size(); ++region) {
      const auto& stage = stage_layers_[region];
      int ep = 1;
      for (const auto& [k, ids] : dispatches_) {
        if (k.first == static_cast<int>(region)) {
          ep = static_cast<int>(graph_.group(graph_.task(ids.front()).group).size());
          break;
        }
      }
      copilots_.push_back(stage.empty() ? nullptr
                                        : std::make_unique<control::CopilotPredictor>(
                                              ep, ep, static_cast<int>(stage.size())));
    }
  }
  if (policy_ == Policy::ReusePrevious || policy_ == Policy::Predict) {
    // A demand-free plan before training: every pair of the region's servers equally wanted,
    // so the first dispatch has circuits to reuse.
    installing_ = true;
    for (std::size_t region = 0; region < regions_.size(); ++region) {
      const int servers = topology_.regions()[region].servers;
      control::ServerDemand uniform(servers);
      for (int i = 0; i < servers; ++i) {
        for (int j = i + 1; j < servers; ++j)
          uniform.add(i, j, 1);
      }
      regions_[region]->install(-2, uniform);
    }
    installing_ = false;
  }
}

std::vector<std::string> MfabricControl::policy_names() {
  return {"block", "reuse-previous", "eps-during-switch", "predict", "oracle"};
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
  const auto& members = graph_.group(t.group);
  if (t.matrix >= 0) {
    add_matrix_demand(graph_.matrix(t.matrix), id, region, d);
    return;
  }
  // Without a matrix every member sends bytes / n to each member (task_graph.h).
  const int n = static_cast<int>(members.size());
  workload::ByteMatrix uniform(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      uniform.at(i, j) = t.bytes.count() / n;
  }
  add_matrix_demand(uniform, id, region, d);
}

void MfabricControl::add_matrix_demand(const workload::ByteMatrix& m, TaskId like, int region,
                                       control::ServerDemand& d) const {
  const auto& members = graph_.group(graph_.task(like).group);
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

std::vector<std::int32_t> MfabricControl::counts_of(int region, std::int64_t key,
                                                    double& unit) const {
  const auto it = dispatches_.find({region, key});
  if (it == dispatches_.end()) return {};
  const Task& t = graph_.task(it->second.front());
  if (t.matrix < 0) return {};
  const workload::ByteMatrix& m = graph_.matrix(t.matrix);
  if (unit <= 0) {
    // Whole-number counts with room to spare: the largest row at most 2^26.
    std::int64_t largest = 1;
    for (int i = 0; i < m.n; ++i) {
      std::int64_t row = 0;
      for (int j = 0; j < m.n; ++j)
        row += m.at(i, j);
      largest = std::max(largest, row);
    }
    unit = std::max(1.0, static_cast<double>(largest) / static_cast<double>(1 << 26));
  }
  std::vector<std::int32_t> counts(static_cast<std::size_t>(m.n) * static_cast<std::size_t>(m.n));
  for (int i = 0; i < m.n; ++i) {
    for (int j = 0; j < m.n; ++j) {
      const double c = std::round(static_cast<double>(m.at(i, j)) / unit);
      counts[static_cast<std::size_t>(i * m.n + j)] =
          static_cast<std::int32_t>(std::min(c, 2147483647.0));
    }
  }
  return counts;
}

std::int64_t MfabricControl::neighbour_key(int region, const Task& t, int step) const {
  const auto& stage = stage_layers_[static_cast<std::size_t>(region)];
  const auto at = std::find(stage.begin(), stage.end(), static_cast<int>(t.layer));
  if (at == stage.end()) return -1;
  const auto index = (at - stage.begin()) + step;
  if (index < 0 || index >= static_cast<std::ptrdiff_t>(stage.size())) return -1;
  Task other = t;
  other.layer = static_cast<std::int16_t>(stage[static_cast<std::size_t>(index)]);
  const std::int64_t key = key_of(other, false);
  return dispatches_.count({region, key}) > 0 ? key : -1;
}

void MfabricControl::learn(int region, const Task& dispatch) {
  const std::int64_t key = key_of(dispatch, false);
  const auto forecast = forecasts_.find({region, key});
  if (forecast != forecasts_.end()) {
    const control::ServerDemand real = demand_of(region, key);
    stats_.prediction_error += control::demand_relative_error(real, forecast->second);
    ++stats_.predictions;
    forecasts_.erase(forecast);
  }
  const std::int64_t previous = neighbour_key(region, dispatch, -1);
  control::CopilotPredictor* copilot = copilots_[static_cast<std::size_t>(region)].get();
  if (previous < 0 || copilot == nullptr) return;
  double& unit = units_[static_cast<std::size_t>(region)];
  const auto before = counts_of(region, previous, unit);
  const auto now = counts_of(region, key, unit);
  if (before.empty() || now.empty()) return;
  const auto& stage = stage_layers_[static_cast<std::size_t>(region)];
  const auto index =
      std::find(stage.begin(), stage.end(), static_cast<int>(dispatch.layer)) - stage.begin();
  copilot->observe(static_cast<int>(index), before, now);
}

void MfabricControl::forecast_next(int region, const Task& combine) {
  control::CopilotPredictor* copilot = copilots_[static_cast<std::size_t>(region)].get();
  const std::int64_t next = neighbour_key(region, combine, +1);
  if (next < 0 || copilot == nullptr) return;
  double& unit = units_[static_cast<std::size_t>(region)];
  const auto now = counts_of(region, key_of(combine, false), unit);
  if (now.empty()) return;
  const auto& stage = stage_layers_[static_cast<std::size_t>(region)];
  const auto index =
      std::find(stage.begin(), stage.end(), static_cast<int>(combine.layer)) - stage.begin() + 1;
  const std::vector<double> tokens = copilot->predict(static_cast<int>(index), now);
  const int n = copilot->ep();
  const workload::ByteMatrix bytes = control::rank_bytes_from_tokens(tokens, n, n, unit);
  const fabric::Region& r = topology_.regions()[static_cast<std::size_t>(region)];
  control::ServerDemand d(r.servers);
  for (TaskId id : dispatches_.at({region, next}))
    add_matrix_demand(bytes, id, region, d);
  forecasts_[{region, next}] = d;
  control::RegionController& rc = *regions_[static_cast<std::size_t>(region)];
  rc.request(
      predicted(next), [d] { return d; }, [] {});
}

bool MfabricControl::hold_collective(TaskId id, collective::CollectiveRequest& request) {
  const Task& t = graph_.task(id);
  if (!is_ep_all_to_all(t)) return false;
  const int region = home_region(t);
  control::RegionController& rc = *regions_[static_cast<std::size_t>(region)];
  const bool backward = t.phase == workload::Phase::Backward;
  const std::int64_t key = key_of(t, backward);
  const bool forward_dispatch = !backward && t.op == workload::Op::Dispatch;
  // reuse-previous: the forward dispatch goes on the circuits up now; its plan comes after it.
  if ((policy_ == Policy::ReusePrevious || policy_ == Policy::Predict) && forward_dispatch) {
    return false;
  }
  const bool in_force = !rc.reconfiguring() && rc.current_key() == key;
  const auto demand = [this, region, key, id] {
    control::ServerDemand d = demand_of(region, key);
    // An all-to-all of no known dispatch (an imported trace's) plans from its own matrix.
    if (dispatches_.find({region, key}) == dispatches_.end()) add_demand(id, region, d);
    return d;
  };
  if (policy_ == Policy::EpsDuringSwitch && forward_dispatch) {
    // Starts at once, GPU pair by GPU pair, over what is up (the EPS where circuits switch);
    // set_up() moves its remaining bytes onto the new circuits when they come up.
    request.algorithm = "direct";
    if (!in_force) rc.request(key, demand, [] {});
    return false;
  }
  if (in_force) return false;
  // The request may be served at once (a plan that switches nothing): then the collective goes
  // now instead of being held.
  held_since_[id] = engine_->now();
  asking_ = id;
  served_at_once_ = false;
  rc.request(key, demand, [this, id] {
    const auto it = held_since_.find(id);
    if (asking_ == id) {
      served_at_once_ = true;
      held_since_.erase(it);
      return;
    }
    stats_.held_time += engine_->now() - it->second;
    held_since_.erase(it);
    engine_->release(id);
  });
  asking_ = -1;
  if (served_at_once_) return false;
  ++stats_.held;
  return true;
}

void MfabricControl::collective_finished(TaskId id) {
  const Task& t = graph_.task(id);
  if (!is_ep_all_to_all(t)) return;
  const bool backward = t.phase == workload::Phase::Backward;
  if (policy_ == Policy::Predict && !backward && t.op == workload::Op::Combine) {
    const int region = home_region(t);
    const auto left = combines_left_.find({region, key_of(t, false)});
    if (left != combines_left_.end() && --left->second == 0) forecast_next(region, t);
    return;
  }
  if (t.op != workload::Op::Dispatch) return;
  if (!backward && policy_ != Policy::ReusePrevious && policy_ != Policy::Predict) return;
  const int region = home_region(t);
  const auto left = unfinished_.find({region, key_of(t, backward)});
  if (left == unfinished_.end() || --left->second > 0) return;
  control::RegionController& rc = *regions_[static_cast<std::size_t>(region)];
  if (!backward) {
    if (policy_ == Policy::Predict) learn(region, t);
    // reuse-previous, predict: recalibrate from the layer's real demand, under its expert
    // compute.
    const std::int64_t key = key_of(t, false);
    if (rc.current_key() != key) {
      rc.request(
          key, [this, region, key] { return demand_of(region, key); }, [] {});
    }
    return;
  }
  // The region is done with this layer's circuits: the layer before it comes next in backward.
  Task previous = t;
  previous.layer = static_cast<std::int16_t>(t.layer - 1);
  const std::int64_t key = key_of(previous, true);
  if (dispatches_.find({region, key}) == dispatches_.end()) return;  // not in this stage
  if (rc.current_key() == key) return;
  rc.request(
      key, [this, region, key] { return demand_of(region, key); }, [] {});
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
  const std::vector<fabric::NodeId>& region_nics = ocs_nics_[static_cast<std::size_t>(region)];
  ocs.resume_paused(region_nics);
  // eps-during-switch: the dispatch's bytes that went over the EPS meanwhile take the circuits.
  if (policy_ == Policy::EpsDuringSwitch) ocs.reroute(region_nics);
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

}  // namespace mfabric::sim
