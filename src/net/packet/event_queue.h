// The packet backend's event list: a 4-ary min-heap of (time, sequence) keyed events. Events at
// one time run in the order they were scheduled (the sequence number), so a run never depends on
// heap layout or memory addresses. A 4-ary heap halves the depth of a binary one; with a few
// hundred thousand pending events (packets in flight) the sift-down touches fewer cache lines.
#pragma once

#include <cstdint>
#include <vector>

namespace mfabric::net::packet {

enum class EventKind : std::uint8_t {
  Arrive,     // a packet reaches the port of its next hop
  PortDone,   // a port has put the last bit of its head packet on the wire
  Deliver,    // a data packet reaches its destination GPU
  Ack,        // an acknowledgement (or NACK, CNP) reaches the sender
  Timer,      // a flow's transport timer
  Complete,   // a transfer's completion callback is due
  PfcPause,   // a PFC pause frame reaches the port it stops
  PfcResume,  // a PFC resume frame reaches the paused port
};

struct Event {
  std::int64_t t;
  std::uint64_t seq;
  std::uint32_t index;
  EventKind kind;
};

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void push(std::int64_t t, EventKind kind, std::uint32_t index) {
    heap_.push_back(Event{t, next_seq_++, index, kind});
    sift_up(heap_.size() - 1);
  }

  Event pop() {
    const Event e = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return e;
  }

  std::uint64_t scheduled() const { return next_seq_; }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.t < b.t || (a.t == b.t && a.seq < b.seq);
  }
  void sift_up(std::size_t i) {
    const Event e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Places `e` (the old last element) starting from the root.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t last = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < last; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace mfabric::net::packet
