// The output ports of a packet network (packet_network.h): one per directed channel of a
// topology link or a connected circuit, found by channel, and each channel's statistics
// (ChannelStats as every backend reports them, PortStats for the packet report). A torn-down
// circuit's ports retire: they still forward what they hold and what is on its way to them, and
// a later circuit reuses one only once it is empty and no route crosses it, so that the port
// indices in packets and events in flight stay valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabric/topology.h"
#include "net/backend_stats.h"
#include "net/link_table.h"
#include "net/link_timeline.h"
#include "net/packet/packet_options.h"
#include "net/packet/port.h"
#include "net/packet_report.h"
#include "net/router.h"

namespace mfabric::net::packet {

class RouteTable;

class PortTable {
 public:
  // The tables must outlive this one.
  PortTable(const fabric::Topology& topology, const LinkTable& links,
            const PacketBackendOptions& options);

  // The tables cover `channels` channels (circuit slots included), and every topology link has
  // its two ports.
  void cover(std::size_t channels, const RouteTable& routes, std::int64_t now);
  // A port for channel c, set up for its link at `now`: a retired port free again, else a new one.
  std::int32_t add(ChannelId c, const RouteTable& routes, std::int64_t now);
  // Channel c's port retires (its circuit is torn down); the channel has no port until add().
  void retire(ChannelId c);

  // Channel c's port; -1: none (a free circuit slot).
  std::int32_t port_of(ChannelId c) const { return channel_port_[static_cast<std::size_t>(c)]; }
  Port& operator[](std::int32_t p) { return ports_[static_cast<std::size_t>(p)]; }
  const Port& operator[](std::int32_t p) const { return ports_[static_cast<std::size_t>(p)]; }
  // Every port, retired ones included.
  std::vector<Port>::iterator begin() { return ports_.begin(); }
  std::vector<Port>::iterator end() { return ports_.end(); }

  // The statistics of the port's channel.
  ChannelStats& channel_stats(const Port& p) {
    return channels_[static_cast<std::size_t>(p.channel)];
  }
  PortStats& stats_of(const Port& p) { return port_stats_[static_cast<std::size_t>(p.channel)]; }
  // The port put a packet of `wire` bytes on its link from t0 to t1: its channel's bytes, and
  // the timeline's when one counts (count_into).
  void sent(const Port& p, std::int64_t wire, std::int64_t t0, std::int64_t t1) {
    channels_[static_cast<std::size_t>(p.channel)].bytes += static_cast<double>(wire);
    if (timeline_ != nullptr) timeline_->add_bytes(p.channel, t0, t1, static_cast<double>(wire));
  }
  // Packets sent from now on also go to `timeline` (null: none), which must outlive its use.
  void count_into(LinkTimeline* timeline) { timeline_ = timeline; }
  // Port::account and Port::drain into the port's channel statistics.
  void account(Port& p, std::int64_t now) { p.account(stats_of(p), now); }
  void drain(Port& p, std::int64_t now) { p.drain(stats_of(p), now); }
  // By channel.
  const std::vector<ChannelStats>& channel_stats() const { return channels_; }
  const std::vector<PortStats>& port_stats() const { return port_stats_; }

 private:
  // Sets the port up for channel c's link, empty, at `now`.
  void configure(Port& p, ChannelId c, std::int64_t now);

  const fabric::Topology& topo_;
  const LinkTable& links_;
  std::int64_t buffer_;  // a switch port's, without PFC
  std::int64_t ecn_threshold_;
  bool lossless_;  // PFC: switch ports pause their senders instead of dropping
  std::vector<Port> ports_;
  std::vector<std::int32_t> channel_port_;  // -1: no port (a free circuit slot)
  std::vector<std::int32_t> retired_;       // retired ports not reused yet
  std::vector<ChannelStats> channels_;
  std::vector<PortStats> port_stats_;
  LinkTimeline* timeline_ = nullptr;
};

}  // namespace mfabric::net::packet
