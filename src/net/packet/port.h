// An output port of the packet backend: the sending end of one directed channel. It holds a FIFO
// of packets (by pool index), serialises the head packet at the link's rate, and knows its
// buffer and ECN threshold. The network (port_scheduler.h, packet_network.cpp) moves packets in
// and out; the port only keeps its queue and its accounting honest.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <vector>

#include "net/backend_stats.h"
#include "net/packet_report.h"

namespace mfabric::net::packet {

// A FIFO ring buffer (a std::deque allocates per block; rings stay put).
template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return buf_[head_]; }
  void push(const T& p) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = p;
    ++size_;
  }
  T pop() {
    const T p = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return p;
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < size_; ++i)
      f(buf_[(head_ + i) & (buf_.size() - 1)]);
  }
  void clear() { head_ = size_ = 0; }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 8 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i)
      bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

// A packet a port has scheduled (one-event-per-hop ports): it leaves the port at `done`.
struct Scheduled {
  std::int64_t done;
  std::int32_t wire;
  std::int32_t packet;
};

// Two ways to run a port, chosen per run (port_scheduler.h):
// - queued (with PFC): packets wait in `fifo`; a PortDone event ends each transmission, so that
//   a pause can stop the port between packets.
// - scheduled (without PFC): a FIFO at a fixed rate needs no event to leave: a packet arriving at
//   t leaves at max(t, busy_until) + its serialisation, computed on arrival, and goes straight to
//   the next hop's event. `scheduled` keeps the packets not yet gone, for the queue length and
//   for losing them if the link fails.
struct Port {
  std::int32_t channel = -1;
  double ps_per_byte = 0;    // serialisation: 8e12 / rate
  std::int64_t prop_ps = 0;  // the link's latency
  std::int64_t buffer = 0;   // bytes; 0 = unbounded (a host port)
  std::int64_t ecn_threshold = 0;
  Ring<std::int32_t> fifo;       // queued ports
  Ring<Scheduled> scheduled;     // scheduled ports
  std::int64_t busy_until = 0;   // scheduled ports: the last scheduled packet leaves then
  std::int64_t queued = 0;       // bytes in the FIFO, the packet on the wire included
  std::int64_t last_change = 0;  // time `queued` last changed (for the occupancy integral)
  std::int32_t inbound = 0;      // packets on their way to this port
  bool busy = false;             // a PortDone event is pending (scheduled ports: for the flows
                                 // that start here, the port is free for their next packet then)
  bool down = false;             // rate 0
  bool is_switch = false;        // sent by a switch (drops, PFC); else by a host
  // PFC: bytes the switch at the far end holds that came over this link, whether it asked this
  // port to pause, and whether the pause is in force here (since when).
  std::int64_t held_downstream = 0;
  bool pause_requested = false;
  bool paused = false;
  std::int64_t paused_since = 0;
  bool retired = false;  // its circuit was torn down: drains, takes nothing new
  // Flows that start here and may send, round robin (the port is their GPU's first hop).
  std::deque<std::int32_t> ready;

  // Its link's rate; 0 takes it down.
  void set_rate(double bps) {
    down = !(bps > 0);
    ps_per_byte = down ? 0 : 8e12 / bps;
  }
  // Picoseconds to put `bytes` on the wire, rounded up.
  std::int64_t serialisation(std::int64_t bytes) const {
    return static_cast<std::int64_t>(std::ceil(static_cast<double>(bytes) * ps_per_byte));
  }
  // The occupancy integral of `st` up to `now`.
  void account(PortStats& st, std::int64_t now) {
    st.queue_byte_ps += static_cast<double>(queued) * static_cast<double>(now - last_change);
    last_change = now;
  }
  // Scheduled ports: the packets gone by `now` leave the queue, each at its own time.
  void drain(PortStats& st, std::int64_t now) {
    while (!scheduled.empty() && scheduled.front().done <= now) {
      const Scheduled gone = scheduled.pop();
      st.queue_byte_ps +=
          static_cast<double>(queued) * static_cast<double>(gone.done - last_change);
      last_change = gone.done;
      queued -= gone.wire;
    }
  }
  // `wire` bytes more in the queue at `now` (the statistics up to date first).
  void add_bytes(PortStats& st, std::int64_t wire, std::int64_t now) {
    account(st, now);
    queued += wire;
    st.max_queue = std::max(st.max_queue, queued);
  }
};

}  // namespace mfabric::net::packet
