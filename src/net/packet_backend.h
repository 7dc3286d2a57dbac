// The `packet` backend (docs/network.md, "Packet backend"): transfers that cross the network run
// as packets on a PacketNetwork (packet/packet_network.h), transfers inside one server (GPU -
// NVSwitch - GPU, no network link, no proxy) as fluid flows on a FlowBackend (flow/): NVLink is
// lossless and credit-based, and cutting terabytes of tensor-parallel traffic into MTU packets
// would cost billions of events and show nothing a transport does. A composition of the two parts,
// not a third model: each part keeps its own clock, links and statistics, and this backend merges
// them. It sits at the top of net/, which may include both of its folders: net/packet and net/flow
// never include each other (cmake/check_layers.cmake).
//
// One id sequence for both parts, in start order. At each timestamp the fluid part's events run
// first, then the packets' (either may start transfers of the other at that time). The fluid
// part is created at the first transfer inside a server and brought to the current time; link
// rates reach it from then on. Circuits are the packet part's (transfers inside a server never
// cross one).
//
// Not re-entrant: completion callbacks may call start(), set_link_rate() and the queries, but not
// advance().
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "net/backend.h"
#include "net/flow/flow_backend.h"
#include "net/packet/packet_network.h"

namespace mfabric::net {

class PacketBackend final : public Backend,
                            public BackendStats,
                            public TimelineRecorder,
                            public PacketReporting {
 public:
  // The topology must outlive the backend. mfabric::Error for options out of range.
  explicit PacketBackend(const fabric::Topology& topology,
                         const PacketBackendOptions& options = {});

  TransferId start(const net::Transfer& t, DoneCallback on_done) override;
  void set_link_rate(fabric::LinkId link, Rate rate) override;
  void reroute_down() override;
  Time now() const override { return network_.now(); }
  std::optional<Time> next_event_time() const override;
  void advance(Time t) override;
  std::size_t active_transfers() const override;
  std::int64_t events_processed() const override;
  const std::vector<ChannelStats>& channel_stats() const override;
  std::vector<StalledTransfer> stalled_transfers(std::size_t limit) const override;
  TransferTotals totals() const override;
  PacketReport packet_report() const override { return network_.packet_report(); }
  // Both parts count; their bins are added together.
  void record_timeline(const TimelineOptions& options) override;
  std::optional<LinkTimeline> take_timeline() override;
  // Circuits are the packet part's (transfers inside a server never cross one).
  Capabilities capabilities() override {
    return {.circuits = &network_, .stats = this, .timeline = this, .packets = this};
  }

  const PacketBackendOptions& options() const { return network_.options(); }
  // The packet part's ports and counters (inside a server there are no packets).
  const std::vector<PortStats>& port_stats() const { return network_.port_stats(); }
  PacketStats packet_stats() const { return network_.packet_stats(); }

 private:
  static TransferId ours(const std::vector<TransferId>& ids, TransferId part_id) {
    return ids[static_cast<std::size_t>(part_id)];
  }

  const fabric::Topology& topology_;
  PacketNetwork network_;
  std::unique_ptr<FlowBackend> inside_;      // created at the first transfer inside a server
  std::optional<TimelineOptions> timeline_;  // record_timeline(): the fluid part counts too
  TransferId next_id_ = 0;
  std::vector<TransferId> network_ids_;  // ours, by the packet part's id
  std::vector<TransferId> inside_ids_;   // ours, by the fluid part's id
  Route route_;
  mutable std::vector<ChannelStats> merged_channels_;  // the packet part's + the fluid part's
};

}  // namespace mfabric::net
