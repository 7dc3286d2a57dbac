#include "net/packet/port_table.h"

#include "net/packet/route_table.h"

namespace mfabric::net::packet {

PortTable::PortTable(const fabric::Topology& topology, const LinkTable& links,
                     const PacketBackendOptions& options)
    : topo_(topology),
      links_(links),
      buffer_(options.buffer.count()),
      ecn_threshold_(options.ecn_threshold.count()),
      lossless_(options.pfc_enabled()) {}

void PortTable::cover(std::size_t channels, const RouteTable& routes, std::int64_t now) {
  if (channel_port_.size() < channels) channel_port_.resize(channels, -1);
  if (channels_.size() < channels) {
    channels_.resize(channels);
    port_stats_.resize(channels);
  }
  for (std::size_t l = 0; l < topo_.links().size(); ++l) {
    for (ChannelId c : {static_cast<ChannelId>(2 * l), static_cast<ChannelId>(2 * l + 1)}) {
      if (channel_port_[static_cast<std::size_t>(c)] < 0) add(c, routes, now);
    }
  }
}

std::int32_t PortTable::add(ChannelId c, const RouteTable& routes, std::int64_t now) {
  std::int32_t index = -1;
  for (std::size_t i = 0; i < retired_.size(); ++i) {
    const std::int32_t r = retired_[i];
    Port& p = ports_[static_cast<std::size_t>(r)];
    drain(p, now);
    if (!p.busy && p.fifo.empty() && p.scheduled.empty() && p.inbound == 0 &&
        routes.routes_crossing(r) == 0) {
      index = r;
      retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (index < 0) {
    index = static_cast<std::int32_t>(ports_.size());
    ports_.emplace_back();
  }
  Port& p = ports_[static_cast<std::size_t>(index)];
  p.ready.clear();
  configure(p, c, now);
  channel_port_[static_cast<std::size_t>(c)] = index;
  return index;
}

void PortTable::retire(ChannelId c) {
  const std::int32_t p = channel_port_[static_cast<std::size_t>(c)];
  ports_[static_cast<std::size_t>(p)].retired = true;
  retired_.push_back(p);
  channel_port_[static_cast<std::size_t>(c)] = -1;
}

void PortTable::configure(Port& p, ChannelId c, std::int64_t now) {
  const fabric::Link& link = links_.link(link_of_channel(c));
  const fabric::NodeId from = (c % 2 == 0) ? link.a : link.b;
  p.channel = c;
  p.prop_ps = link.latency.ps();
  p.set_rate(link.rate.bps());
  const bool is_switch = topo_.node(from).kind == fabric::NodeKind::Switch;
  p.is_switch = is_switch;
  // Lossless (PFC) switch ports never drop: their senders pause instead.
  p.buffer = is_switch && !lossless_ ? buffer_ : 0;
  p.held_downstream = 0;
  p.pause_requested = false;
  p.paused = false;
  p.ecn_threshold = ecn_threshold_;
  p.retired = false;
  p.queued = 0;
  p.last_change = now;
  p.scheduled.clear();
  p.busy_until = now;
}

}  // namespace mfabric::net::packet
