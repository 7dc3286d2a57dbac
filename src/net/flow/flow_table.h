// The flow backend's table of flows (flow_state.h): a slot per transfer with its records
// (flow_records.h) and the channels its route crosses, and per channel the flows crossing it.
// Each channel entry of a flow remembers where the flow stands in that channel's list, so that a
// flow leaves a channel in constant time. Routes live in one flat array with a fixed stride
// (grown when a longer route appears) so that starting a transfer allocates nothing once the
// arrays are warm. The table knows nothing of rates, time or statistics: the backend does, and
// the max-min solver (max_min_solver.h) reads the same arrays.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "net/flow/flow_records.h"

namespace mfabric::net::flow {

class FlowTable {
 public:
  // Slots ever used (free ones included), in slot order.
  std::size_t slots() const { return hot_.size(); }
  Hot& hot(std::int32_t s) { return hot_[static_cast<std::size_t>(s)]; }
  const Hot& hot(std::int32_t s) const { return hot_[static_cast<std::size_t>(s)]; }
  Cold& cold(std::int32_t s) { return cold_[static_cast<std::size_t>(s)]; }
  const Cold& cold(std::int32_t s) const { return cold_[static_cast<std::size_t>(s)]; }
  // The channels a flow crosses (hot(s).len of them; mirrored PCIe channels left out).
  const ChannelId* path(std::int32_t s) const {
    return path_.data() + static_cast<std::ptrdiff_t>(s) * stride_;
  }
  std::vector<std::int32_t>& flows_on(ChannelId c) { return on_[static_cast<std::size_t>(c)]; }
  const std::vector<std::int32_t>& flows_on(ChannelId c) const {
    return on_[static_cast<std::size_t>(c)];
  }

  // The arrays themselves, for the max-min solver, which works on them in place.
  std::vector<Hot>& hot_records() { return hot_; }
  std::vector<std::vector<std::int32_t>>& flows_per_channel() { return on_; }
  std::vector<ChannelId>& routes() { return path_; }
  std::vector<float>& coefficients() { return coef_; }
  const std::int32_t& route_stride() const { return stride_; }
  // How many times over a weighted flow (a coflow) uses the i-th channel of its route, as a
  // multiple of its rate; 1 for every other flow.
  double coefficient(std::int32_t s, std::int32_t i) const {
    return hot(s).weighted ? coef_[static_cast<std::size_t>(s) * stride_ + i] : 1.0;
  }

  // The channel table grew to `channels` channels.
  void resize_channels(std::size_t channels) { on_.resize(channels); }

  // A slot for a new flow: a freed one if any, else a new one (records default, no route).
  std::int32_t allocate() {
    if (!free_.empty()) {
      const std::int32_t s = free_.back();
      free_.pop_back();
      return s;
    }
    return append_slots(1);
  }
  // The flow in slot `s` is gone (its route already removed): the slot is reused next.
  void release(std::int32_t s) {
    const std::int32_t k = span_[static_cast<std::size_t>(s)];
    if (k == 1) {
      free_.push_back(s);
    } else {
      free_blocks_[k].push_back(s);
    }
  }

  // A slot for a flow of a long route (a coflow): `len` channels, more than the stride holds, go
  // into the route space of the slots after it, which it reserves (they hold no flow). Released
  // by release(); reused by flows of as many slots.
  std::int32_t allocate_long(std::int32_t len) {
    const std::int32_t span = std::max<std::int32_t>(1, (len + stride_ - 1) / stride_);
    if (span == 1) return allocate();
    auto& blocks = free_blocks_[span];
    if (!blocks.empty()) {
      const std::int32_t s = blocks.back();
      blocks.pop_back();
      return s;
    }
    return append_slots(span);
  }
  // The channels slot `s` can hold.
  std::int32_t capacity(std::int32_t s) const {
    return static_cast<std::int32_t>(span_[static_cast<std::size_t>(s)]) * stride_;
  }

  // Makes room for routes of `len` channels before append() is called that many times.
  void reserve_route(std::int32_t len) {
    if (len > stride_) grow_stride(len);
  }
  // Adds channel `c` at the end of the flow's route, and the flow to c's list; a weighted flow
  // uses it `coefficient` times over.
  void append(std::int32_t s, ChannelId c, float coefficient = 1.0F) {
    Hot& f = hot(s);
    auto& list = flows_on(c);
    coef_of(s)[f.len] = coefficient;
    path_of(s)[f.len] = c;
    pos_of(s)[f.len] = static_cast<std::int32_t>(list.size());
    list.push_back(s);
    ++f.len;
  }
  // Puts channel `c` in the flow's route at index `at` (a mirrored PCIe channel coming back).
  // A weighted flow uses it `coefficient` times over.
  void insert(std::int32_t s, std::int32_t at, ChannelId c, float coefficient = 1.0F) {
    if (hot(s).len + 1 > capacity(s)) grow_stride(hot(s).len + 1);
    Hot& f = hot(s);
    ChannelId* p = path_of(s);
    std::int32_t* q = pos_of(s);
    float* a = coef_of(s);
    for (std::int32_t j = f.len; j > at; --j) {
      p[j] = p[j - 1];
      q[j] = q[j - 1];
      a[j] = a[j - 1];
    }
    auto& list = flows_on(c);
    a[at] = coefficient;
    p[at] = c;
    q[at] = static_cast<std::int32_t>(list.size());
    list.push_back(s);
    ++f.len;
  }
  // Takes the flow off every channel of its route, in route order, calling left(c, list) for
  // each channel once the flow is off its list; the route is then empty.
  template <class Left>
  void remove_route(std::int32_t s, Left&& left) {
    Hot& f = hot(s);
    const ChannelId* p = path_of(s);
    const std::int32_t* q = pos_of(s);
    for (std::int32_t i = 0; i < f.len; ++i) {
      const ChannelId c = p[i];
      auto& list = flows_on(c);
      const std::int32_t at = q[i];
      const std::int32_t moved = list.back();
      list[static_cast<std::size_t>(at)] = moved;
      list.pop_back();
      if (moved != s) {
        // The flow moved into the freed place: its entry for this channel points there now.
        const ChannelId* mp = path_of(moved);
        std::int32_t* mq = pos_of(moved);
        const std::int32_t mlen = hot(moved).len;
        for (std::int32_t j = 0; j < mlen; ++j) {
          if (mp[j] == c) {
            mq[j] = at;
            break;
          }
        }
      }
      left(c, list);
    }
    f.len = 0;
  }

  // The slot of the active flow of transfer `id`, or -1.
  std::int32_t find_active(TransferId id) const {
    for (std::size_t s = 0; s < hot_.size(); ++s) {
      if (cold_[s].id == id && hot_[s].state == FlowState::Active) {
        return static_cast<std::int32_t>(s);
      }
    }
    return -1;
  }

 private:
  ChannelId* path_of(std::int32_t s) {
    return path_.data() + static_cast<std::ptrdiff_t>(s) * stride_;
  }
  std::int32_t* pos_of(std::int32_t s) {
    return pos_.data() + static_cast<std::ptrdiff_t>(s) * stride_;
  }
  float* coef_of(std::int32_t s) { return coef_.data() + static_cast<std::ptrdiff_t>(s) * stride_; }
  // Appends `span` slots, the first of which may use the route space of all of them.
  std::int32_t append_slots(std::int32_t span) {
    const auto s = static_cast<std::int32_t>(hot_.size());
    const auto n = static_cast<std::size_t>(span);
    hot_.resize(hot_.size() + n);
    cold_.resize(cold_.size() + n);
    span_.resize(span_.size() + n, 0);
    span_[static_cast<std::size_t>(s)] = span;
    path_.resize(path_.size() + n * static_cast<std::size_t>(stride_));
    pos_.resize(pos_.size() + n * static_cast<std::size_t>(stride_));
    coef_.resize(coef_.size() + n * static_cast<std::size_t>(stride_));
    return s;
  }

  void grow_stride(std::int32_t len) {
    const std::int32_t wider = std::max(len, 2 * stride_);
    std::vector<ChannelId> p(hot_.size() * static_cast<std::size_t>(wider));
    std::vector<std::int32_t> q(p.size());
    std::vector<float> a(p.size());
    for (std::size_t s = 0; s < hot_.size(); ++s) {
      // A slot spanning k slots keeps its k x stride entries together, at its own place.
      const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(span_[s]) * stride_;
      if (n == 0) continue;
      std::copy_n(coef_.begin() + static_cast<std::ptrdiff_t>(s) * stride_, n,
                  a.begin() + static_cast<std::ptrdiff_t>(s) * wider);
      std::copy_n(path_.begin() + static_cast<std::ptrdiff_t>(s) * stride_, n,
                  p.begin() + static_cast<std::ptrdiff_t>(s) * wider);
      std::copy_n(pos_.begin() + static_cast<std::ptrdiff_t>(s) * stride_, n,
                  q.begin() + static_cast<std::ptrdiff_t>(s) * wider);
    }
    path_.swap(p);
    pos_.swap(q);
    coef_.swap(a);
    stride_ = wider;
  }

  std::vector<Hot> hot_;
  std::vector<Cold> cold_;
  std::int32_t stride_ = 12;
  std::vector<ChannelId> path_;
  std::vector<std::int32_t> pos_;  // per route entry: the flow's index in that channel's list
  std::vector<float> coef_;        // per route entry of a weighted flow: its coefficient
  // Per slot: how many slots' route space it uses (1; k for allocate_long(); 0 for the slots
  // after such a slot, which hold no flow).
  std::vector<std::int32_t> span_;
  std::unordered_map<std::int32_t, std::vector<std::int32_t>> free_blocks_;  // released, by span
  std::vector<std::vector<std::int32_t>> on_;  // per channel: the flows (slots) crossing it
  std::vector<std::int32_t> free_;
};

}  // namespace mfabric::net::flow
