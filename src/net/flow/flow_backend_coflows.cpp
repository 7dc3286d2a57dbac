// FlowBackend's coflows (docs/shortcuts.md, "Coflows"; flow_state.h, Coflow): a collective step's
// transfers made into one weighted flow, moved whole onto new circuits, split back into their
// members when a circuit is torn down or a link goes down, and completed together.
#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <vector>

#include "net/flow/flow_backend.h"
#include "net/flow/flow_state.h"

namespace mfabric::net {

using flow::Cold;
using flow::FlowState;
using flow::Hot;

std::vector<TransferId> FlowBackend::start_coflow(std::span<const net::Transfer> transfers,
                                                  std::vector<DoneCallback> on_done) {
  State& s = *s_;
  s.sync();
  if (on_done.size() != transfers.size()) {
    throw std::logic_error(fmt::format("FlowBackend::start_coflow: {} transfers, {} callbacks",
                                       transfers.size(), on_done.size()));
  }
  for (const net::Transfer& t : transfers)
    check_transfer(t);
  return s.start_coflow(transfers, on_done);
}

// The transfers with bytes to move over the network become one weighted flow (its route takes
// the route space of as many slots as it needs: FlowTable::allocate_long); a lone one, and every
// transfer without bytes or channels, starts alone as in start().
std::vector<TransferId> FlowBackend::State::start_coflow(std::span<const net::Transfer> transfers,
                                                         std::vector<DoneCallback>& on_done) {
  // Every route first, so that a transfer without one fails before anything starts.
  if (coflow_routes.size() < transfers.size()) coflow_routes.resize(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const net::Transfer& t = transfers[i];
    router.route(t.src, t.dst, t.flow_hash, coflow_routes[i]);
  }
  std::vector<TransferId> ids;
  ids.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i)
    ids.push_back(next_id + static_cast<TransferId>(i));
  next_id += static_cast<TransferId>(transfers.size());
  std::vector<std::size_t>& members = coflow_members;
  members.clear();
  std::int64_t latency = 0;
  double total = 0;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const net::Transfer& t = transfers[i];
    count_start(t);
    const Route& r = coflow_routes[i];
    if (t.size.count() == 0 || r.channels.empty()) {
      place(ids[i], t, static_cast<double>(t.size.count()), std::move(on_done[i]));
      continue;
    }
    members.push_back(i);
    latency = std::max(latency, r.latency.ps() * t.latency_hops);
    total += static_cast<double>(t.size.count());
    add_member_bytes(t, r);
  }
  if (members.size() > 1) {
    add_coflow(members, transfers, ids, on_done, total, latency);
  } else if (members.size() == 1) {
    clear_channel_bytes();
    const std::size_t i = members.front();
    place(ids[i], transfers[i], static_cast<double>(transfers[i].size.count()),
          std::move(on_done[i]));
  }
  return ids;
}

// A member's bytes on each channel of its route `r` (mirrored PCIe channels left out: the cable
// stands for them), into channel_bytes; the channels first written, into touched.
void FlowBackend::State::add_member_bytes(const net::Transfer& t, const Route& r) {
  channel_bytes.resize(channels.size(), 0.0);
  const auto bytes = static_cast<double>(t.size.count());
  for (ChannelId c : r.channels) {
    if (mirrors.cable_of(c) >= 0) continue;
    double& b = channel_bytes[static_cast<std::size_t>(c)];
    if (b == 0) touched.push_back(c);
    b += bytes;
  }
}

// The coflow in `slot` takes the channels `touched` as its route, each with its members' bytes
// there over `unit` as its coefficient (both scratch arrays cleared), and waits for a rate.
void FlowBackend::State::append_coflow_route(std::int32_t slot, double unit) {
  for (ChannelId ch : touched) {
    double& b = channel_bytes[static_cast<std::size_t>(ch)];
    table.append(slot, ch, static_cast<float>(std::max(kMinCoefficient, b / unit)));
    seeds.push_back(ch);
    b = 0;
  }
  touched.clear();
  fresh.push_back(slot);
  force(kInf);
}

// A weighted flow for the transfers `members` (indices into `transfers`, `ids`, `on_done`),
// whose bytes per channel are in channel_bytes at the channels `touched`: `total` bytes, the
// slowest route's `latency`.
void FlowBackend::State::add_coflow(const std::vector<std::size_t>& members,
                                    std::span<const net::Transfer> transfers,
                                    const std::vector<TransferId>& ids,
                                    std::vector<DoneCallback>& on_done, double total,
                                    std::int64_t latency) {
  const auto n = static_cast<std::int64_t>(members.size());
  events -= n - 1;  // one start for the coflow
  const std::int32_t slot = table.allocate_long(static_cast<std::int32_t>(touched.size()));
  if (coflows.size() <= static_cast<std::size_t>(slot)) coflows.resize(table.slots());
  Coflow& coflow = coflow_of(slot);
  coflow.members.clear();
  for (std::size_t i : members)
    coflow.members.push_back({ids[i], transfers[i], std::move(on_done[i])});
  coflow.unit = total / static_cast<double>(n);
  ++active_coflows;
  const net::Transfer& first = coflow.members.front().transfer;
  Cold& c = cold_of(slot);
  c.id = coflow.members.front().id;
  c.size = static_cast<std::int64_t>(total);
  c.src = first.src;
  c.dst = first.dst;
  c.hash = first.flow_hash;
  c.cost = {};
  c.latency_hops = 1;
  c.latency_ps = latency;
  c.remaining = coflow.unit;
  c.last = now;
  c.started = now;
  c.last_v = 0;
  c.on_done = nullptr;
  Hot& f = hot_of(slot);
  f.rate = 0;
  f.len = 0;
  f.weighted = true;
  f.bneck = -1;
  f.fresh = true;
  f.state = FlowState::Active;
  append_coflow_route(slot, coflow.unit);
}

void FlowBackend::State::clear_channel_bytes() {
  for (ChannelId c : touched)
    channel_bytes[static_cast<std::size_t>(c)] = 0;
  touched.clear();
}

// A coflow becomes its members again, each with its share of the bytes left, on the route it
// would take now (a circuit torn down, a link down: what one route of the coflow cannot follow).
void FlowBackend::State::dissolve(std::int32_t slot) {
  catch_up(slot);
  std::vector<CoflowMember> members = std::move(coflow_of(slot).members);
  coflow_of(slot).members.clear();
  --active_coflows;
  const double left = cold_of(slot).remaining / coflow_of(slot).unit;
  detach(slot);
  drains.erase(slot);
  Hot& f = hot_of(slot);
  f.rate = 0;
  f.weighted = false;
  f.state = FlowState::Free;
  cold_of(slot).id = -1;
  table.release(slot);
  for (CoflowMember& m : members) {
    place(m.id, m.transfer, static_cast<double>(m.transfer.size.count()) * left,
          std::move(m.on_done));
  }
}

// A coflow's members take the routes they would take now (circuits that came up: reroute()), as
// one coflow still, with the bytes it has left; split into its members instead where the new
// routes need more channels than its slot holds.
void FlowBackend::State::reroute_coflow(std::int32_t slot) {
  Coflow& coflow = coflow_of(slot);
  std::int64_t latency = 0;
  for (const CoflowMember& m : coflow.members) {
    const net::Transfer& t = m.transfer;
    router.route(t.src, t.dst, t.flow_hash, route);
    latency = std::max(latency, route.latency.ps() * t.latency_hops);
    add_member_bytes(t, route);
  }
  if (static_cast<std::int32_t>(touched.size()) > table.capacity(slot)) {
    clear_channel_bytes();
    dissolve(slot);
    return;
  }
  catch_up(slot);
  detach(slot);
  drains.erase(slot);
  Hot& f = hot_of(slot);
  f.rate = 0;
  f.bneck = -1;
  f.fresh = true;
  cold_of(slot).latency_ps = latency;
  append_coflow_route(slot, coflow.unit);
  ++solver.rerouted;
}

// Dissolves the coflows crossing either channel of a link.
void FlowBackend::State::dissolve_on(LinkId link) {
  if (active_coflows == 0) return;
  scratch.clear();
  for (ChannelId c : {2 * link, 2 * link + 1}) {
    for (std::int32_t s : table.flows_on(c)) {
      if (hot_of(s).weighted) scratch.push_back(s);
    }
  }
  std::sort(scratch.begin(), scratch.end());
  scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  const std::vector<std::int32_t> slots = scratch;
  for (std::int32_t s : slots)
    dissolve(s);
}

// A coflow's last bytes have arrived: each member completes.
void FlowBackend::State::fire_coflow(std::int32_t slot) {
  // Callbacks may start transfers, and coflows: the members move out of the slot's entry first.
  std::vector<CoflowMember> done;
  done.swap(coflow_of(slot).members);
  --active_coflows;
  Hot& f = hot_of(slot);
  f.state = FlowState::Free;
  f.weighted = false;
  cold_of(slot).id = -1;
  table.release(slot);
  ++events;
  for (CoflowMember& m : done) {
    ++totals.delivered;
    totals.bytes_delivered += m.transfer.size.count();
    --active;
    if (m.on_done) m.on_done(m.id, Time::picoseconds(now));
  }
  // Its room goes back to the slot's entry for the next coflow there, if it is still empty.
  done.clear();
  if (coflow_of(slot).members.empty() && coflow_of(slot).members.capacity() < done.capacity()) {
    coflow_of(slot).members.swap(done);
  }
}

}  // namespace mfabric::net
