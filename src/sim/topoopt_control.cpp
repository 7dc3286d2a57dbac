#include "sim/topoopt_control.h"

#include <fmt/format.h>

#include <chrono>
#include <numeric>

#include "control/job_demand.h"
#include "core/error.h"
#include "net/circuits.h"
#include "sim/fabric_controllers.h"

namespace mfabric::sim {

namespace {

// Components of the planned links (union-find with path halving).
class Components {
 public:
  explicit Components(int n) : parent_(static_cast<std::size_t>(n)) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int find(int v) {
    while (parent_[static_cast<std::size_t>(v)] != v) {
      auto& p = parent_[static_cast<std::size_t>(v)];
      p = parent_[static_cast<std::size_t>(p)];
      v = p;
    }
    return v;
  }
  void join(int a, int b) { parent_[static_cast<std::size_t>(find(a))] = find(b); }

 private:
  std::vector<int> parent_;
};

}  // namespace

TopoOptControl::TopoOptControl(const workload::TaskGraph& graph, const fabric::Topology& topology,
                               const control::TopoOptOptions& options)
    : topology_(topology) {
  const fabric::ClusterSpec& c = topology.cluster();
  const int degree = topology.circuit_degree();
  if (degree < 1 || topology.count(fabric::NodeKind::PatchPanel) == 0) {
    throw Error("", "fabric",
                fmt::format("TopoOpt needs a fabric whose NICs are on a patch panel; '{}' has none",
                            topology.spec()));
  }
  const auto start = std::chrono::steady_clock::now();
  const control::JobDemand demand = control::job_demand(graph, c.gpus_per_server);
  plan_ = control::plan_topoopt(demand, c.servers, degree, options);
  stats_.planning_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!plan_.connected) check_reachable(demand);

  stats_.servers = plan_.servers;
  stats_.degree = plan_.degree;
  stats_.ring_degree = plan_.ring_degree;
  stats_.links = static_cast<std::int64_t>(plan_.links.size());
  for (const control::PanelLink& l : plan_.links) {
    switch (l.purpose) {
      case control::LinkPurpose::Ring:
        ++stats_.ring_links;
        break;
      case control::LinkPurpose::Matching:
        ++stats_.matching_links;
        break;
      case control::LinkPurpose::Connectivity:
        ++stats_.connectivity_links;
        break;
      case control::LinkPurpose::Leftover:
        ++stats_.leftover_links;
        break;
    }
  }
  stats_.ring_groups = static_cast<int>(plan_.rings.size());
  for (const control::RingPlan& r : plan_.rings) {
    stats_.rings += static_cast<int>(r.strides.size());
  }
  stats_.matching_rounds = plan_.matching_rounds;
  stats_.connected = plan_.connected;
  stats_.unused_nics = plan_.unused_nics;
}

void TopoOptControl::check_reachable(const control::JobDemand& demand) const {
  Components parts(plan_.servers);
  for (const control::PanelLink& l : plan_.links) {
    parts.join(l.server_a, l.server_b);
  }
  const auto fail = [&](int a, int b, const std::string& traffic) {
    throw Error(
        "", "fabric",
        fmt::format("the TopoOpt topology planned for this job is not connected: servers {} and "
                    "{} exchange {} traffic but no path of patch-panel links joins them (degree "
                    "{}, {} links for {} servers; a degree of 1 joins servers in pairs only)",
                    a, b, traffic, plan_.degree, plan_.links.size(), plan_.servers));
  };
  for (const control::RingDemand& r : demand.rings) {
    for (std::size_t i = 1; i < r.servers.size(); ++i) {
      if (parts.find(r.servers[i]) != parts.find(r.servers[0])) {
        fail(r.servers[0], r.servers[i], "all-reduce-like");
      }
    }
  }
  for (int a = 0; a < demand.pairs.servers(); ++a) {
    for (int b : demand.pairs.partners(a)) {
      if (parts.find(a) != parts.find(b)) fail(a, b, "all-to-all or point-to-point");
    }
  }
}

void TopoOptControl::attach(EngineContext& engine) {
  circuits_.clear();
  if (plan_.links.empty()) return;
  net::Circuits& panel = net::require_circuits(engine.backend());
  circuits_.reserve(plan_.links.size());
  for (const control::PanelLink& l : plan_.links) {
    circuits_.push_back(
        panel.connect(topology_.nic(l.server_a, l.nic_a), topology_.nic(l.server_b, l.nic_b)));
  }
}

void TopoOptControl::report(ControlReport& out) const {
  out.topoopt = stats_;
}

}  // namespace mfabric::sim
