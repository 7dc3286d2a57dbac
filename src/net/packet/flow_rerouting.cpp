#include "net/packet/flow_rerouting.h"

namespace mfabric::net::packet {

void FlowRerouter::set_route(Flow& fl, const Route& r) {
  const std::int32_t old = fl.route;
  fl.route = routes_.add(r, ports_);
  ++routes_[fl.route].refs;
  if (old >= 0) {
    // Its entry in the old first port's ready list is stale now (the scheduler skips it).
    if (routes_.first_port(old) != routes_.first_port(fl.route)) {
      fl.in_ready = false;
    }
    routes_.release(old);
  }
  sprayer_.spray(fl);
}

bool FlowRerouter::route_down(std::int32_t route) const {
  for (std::int32_t p : routes_.ports_of(routes_[route])) {
    const Port& q = ports_[p];
    if (q.down || q.retired) return true;
  }
  return false;
}

bool FlowRerouter::crosses_down(const Flow& fl) const {
  if (route_down(fl.route)) return true;
  for (std::int32_t r : fl.sprayed) {
    if (route_down(r)) return true;
  }
  return false;
}

std::vector<FlowSlot> FlowRerouter::flows_crossing_down() const {
  std::vector<FlowSlot> out;
  for (FlowSlot f = 0; f < flows_.slots(); ++f) {
    const Flow& fl = flows_[f];
    if (fl.live && fl.hold == Hold::None && fl.route >= 0 && crosses_down(fl)) {
      out.push_back(f);
    }
  }
  return out;
}

void FlowRerouter::unhold(FlowSlot f, std::int64_t now) {
  Flow& fl = flows_[f];
  fl.hold = Hold::None;
  if (fl.timer_deadline <= now && fl.timer_next == kNever) {
    fl.timer_next = now;
    ++fl.refs;
    events_.push(now, EventKind::Timer, static_cast<std::uint32_t>(f));
  }
  if (transport_.can_send(f)) scheduler_.wake(f, now);
}

void FlowRerouter::link_down() {
  for (FlowSlot f : flows_crossing_down()) {
    Flow& fl = flows_[f];
    const RouteCost cost = routes_[fl.route].cost;
    if (router_.find(fl.src, fl.dst, fl.hash, scratch_, false) && scratch_.cost == cost) {
      set_route(fl, scratch_);
      if (!crosses_down(fl)) continue;
    }
    fl.hold = Hold::Down;
  }
}

void FlowRerouter::link_up(std::int64_t now) {
  for (FlowSlot f = 0; f < flows_.slots(); ++f) {
    const Flow& fl = flows_[f];
    if (fl.live && fl.hold == Hold::Down && !crosses_down(fl)) unhold(f, now);
  }
}

void FlowRerouter::reroute_down(std::int64_t now) {
  for (FlowSlot f = 0; f < flows_.slots(); ++f) {
    Flow& fl = flows_[f];
    if (!fl.live || fl.hold != Hold::Down) continue;
    if (!router_.find(fl.src, fl.dst, fl.hash, scratch_, false)) continue;
    set_route(fl, scratch_);
    if (!crosses_down(fl)) unhold(f, now);
  }
}

void FlowRerouter::pause_crossing() {
  for (FlowSlot f : flows_crossing_down()) {
    flows_[f].hold = Hold::Paused;
    paused_.push_back(f);
  }
}

void FlowRerouter::resume(const std::vector<bool>& servers, std::int64_t now) {
  const auto inside = [&](fabric::NodeId gpu) {
    return servers[static_cast<std::size_t>(topo_.node(gpu).server)];
  };
  std::vector<FlowSlot> resume;
  std::vector<FlowSlot> still;
  for (FlowSlot f : paused_) {
    const Flow& fl = flows_[f];
    if (!fl.live || fl.hold != Hold::Paused) continue;
    (inside(fl.src) || inside(fl.dst) ? resume : still).push_back(f);
  }
  paused_.swap(still);
  for (FlowSlot f : resume) {
    Flow& fl = flows_[f];
    router_.route(fl.src, fl.dst, fl.hash, scratch_);
    set_route(fl, scratch_);
    if (crosses_down(fl)) {
      fl.hold = Hold::Down;
      continue;
    }
    unhold(f, now);
  }
}

void FlowRerouter::reroute(const std::vector<bool>& servers, std::int64_t now) {
  for (FlowSlot f = 0; f < flows_.slots(); ++f) {
    Flow& fl = flows_[f];
    if (!fl.live || fl.hold != Hold::None) continue;
    if (!servers[static_cast<std::size_t>(topo_.node(fl.src).server)]) continue;
    if (!router_.find(fl.src, fl.dst, fl.hash, scratch_, false)) continue;
    if (!(scratch_.cost < routes_[fl.route].cost)) continue;
    // The flow's packets in flight stay on the old route; new ones take the new one, from the
    // new first port.
    set_route(fl, scratch_);
    scheduler_.wake(f, now);
  }
}

std::size_t FlowRerouter::paused() const {
  std::size_t n = 0;
  for (FlowSlot f : paused_) {
    const Flow& fl = flows_[f];
    if (fl.live && fl.hold == Hold::Paused) ++n;
  }
  return n;
}

std::vector<StalledTransfer> FlowRerouter::stalled(std::size_t limit) const {
  std::vector<StalledTransfer> out;
  for (const Flow& fl : flows_) {
    if (out.size() >= limit) break;
    if (!fl.live || fl.hold == Hold::None) continue;
    StalledTransfer st;
    st.id = fl.id;
    st.src = fl.src;
    st.dst = fl.dst;
    st.remaining = Bytes(fl.size);
    st.why =
        fl.hold == Hold::Paused ? StalledTransfer::Why::Paused : StalledTransfer::Why::LinkDown;
    if (fl.hold == Hold::Down) {
      for (std::int32_t p : routes_.ports_of(routes_[fl.route])) {
        const Port& q = ports_[p];
        if (q.down) {
          st.down_link = link_of_channel(q.channel);
          break;
        }
      }
    }
    out.push_back(st);
  }
  return out;
}

}  // namespace mfabric::net::packet
