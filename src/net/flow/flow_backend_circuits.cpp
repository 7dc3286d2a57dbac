// FlowBackend's circuits (net/circuits.h): connecting and tearing down a circuit (its flows
// paused), resuming paused flows and moving flows onto cheaper routes once circuits are up.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "net/flow/flow_backend.h"
#include "net/flow/flow_state.h"

namespace mfabric::net {

using fabric::LinkId;
using flow::Cold;
using flow::FlowState;

LinkId FlowBackend::connect(fabric::NodeId nic_a, fabric::NodeId nic_b) {
  State& s = *s_;
  s.sync();
  const LinkId id = s.links.connect(nic_a, nic_b);
  const double rate = s.links.link(id).rate.bps();
  for (ChannelId c : {2 * id, 2 * id + 1}) {
    s.settle(c);
    s.chan(c).cap = rate;
  }
  s.router.set_link_up(id, rate > 0);
  s.mark_down(id, !(rate > 0));
  return id;
}

void FlowBackend::disconnect(LinkId circuit) {
  State& s = *s_;
  if (!s.links.connected(circuit)) {
    throw Error("", "circuit", fmt::format("link {} is not a connected circuit", circuit));
  }
  s.flush();  // rates as of now, so that paused flows keep exactly the bytes they have left
  s.pause_off(circuit);
  for (ChannelId c : {2 * circuit, 2 * circuit + 1}) {
    s.settle(c);
    s.chan(c).cap = 0;
  }
  s.router.set_link_up(circuit, false);
  s.mark_down(circuit, false);  // a free slot: no route crosses it
  s.links.disconnect(circuit);
  s.force(0);
}

void FlowBackend::resume_paused() {
  resume_paused_on(std::vector<bool>(static_cast<std::size_t>(s_->topo.cluster().servers), true));
}

void FlowBackend::resume_paused(std::span<const fabric::NodeId> nics) {
  resume_paused_on(servers_of_nics(s_->topo, nics));
}

void FlowBackend::resume_paused_on(const std::vector<bool>& servers) {
  State& s = *s_;
  std::vector<std::int32_t> slots;
  std::vector<std::int32_t> still;
  // A transfer relayed to or from a server cut off from the EPS crosses a circuit of the other
  // end's region: either end on the servers resumes it.
  const auto inside = [&](fabric::NodeId gpu) {
    return servers[static_cast<std::size_t>(s.topo.node(gpu).server)];
  };
  for (std::int32_t slot : s.paused) {
    const Cold& c = s.cold_of(slot);
    (inside(c.src) || inside(c.dst) ? slots : still).push_back(slot);
  }
  s.paused.swap(still);
  for (std::int32_t slot : slots) {
    Cold& c = s.cold_of(slot);
    s.router.route(c.src, c.dst, c.hash, s.route);
    c.cost = s.route.cost;
    c.latency_ps = s.route.latency.ps() * c.latency_hops;
    c.last = s.now;
    s.hot_of(slot).state = FlowState::Active;
    s.attach(slot, s.route);
  }
}

void FlowBackend::reroute(std::span<const fabric::NodeId> nics) {
  State& s = *s_;
  const std::vector<bool> servers = servers_of_nics(s.topo, nics);
  s.flush();  // rates up to date before the bytes sent so far are counted
  const auto on_servers = [&](fabric::NodeId gpu) {
    return servers[static_cast<std::size_t>(s.topo.node(gpu).server)];
  };
  for (std::size_t i = 0; i < s.table.slots(); ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    if (s.table.hot(slot).state != FlowState::Active) continue;
    if (s.table.hot(slot).weighted) {
      // A coflow with a member from these servers moves whole: each member's route as it is now.
      const auto& members = s.coflow_of(slot).members;
      if (std::any_of(members.begin(), members.end(),
                      [&](const auto& m) { return on_servers(m.transfer.src); })) {
        s.reroute_coflow(slot);
      }
      continue;
    }
    Cold& c = s.cold_of(slot);
    if (!on_servers(c.src)) continue;
    if (!s.router.find(c.src, c.dst, c.hash, s.route, false) || !(s.route.cost < c.cost)) continue;
    s.move_to(slot, s.route);
  }
}

std::size_t FlowBackend::paused_transfers() const {
  return s_->paused.size();
}

fabric::NodeId FlowBackend::circuit_peer(fabric::NodeId nic) const {
  const fabric::LinkId c = links().circuit_at(nic);
  return c < 0 ? fabric::kNoNode : links().other_end(c, nic);
}

}  // namespace mfabric::net
