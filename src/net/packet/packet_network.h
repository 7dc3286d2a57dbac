// The packet-level network (docs/network.md, "Packet backend"): every transfer, inside a server
// too, is cut into packets. The `packet` backend (net/packet_backend.h) uses it for the transfers
// that cross the network and a fluid FlowBackend for those inside a server. Transfers are flows of
// MTU-sized packets with header bytes, sent by a transport (transport.h: DCTCP, ...) and carried
// store-and-forward over the same routes as the flow backend's (router.h): every directed
// channel is an output port (port.h) with a FIFO queue that serialises packets at the link's
// rate and hands them to the next hop after the link's latency. Ports mark ECN above a threshold;
// switch ports drop what does not fit in their buffer; host ports (GPU, NVSwitch, NIC) never drop.
//
// A GPU's first port sends for all flows that start there, one packet at a time round robin
// among the flows their transport lets send (a NIC scheduling its flows fairly). Receivers
// answer every data packet; the answer returns on the reverse path after that path's latency and
// serialisation, without queueing behind data (acknowledgements travel at strict priority and
// are not counted in the ports' bytes). A transfer completes when its last data byte has arrived
// (plus (latency_hops - 1) x the route's latency, as in the flow backend); zero-byte transfers
// after the route's latency, a transfer from a GPU to itself at once.
//
// Link failures (rate 0): the link's ports lose the packets they hold (counted as drops); flows
// crossing it move to a route of equal cost over links still up if there is one, and otherwise
// hold until the link comes back or reroute_down() finds them a route of any cost. Their
// transports see the lost packets as losses.
//
// Circuits: disconnect() holds every flow crossing the circuit (it sends nothing new) and retires
// the circuit's ports: they still forward what they hold and what is on its way to them (the
// circuit drains; nothing is lost), then are reused. resume_paused() routes the held flows again.
//
// Not re-entrant: completion callbacks may call start(), set_link_rate() and the queries, but not
// advance().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "net/backend.h"
#include "net/backend_stats.h"
#include "net/circuits.h"
#include "net/link_table.h"
#include "net/link_timeline.h"
#include "net/packet/packet_options.h"
#include "net/packet_report.h"
#include "net/router.h"

namespace mfabric::net {

class PacketNetwork final : public Backend,
                            public Circuits,
                            public BackendStats,
                            public TimelineRecorder,
                            public PacketReporting {
 public:
  // The topology must outlive the backend. mfabric::Error for options out of range.
  explicit PacketNetwork(const fabric::Topology& topology,
                         const PacketBackendOptions& options = {});
  ~PacketNetwork() override;
  PacketNetwork(const PacketNetwork&) = delete;
  PacketNetwork& operator=(const PacketNetwork&) = delete;

  TransferId start(const net::Transfer& t, DoneCallback on_done) override;
  // start() in two steps, for a caller that looks at the route first (net/packet_backend.h): the
  // route start() would take now, and the start over it (t checked by check_transfer()).
  void route(const net::Transfer& t, Route& out);
  TransferId start_routed(const net::Transfer& t, const Route& route, DoneCallback on_done);
  // Sets the clock to t without processing anything, for a composition that runs another part's
  // events at t before these (net/packet_backend.h). t is not before now() and not after
  // next_event_time().
  void move_clock(Time t);
  void set_link_rate(fabric::LinkId link, Rate rate) override;
  void reroute_down() override;
  Time now() const override;
  std::optional<Time> next_event_time() const override;
  void advance(Time t) override;
  std::size_t active_transfers() const override;
  std::int64_t events_processed() const override;
  const std::vector<ChannelStats>& channel_stats() const override;
  std::vector<StalledTransfer> stalled_transfers(std::size_t limit) const override;
  TransferTotals totals() const override;
  // A packet's bytes are counted over its time on the wire at each port it leaves (without PFC,
  // when it is put on the port's schedule, which may end after now()).
  void record_timeline(const TimelineOptions& options) override;
  std::optional<LinkTimeline> take_timeline() override;

  PacketReport packet_report() const override;
  Capabilities capabilities() override {
    return {.circuits = this, .stats = this, .timeline = this, .packets = this};
  }

  // Circuits
  fabric::LinkId connect(fabric::NodeId nic_a, fabric::NodeId nic_b) override;
  void disconnect(fabric::LinkId circuit) override;
  fabric::NodeId circuit_peer(fabric::NodeId nic) const override;
  void resume_paused() override;
  void resume_paused(std::span<const fabric::NodeId> nics) override;
  void reroute(std::span<const fabric::NodeId> nics) override;
  std::size_t paused_transfers() const override;

  const PacketBackendOptions& options() const;
  // Per directed channel (as channel_stats()), queues up to now.
  const std::vector<PortStats>& port_stats() const;
  PacketStats packet_stats() const;

 private:
  struct State;
  // Resumes the paused transfers with either end on a server flagged in `servers`.
  void resume_paused_on(const std::vector<bool>& servers);
  std::unique_ptr<State> s_;
};

}  // namespace mfabric::net
