// Network backends behind one interface, so that a packet-level backend can be added without
// touching the engine. A backend owns simulated time for the network: the engine starts
// transfers, changes links, and advances time; the backend calls back when a transfer is done.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"
#include "net/circuits.h"
#include "net/link_timeline.h"
#include "net/transfer.h"

namespace mfabric::net {

using TransferId = std::int64_t;

// Per directed channel (each fabric Link has two: 2 x link id for a->b, 2 x link id + 1 for
// b->a): bytes carried and time with at least one active transfer.
struct ChannelStats {
  double bytes = 0;
  Time busy;
};

// An active transfer that has no next event and will never finish unless something changes:
// for the engine's message when a run cannot complete.
struct StalledTransfer {
  enum class Why : std::uint8_t {
    LinkDown,       // rate 0: a link of its route is down and no other route is up
    PastTimeRange,  // at its rate, its last byte would leave after the largest representable time
    Paused,         // its circuit was torn down and Circuits::resume_paused() was not called since
  };
  TransferId id = -1;
  fabric::NodeId src = fabric::kNoNode;
  fabric::NodeId dst = fabric::kNoNode;
  Bytes remaining;
  Rate rate;
  fabric::LinkId down_link = -1;  // for LinkDown: the first down link on its route
  Why why = Why::LinkDown;
};

// Transfers and bytes over a whole run: every byte started is delivered by the end of a run
// that completes, reconfigurations or not (reports check it).
struct TransferTotals {
  std::int64_t started = 0;
  std::int64_t delivered = 0;
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_delivered = 0;
};

// Per directed channel, what a packet-level backend adds to ChannelStats.
struct PortStats {
  std::int64_t packets = 0;    // data packets sent
  std::int64_t drops = 0;      // packets dropped (full buffer or link down)
  std::int64_t marks = 0;      // packets marked CE
  std::int64_t max_queue = 0;  // bytes, the most the port held at once
  double queue_byte_ps = 0;    // integral of the bytes held over time (mean = / run time)
  std::int64_t pause_ps = 0;   // PFC: time this port was paused by the switch downstream
  std::int64_t pauses = 0;     // PFC pause frames it received
};

// Counters of a run, for outputs and benchmarks.
struct PacketStats {
  std::int64_t packets_sent = 0;  // data packets put on a first port
  std::int64_t packets_delivered = 0;
  std::int64_t acks = 0;
  std::int64_t drops = 0;
  std::int64_t marks = 0;
  std::int64_t retransmissions = 0;
  std::int64_t timeouts = 0;
  std::int64_t max_packets_in_flight = 0;
  std::int64_t pfc_pauses = 0;  // pause frames sent
  // Of `drops`: packets beyond a lossless input's xoff + headroom (a pause too late for its link)
  std::int64_t pfc_headroom_drops = 0;
};

// What a packet-level backend reports beyond ChannelStats: per directed channel (as
// channel_stats()) and over the run.
struct PacketReport {
  std::vector<PortStats> ports;
  PacketStats totals;
};

class LinkTable;

// The argument checks every backend makes, one mfabric::Error each: a transfer's size and
// latency_hops not negative; a link of the table (a circuit slot only while connected) and a
// finite rate not negative.
void check_transfer(const net::Transfer& t);
void check_link_rate(const LinkTable& links, fabric::LinkId link, Rate rate);

class Backend {
 public:
  using DoneCallback = std::function<void(TransferId, Time)>;

  virtual ~Backend() = default;

  // Starts a transfer at the current time; `on_done` is called (from advance()) when its last
  // byte has arrived. Zero-byte transfers complete after the path latency.
  virtual TransferId start(const net::Transfer& t, DoneCallback on_done) = 0;
  // Changes a link's capacity (both directions); a zero rate takes it down. Transfers over a
  // down link stall until it comes back or are re-routed, as the backend documents.
  virtual void set_link_rate(fabric::LinkId link, Rate rate) = 0;
  // Routes every active transfer whose route crosses a down link again, over the links up now,
  // by the backend's normal routing at any cost (another NIC, proxy GPUs, relay servers), and
  // lets it continue from the bytes it has left with the new route's latency; a transfer with
  // no route over up links stays stalled where it is. Bytes are never lost. The simulator calls
  // it after it fails a link and after circuits come up. Default: nothing (a backend whose
  // transfers never stall on a down link).
  virtual void reroute_down() {}

  virtual Time now() const = 0;
  // The time of the next network event, if any transfer is active.
  virtual std::optional<Time> next_event_time() const = 0;
  // Advances to `t` (<= next_event_time() or any time if idle), processing every network event
  // up to and including t and firing completion callbacks.
  virtual void advance(Time t) = 0;

  virtual std::size_t active_transfers() const = 0;
  virtual std::int64_t events_processed() const = 0;
  virtual const std::vector<ChannelStats>& channel_stats() const = 0;
  // Up to `limit` active transfers without a next event (see StalledTransfer), in a
  // deterministic order.
  virtual std::vector<StalledTransfer> stalled_transfers(std::size_t limit) const = 0;
  virtual TransferTotals totals() const = 0;
  // Packet-level backends: ports and packet counters up to now; nullopt for fluid ones.
  virtual std::optional<PacketReport> packet_report() const { return std::nullopt; }
  // Starts counting every channel's bytes per time bin (net/link_timeline.h) from now on.
  // mfabric::Error for a backend that cannot (the default).
  virtual void record_timeline(const TimelineOptions& options);
  // The bins counted up to now(), handed over closed (counting stops); nullopt when not
  // counting.
  virtual std::optional<LinkTimeline> take_timeline() { return std::nullopt; }

  // The backend's optical circuits (net/circuits.h), or null if it does not model them.
  virtual Circuits* circuits() { return nullptr; }
  const Circuits* circuits() const { return const_cast<Backend*>(this)->circuits(); }
};

// backend.circuits(), or mfabric::Error ("simulation.backend") if it has none.
Circuits& require_circuits(Backend& backend);

}  // namespace mfabric::net
