// The flow backend's completion queues (flow_state.h): when each flow's last byte leaves
// (DrainQueue) and when it arrives (Delivery), both in a deterministic order, and the time to
// drain a flow's bytes at its rate.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "net/transfer.h"

namespace mfabric::net::flow {

// Min-heap of flow slots by the time their last byte leaves (ties by slot, for determinism).
// Each slot's position is kept, so that a new rate moves the flow's entry instead of leaving a
// stale one behind. Entries carry their time, so that sifting reads one array (with tens of
// thousands of flows in flight a per-slot key array costs a cache miss per level).
class DrainQueue {
 public:
  bool empty() const { return heap_.empty(); }
  bool contains(std::int32_t slot) const {
    const auto s = static_cast<std::size_t>(slot);
    return s < where_.size() && where_[s] >= 0;
  }
  std::int32_t top() const { return heap_.front().slot; }
  std::int64_t top_time() const { return heap_.front().t; }

  void set(std::int32_t slot, std::int64_t t) {
    const auto s = static_cast<std::size_t>(slot);
    if (s >= where_.size()) where_.resize(s + 1, -1);
    if (where_[s] < 0) {
      heap_.push_back({t, slot});
      up(heap_.size() - 1);
      return;
    }
    const auto i = static_cast<std::size_t>(where_[s]);
    const std::int64_t old = heap_[i].t;
    heap_[i].t = t;
    if (t < old) {
      up(i);
    } else {
      down(i);
    }
  }

  void erase(std::int32_t slot) {
    const auto s = static_cast<std::size_t>(slot);
    if (s >= where_.size() || where_[s] < 0) return;
    const auto i = static_cast<std::size_t>(where_[s]);
    const Entry last = heap_.back();
    heap_.pop_back();
    where_[s] = -1;
    if (i == heap_.size()) return;
    heap_[i] = last;
    where_[static_cast<std::size_t>(last.slot)] = static_cast<std::int32_t>(i);
    up(i);
    down(static_cast<std::size_t>(where_[static_cast<std::size_t>(last.slot)]));
  }

 private:
  struct Entry {
    std::int64_t t;
    std::int32_t slot;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.t != b.t ? a.t < b.t : a.slot < b.slot;
  }
  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    where_[static_cast<std::size_t>(e.slot)] = static_cast<std::int32_t>(i);
  }
  void up(std::size_t i) {
    const Entry x = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(x, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, x);
  }
  void down(std::size_t i) {
    const Entry x = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], x)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, x);
  }

  std::vector<Entry> heap_;
  std::vector<std::int32_t> where_;  // per slot: index in heap_, or -1
};

struct Delivery {
  std::int64_t t;
  TransferId id;
  std::int32_t slot;
};
struct DeliveryLater {
  bool operator()(const Delivery& x, const Delivery& y) const {
    return x.t != y.t ? x.t > y.t : x.id > y.id;
  }
};

// Picoseconds to drain `bytes` at `bps`, rounded up so that a transfer never finishes before its
// last bit; a slack far below a picosecond absorbs floating-point noise on exact quotients.
inline std::int64_t drain_ps(double bytes, double bps) {
  const double ps = bytes * 8.0 / bps * 1e12;
  if (!(ps < 4e18)) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(std::ceil(ps - ps * 1e-13 - 1e-6));
}

}  // namespace mfabric::net::flow
