// Network backends behind one interface, so that a packet-level backend can be added without
// touching the engine. A backend owns simulated time for the network: the engine starts
// transfers, changes links, and advances time; the backend calls back when a transfer is done.
//
// The interface is the core every backend implements (moving bytes over time); what only some
// backends offer (optical circuits, statistics, timelines, packet reports) is an interface of
// its own, reached through capabilities(), null where the backend has none.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"
#include "net/transfer.h"

namespace mfabric::net {

class BackendStats;      // backend_stats.h
class Circuits;          // circuits.h
class LinkTable;         // link_table.h
class PacketReporting;   // packet_report.h
class TimelineRecorder;  // link_timeline.h

// The argument checks every backend makes, one mfabric::Error each: a transfer's size and
// latency_hops not negative; a link of the table (a circuit slot only while connected) and a
// finite rate not negative.
void check_transfer(const net::Transfer& t);
void check_link_rate(const LinkTable& links, fabric::LinkId link, Rate rate);

// What a backend offers beyond the core, each null where it does not.
struct Capabilities {
  Circuits* circuits = nullptr;          // optical circuits
  BackendStats* stats = nullptr;         // channels, events, totals, stalled transfers
  TimelineRecorder* timeline = nullptr;  // bytes per channel per time bin
  PacketReporting* packets = nullptr;    // ports and packet counters
};

class Backend {
 public:
  using DoneCallback = std::function<void(TransferId, Time)>;

  virtual ~Backend() = default;

  // Starts a transfer at the current time; `on_done` is called (from advance()) when its last
  // byte has arrived. Zero-byte transfers complete after the path latency.
  virtual TransferId start(const net::Transfer& t, DoneCallback on_done) = 0;
  // Starts transfers that begin together and are waited for together (a collective's step),
  // `on_done[i]` for transfers[i]; returns their ids in order. A backend that models coflows
  // moves them as one (FlowBackend: every transfer at a rate in proportion to its bytes, so that
  // all finish together; docs/shortcuts.md, "Coflows"); the default starts each alone.
  virtual std::vector<TransferId> start_coflow(std::span<const net::Transfer> transfers,
                                               std::vector<DoneCallback> on_done);
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

  // What it offers beyond the core; the same over the backend's life, so a caller may keep the
  // pointers while the backend lives. Default: nothing.
  virtual Capabilities capabilities() { return {}; }

  // capabilities()' parts, null where the backend has none.
  Circuits* circuits() { return capabilities().circuits; }
  const Circuits* circuits() const { return mutable_self().capabilities().circuits; }
  BackendStats* stats() { return capabilities().stats; }
  const BackendStats* stats() const { return mutable_self().capabilities().stats; }
  TimelineRecorder* timeline() { return capabilities().timeline; }
  const PacketReporting* packet_reporting() const { return mutable_self().capabilities().packets; }

 private:
  // capabilities() hands out the same pointers whether the caller may change the backend or not.
  Backend& mutable_self() const { return const_cast<Backend&>(*this); }
};

// backend.circuits(), or mfabric::Error ("simulation.backend") if it has none.
Circuits& require_circuits(Backend& backend);
// backend.timeline(), or mfabric::Error ("simulation.backend") if it cannot count one.
TimelineRecorder& require_timeline(Backend& backend);

}  // namespace mfabric::net
