#include "net/flow/flow_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/error.h"
#include "net/flow/flow_state.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::Topology;
using flow::Cold;
using flow::Delivery;
using flow::DeliveryLater;
using flow::FlowState;
using flow::Hot;

void check_completion_batching(double fraction, const std::string& file, const std::string& field) {
  if (!(fraction >= 0 && fraction <= kMaxCompletionBatching)) {
    throw Error(
        file, field,
        fmt::format("must be a fraction of a transfer's age between 0 (exact) and {}, got {}",
                    kMaxCompletionBatching, fraction));
  }
}

FlowBackend::FlowBackend(const Topology& topology, const FlowBackendOptions& options)
    : s_(std::make_unique<State>(topology, options)) {
  check_completion_batching(options.completion_batching);
}

FlowBackend::~FlowBackend() = default;

TransferId FlowBackend::start(const net::Transfer& t, DoneCallback on_done) {
  State& s = *s_;
  s.sync();
  check_transfer(t);
  const TransferId id = s.next_id;
  s.place(id, t, static_cast<double>(t.size.count()), std::move(on_done));
  ++s.next_id;
  s.count_start(t);
  return id;
}

void FlowBackend::set_link_rate(LinkId link, Rate rate) {
  State& s = *s_;
  s.sync();
  check_link_rate(s.links, link, rate);
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    s.settle(c);
    s.chan(c).cap = rate.bps();
    s.seeds.push_back(c);
  }
  // A mirrored PCIe channel must stay at least as fast as its cable.
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    const ChannelId t = s.mirrors.cable_of(c);
    if (t >= 0 && s.chan(c).cap < s.chan(t).cap) s.unmirror(link);
    const ChannelId m = s.mirrors.pcie_of(c);
    if (m >= 0 && s.chan(m).cap < s.chan(c).cap) s.unmirror(link_of_channel(m));
  }
  s.force(0);
  const bool was_up = s.router.link_up(link);
  const bool is_up = rate.bps() > 0;
  s.mark_down(link, !is_up);
  if (was_up == is_up) return;
  s.router.set_link_up(link, is_up);
  if (!is_up) s.reroute_off(link);
}

void FlowBackend::reroute_down() {
  State& s = *s_;
  s.sync();
  if (s.links_down == 0) return;
  // In slot order, for determinism; a transfer with no route over up links stays where it is.
  for (std::size_t i = 0; i < s.table.slots(); ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    if (s.table.hot(slot).state != FlowState::Active || !s.crosses_down_link(slot)) continue;
    if (s.table.hot(slot).weighted) {
      s.dissolve(slot);  // its members take routes over the links up now, where there are any
      continue;
    }
    const Cold& c = s.cold_of(slot);
    if (!s.router.find(c.src, c.dst, c.hash, s.route, false)) continue;
    s.move_to(slot, s.route);
  }
}

Time FlowBackend::now() const {
  return Time::picoseconds(s_->now);
}

std::optional<Time> FlowBackend::next_event_time() const {
  s_->flush();
  const auto t = s_->peek();
  if (!t) return std::nullopt;
  return Time::picoseconds(*t);
}

void FlowBackend::advance(Time t) {
  State& s = *s_;
  if (t.ps() < s.now) {
    throw std::logic_error(
        fmt::format("FlowBackend::advance: time {} ps is before now ({} ps)", t.ps(), s.now));
  }
  s.flush();
  for (;;) {
    const auto next = s.peek();
    if (!next || *next > t.ps()) break;
    s.now = *next;
    // Everything at this timestamp is one batch: flows whose bytes are done leave their
    // channels, completions fire (their callbacks may start transfers), then one recomputation.
    while (!s.drains.empty() && s.drains.top_time() == s.now) {
      const std::int32_t slot = s.drains.top();
      s.drains.erase(slot);
      s.finish_draining(slot);
    }
    while (!s.deliveries.empty() && s.deliveries.front().t == s.now) {
      std::pop_heap(s.deliveries.begin(), s.deliveries.end(), DeliveryLater{});
      const Delivery d = s.deliveries.back();
      s.deliveries.pop_back();
      s.fire(d);
    }
    s.flush();
  }
  s.now = t.ps();
}

const LinkTable& FlowBackend::links() const {
  return s_->links;
}

SolverStats FlowBackend::solver_stats() const {
  return s_->solver;
}

const Router& FlowBackend::router() const {
  return s_->router;
}

}  // namespace mfabric::net
