// Network backends behind one interface, so that a packet-level backend can be added without
// touching the engine. A backend owns simulated time for the network: the engine starts
// transfers, changes links, and advances time; the backend calls back when a transfer is done.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "collective/transfer.h"
#include "core/units.h"
#include "fabric/topology.h"

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
  };
  TransferId id = -1;
  fabric::NodeId src = fabric::kNoNode;
  fabric::NodeId dst = fabric::kNoNode;
  Bytes remaining;
  Rate rate;
  fabric::LinkId down_link = -1;  // for LinkDown: the first down link on its route
  Why why = Why::LinkDown;
};

class Backend {
 public:
  using DoneCallback = std::function<void(TransferId, Time)>;

  virtual ~Backend() = default;

  // Starts a transfer at the current time; `on_done` is called (from advance()) when its last
  // byte has arrived. Zero-byte transfers complete after the path latency.
  virtual TransferId start(const collective::Transfer& t, DoneCallback on_done) = 0;
  // Changes a link's capacity (both directions); a zero rate takes it down. Transfers over a
  // down link stall until it comes back or are re-routed, as the backend documents.
  virtual void set_link_rate(fabric::LinkId link, Rate rate) = 0;

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
};

}  // namespace mfabric::net
