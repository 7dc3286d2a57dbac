// The engine's timed events: what a fabric controller asked to run at a time (EngineContext::at),
// earliest first and, at one time, in the order they were scheduled.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "core/units.h"

namespace mfabric::sim::engine {

class TimedEvents {
 public:
  struct Event {
    Time time;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  void push(Time t, std::function<void()> fn) {
    heap_.push_back(Event{t, seq_++, std::move(fn)});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
  }
  std::optional<Time> next_time() const {
    return heap_.empty() ? std::nullopt : std::optional<Time>(heap_.front().time);
  }
  // Takes the earliest event off the queue (there must be one).
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    Event event = std::move(heap_.back());
    heap_.pop_back();
    return event;
  }

 private:
  std::vector<Event> heap_;  // a min-heap on (time, seq)
  std::uint64_t seq_ = 0;
};

}  // namespace mfabric::sim::engine
