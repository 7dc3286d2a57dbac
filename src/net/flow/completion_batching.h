// Completion batching of the flow backend (flow_backend.h, FlowBackendOptions; docs/network.md,
// "Completion batching"): when the exact max-min recomputation that completions call for is due,
// and what the cheap local re-fills made meanwhile leave for it. A completion whose flow's last
// exact recomputation re-filled many flows may wait `fraction` x the transfer's age; until the
// earliest such wait ends, each timestamp's completions get a local re-fill of the flows on
// their bottlenecks, and the exact recomputation then starts from every channel those re-fills
// touched. With fraction 0 every recomputation is due at once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "net/flow/flow_records.h"

namespace mfabric::net::flow {

class CompletionBatching {
 public:
  // Completions are batched only when their flow's last exact recomputation re-filled at least
  // this many flows; for the rest batching would cost more than it saves.
  static constexpr std::int32_t kBatchFrom = 256;
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  explicit CompletionBatching(double fraction) : fraction_(fraction) {}

  // Flow `f` (records `c`, rate `rate` until now) completed at `now`.
  void completed(const Hot& f, const Cold& c, double rate, std::int64_t now) {
    const bool batch = fraction_ > 0 && c.last_v >= kBatchFrom;
    // The wait is rounded down to whole picoseconds: 0 recomputes at once, as without batching.
    const double wait = batch ? fraction_ * static_cast<double>(now - c.started) : 0.0;
    if (batch && f.bneck >= 0) {
      local_seeds_.push_back(f.bneck);
      local_level_ = std::min(local_level_, rate);
    }
    due_ = std::min(due_, now + static_cast<std::int64_t>(std::min(wait, 1e18)));
  }

  // When the exact recomputation is due (kNever: no completion waits).
  std::int64_t due() const { return due_; }
  // Whether a recomputation that only completions asked for waits at `now` (a local re-fill
  // instead). Only while some flow still drains: otherwise there is no rate for it to change.
  bool waits(std::int64_t now, bool any_draining) const { return now < due_ && any_draining; }

  // The local re-fill: the completed flows' bottlenecks, and the level below which no rate on
  // them can change; both are taken (the next re-fill starts empty).
  std::vector<ChannelId>& local_seeds() { return local_seeds_; }
  double take_local_level() {
    const double l = local_level_;
    local_level_ = kInf;
    return l;
  }
  // A local re-fill over `channels` (of `channel_count`) was applied; `lowered`: it lowered a
  // rate.
  void refilled(const std::vector<ChannelId>& channels, bool lowered, std::size_t channel_count) {
    local_lowered_ = local_lowered_ || lowered;
    if (in_batch_.size() < channel_count) in_batch_.resize(channel_count, 0);
    for (ChannelId c : channels) {
      auto& b = in_batch_[static_cast<std::size_t>(c)];
      if (b == 0) batched_seeds_.push_back(c);
      b = 1;
    }
  }

  // The exact recomputation runs now: the channels the local re-fills touched are added to
  // `seeds`, and the batch starts over. Returns whether a local re-fill lowered a rate (then the
  // recomputation's level bound no longer holds: it must start at level 0).
  bool close(std::vector<ChannelId>& seeds) {
    due_ = kNever;
    bool lowered = false;
    if (!batched_seeds_.empty()) {
      seeds.insert(seeds.end(), batched_seeds_.begin(), batched_seeds_.end());
      for (ChannelId c : batched_seeds_)
        in_batch_[static_cast<std::size_t>(c)] = 0;
      batched_seeds_.clear();
      lowered = local_lowered_;
      local_lowered_ = false;
    }
    local_seeds_.clear();
    local_level_ = kInf;
    return lowered;
  }

 private:
  double fraction_ = 0;
  std::int64_t due_ = kNever;
  std::vector<ChannelId> batched_seeds_;  // channels the local re-fills touched since close()
  std::vector<std::uint8_t> in_batch_;    // per channel: in batched_seeds_
  // The bottlenecks of the flows completed since the last local re-fill, and their lowest rate.
  std::vector<ChannelId> local_seeds_;
  double local_level_ = kInf;
  bool local_lowered_ = false;  // a local re-fill since close() lowered a rate
};

}  // namespace mfabric::net::flow
