// What a backend counts as it runs (Backend::stats(), backend.h): bytes and busy time per
// channel, events, transfers and bytes started and delivered, and the transfers that cannot go
// on. Optional, so that a backend (a test's toy one) needs only the core to run; both of
// mfabric's backends count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"
#include "net/transfer.h"

namespace mfabric::net {

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

class BackendStats {
 public:
  virtual ~BackendStats() = default;

  // Transfers started and not yet delivered.
  virtual std::size_t active_transfers() const = 0;
  virtual std::int64_t events_processed() const = 0;
  // Up to now(), per directed channel.
  virtual const std::vector<ChannelStats>& channel_stats() const = 0;
  // Up to `limit` active transfers without a next event (see StalledTransfer), in a
  // deterministic order.
  virtual std::vector<StalledTransfer> stalled_transfers(std::size_t limit) const = 0;
  virtual TransferTotals totals() const = 0;
};

}  // namespace mfabric::net
