// The flows of a packet network (packet_network.h) in one pool: a record per transfer, indexed by
// its flow slot, the index its transport keeps the flow's own state under (transport.h). The
// record outlives the transfer's data while anything still refers to the slot: its completion
// callback, its packets and acknowledgements in flight, its pending timer events. At the last
// reference it is reset and the slot reused, so that steady traffic allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "fabric/topology.h"
#include "net/backend.h"
#include "net/packet/transport.h"

namespace mfabric::net::packet {

// A time that never comes (a timer not set).
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

// Why a live flow sends nothing: its circuit was torn down (Paused), or its route crosses a link
// or port that is down (Down).
enum class Hold : std::uint8_t { None, Paused, Down };

struct Flow {
  TransferId id = -1;
  fabric::NodeId src = fabric::kNoNode;
  fabric::NodeId dst = fabric::kNoNode;
  std::int64_t size = 0;
  std::uint64_t hash = 0;
  std::int32_t latency_hops = 1;
  std::int32_t route = -1;
  std::int32_t packets = 0;
  std::int32_t last_payload = 0;
  std::int32_t refs = 0;  // the flow itself until its callback ran, packets, ACKs, timer events
  std::int64_t timer_deadline = kNever;
  std::int64_t timer_next = kNever;  // the earliest Timer event pending for it
  // Packet spraying (packet_spraying.h): the flow's other equal-cost routes; its packets take
  // `route` and these in turn (spray_next counts them).
  std::vector<std::int32_t> sprayed;
  std::uint32_t spray_next = 0;
  Hold hold = Hold::None;
  bool live = false;  // its transport is open: data still to arrive
  bool in_ready = false;
  Backend::DoneCallback on_done;
};

class FlowPool {
 public:
  // A free slot; its record is a default Flow (refs 0: the caller takes the first reference).
  FlowSlot allocate() {
    if (!free_.empty()) {
      const FlowSlot f = free_.back();
      free_.pop_back();
      return f;
    }
    flows_.emplace_back();
    return static_cast<FlowSlot>(flows_.size() - 1);
  }
  // One reference to the flow less; at the last one its record is reset and its slot freed.
  void unref(FlowSlot f) {
    Flow& fl = flows_[static_cast<std::size_t>(f)];
    if (--fl.refs > 0) return;
    fl = Flow{};
    free_.push_back(f);
  }

  Flow& operator[](FlowSlot f) { return flows_[static_cast<std::size_t>(f)]; }
  const Flow& operator[](FlowSlot f) const { return flows_[static_cast<std::size_t>(f)]; }
  // Every slot so far, the free ones included (their records are not live), in slot order.
  FlowSlot slots() const { return static_cast<FlowSlot>(flows_.size()); }
  std::vector<Flow>::const_iterator begin() const { return flows_.begin(); }
  std::vector<Flow>::const_iterator end() const { return flows_.end(); }

 private:
  std::vector<Flow> flows_;
  std::vector<FlowSlot> free_;
};

}  // namespace mfabric::net::packet
