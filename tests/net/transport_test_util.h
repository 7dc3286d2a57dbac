// What the transport tests share (dcqcn_test.cpp, packet_transport_test.cpp, dctcp_test.cpp): a
// fake host that records what a transport asks of it, and a one-flow network (one port at the
// line rate, a fixed latency each way, losses and CE marks chosen per packet) for whole
// transfers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <vector>

#include "net/packet/transport.h"

namespace mfabric::net::packet {
namespace transport_test {

constexpr Bytes kMtu(4096);
constexpr Bytes kHeader(64);
constexpr Bytes kWire(4160);
// A 4160-byte packet at 100 Gb/s: 4160 x 8 / 100e9 s = 332.8 ns.
constexpr Time kWireTime100G = Time::picoseconds(332800);
const Rate k100G = Rate::gbps(100);

constexpr double kGbps = 1e9;

// Records what a transport asks of its host; the test sets the time.
class FakeHost final : public TransportHost {
 public:
  Time now() const override { return time; }
  void wake(FlowSlot f) override { wakes.push_back(f); }
  void set_timer(FlowSlot f, Time at) override { timers[f] = at; }
  Time timer(FlowSlot f) const {
    const auto it = timers.find(f);
    return it == timers.end() ? Time::max() : it->second;
  }

  Time time;
  std::vector<FlowSlot> wakes;
  std::map<FlowSlot, Time> timers;
};

// ---------------------------------------------------------------------------------------------
// A one-flow network: the sender's port serialises each packet of kWire bytes at `rate` (as the
// backend does, rounded up to a picosecond); a packet arrives `latency` after its last bit, and
// an answer reaches the sender `latency` after the receiver sends it. As in the backend, wake()
// starts a packet at once when the port is free, and a flow stays in the port's round robin
// while can_send() says so.
struct Path {
  Rate rate = k100G;
  Time latency = Time::microseconds(2);
  // Whether the network loses this packet; `sent_before` is how often this packet was sent.
  std::function<bool(std::int32_t seq, int sent_before)> drop;
  std::function<bool(std::int32_t seq)> ce;
};

struct Send {
  Time at;
  std::int32_t seq = 0;
};

struct Answer {
  Time at;  // when it reached the sender
  Ack ack;
};

struct Trace {
  std::vector<Send> sends;
  std::vector<Answer> answers;
  std::vector<int> arrivals;  // per packet, how often it reached the receiver
  Time complete = Time::max();
  std::int32_t max_in_flight = 0;  // one past the highest packet sent, less the cumulative ack
  std::int64_t dropped = 0;

  std::vector<std::int32_t> seqs() const {
    std::vector<std::int32_t> out;
    for (const Send& s : sends)
      out.push_back(s.seq);
    return out;
  }
};

class OneFlowNetwork final : public TransportHost {
 public:
  explicit OneFlowNetwork(Path path) : path_(std::move(path)) {}

  Time now() const override { return now_; }
  void wake(FlowSlot /*f*/) override {
    if (!live_) return;
    ready_ = true;
    if (!port_busy_) pull();
  }
  void set_timer(FlowSlot /*f*/, Time at) override { timer_ = at; }

  // Runs a flow of `packets` packets (opened with `rtt`) to completion or `limit`.
  Trace run(Transport& t, std::int32_t packets, Time rtt, Time limit = Time::milliseconds(100)) {
    transport_ = &t;
    trace_ = Trace{};
    trace_.arrivals.assign(static_cast<std::size_t>(packets), 0);
    sent_.assign(static_cast<std::size_t>(packets), 0);
    live_ = true;
    t.open(0, packets, rtt, path_.rate);
    wake(0);
    while (live_) {
      const Time next_event = events_.empty() ? Time::max() : events_.top().at;
      const Time at = std::min(next_event, timer_);
      if (at == Time::max() || at > limit) break;
      now_ = at;
      if (next_event <= timer_) {
        const Event e = events_.top();
        events_.pop();
        process(e);
      } else {
        timer_ = Time::max();
        transport_->on_timer(0);
      }
    }
    return trace_;
  }

 private:
  enum class Kind { PortFree, Deliver, Answer };
  struct Event {
    Time at;
    std::uint64_t order = 0;
    Kind kind = Kind::PortFree;
    std::int32_t seq = 0;
    Ack ack;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at > b.at || (a.at == b.at && a.order > b.order);
    }
  };
  void push(Time at, Kind kind, std::int32_t seq = 0, Ack ack = {}) {
    events_.push(Event{at, order_++, kind, seq, ack});
  }

  void pull() {
    const std::int32_t seq = transport_->next_packet(0);
    if (seq < 0) {
      ready_ = false;
      return;
    }
    trace_.sends.push_back(Send{now_, seq});
    highest_ = std::max(highest_, seq + 1);
    trace_.max_in_flight = std::max(trace_.max_in_flight, highest_ - cumulative_);
    const int sent_before = sent_[static_cast<std::size_t>(seq)]++;
    const Time serialisation = transmission_time(kWire, path_.rate);
    port_busy_ = true;
    push(now_ + serialisation, Kind::PortFree);
    if (path_.drop && path_.drop(seq, sent_before)) {
      ++trace_.dropped;
    } else {
      push(now_ + serialisation + path_.latency, Kind::Deliver, seq);
    }
    ready_ = transport_->can_send(0);
  }

  void process(const Event& e) {
    switch (e.kind) {
      case Kind::PortFree:
        port_busy_ = false;
        if (ready_) pull();
        break;
      case Kind::Deliver: {
        ++trace_.arrivals[static_cast<std::size_t>(e.seq)];
        Ack ack;
        bool complete = false;
        const bool ce = path_.ce && path_.ce(e.seq);
        const bool answer = transport_->on_data(0, e.seq, ce, ack, complete);
        if (complete) {
          trace_.complete = now_;
          live_ = false;
          transport_->close(0);
          return;
        }
        if (answer) push(now_ + path_.latency, Kind::Answer, e.seq, ack);
        break;
      }
      case Kind::Answer:
        trace_.answers.push_back(Answer{now_, e.ack});
        cumulative_ = std::max(cumulative_, e.ack.cumulative);
        transport_->on_ack(0, e.ack);
        break;
    }
  }

  Path path_;
  Transport* transport_ = nullptr;
  Trace trace_;
  std::vector<int> sent_;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::uint64_t order_ = 0;
  Time now_;
  Time timer_ = Time::max();
  bool live_ = false;
  bool ready_ = false;
  bool port_busy_ = false;
  std::int32_t highest_ = 0;
  std::int32_t cumulative_ = 0;
};

// The unloaded round trip of a Path: one packet's serialisation and the latency both ways.
inline Time round_trip(const Path& p) {
  return transmission_time(kWire, p.rate) + p.latency * 2;
}

}  // namespace transport_test
}  // namespace mfabric::net::packet
