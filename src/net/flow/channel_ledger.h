// The flow backend's channels (flow_state.h): per channel, its capacity and load (the
// records the max-min solver reads, flow_records.h) and the statistics they add up to (bytes and
// busy time, backend.h's ChannelStats). Between two changes of a channel's load nothing about it
// changes, so its statistics are brought up to date ("settled") just before each change, and
// for every channel when someone reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "net/backend_stats.h"
#include "net/flow/flow_records.h"
#include "net/flow/pcie_mirror.h"
#include "net/link_table.h"
#include "net/link_timeline.h"

namespace mfabric::net::flow {

class ChannelLedger {
 public:
  std::size_t size() const { return chans_.size(); }
  Chan& chan(ChannelId c) { return chans_[static_cast<std::size_t>(c)]; }
  const Chan& chan(ChannelId c) const { return chans_[static_cast<std::size_t>(c)]; }
  // The records themselves, for the max-min solver and the PCIe mirror.
  std::vector<Chan>& records() { return chans_; }

  // The link table grew: its new links' channels start now, at their links' rates.
  void grow(const LinkTable& links, std::int64_t now) {
    const std::size_t old = chans_.size();
    chans_.resize(2 * links.size());
    for (std::size_t c = old; c < chans_.size(); ++c) {
      chans_[c].settled = now;
      chans_[c].cap = links.link(static_cast<fabric::LinkId>(c / 2)).rate.bps();
    }
    stats_.resize(chans_.size());
  }

  // Adds what the channel carried since it was last settled, at its load then.
  void settle(ChannelId c, std::int64_t now) {
    const auto i = static_cast<std::size_t>(c);
    const std::int64_t dt = now - chans_[i].settled;
    if (dt <= 0) return;
    const double load = chans_[i].load;
    if (load > kIdleBps) {
      stats_[i].bytes += load * static_cast<double>(dt) * kBytesPerBitPs;
      stats_[i].busy += Time::picoseconds(dt);
      if (timeline_ != nullptr) timeline_->add_rate(c, chans_[i].settled, now, load);
    }
    chans_[i].settled = now;
  }

  // Every channel settled; a mirrored PCIe channel's statistics are its cable's.
  const std::vector<ChannelStats>& settle_all(std::int64_t now, const PcieMirror& mirrors) {
    for (std::size_t c = 0; c < chans_.size(); ++c) {
      settle(static_cast<ChannelId>(c), now);
    }
    for (std::size_t c = 0; c < chans_.size(); ++c) {
      const ChannelId cable = mirrors.cable_of(static_cast<ChannelId>(c));
      if (cable >= 0) stats_[c] = stats_[static_cast<std::size_t>(cable)];
    }
    return stats_;
  }

  // A mirrored PCIe channel comes back into use: its past is its cable's, its load the cable's
  // (its flows are the cable's).
  void take_over(ChannelId pcie, ChannelId cable, std::int64_t now) {
    settle(cable, now);
    const auto p = static_cast<std::size_t>(pcie);
    stats_[p] = stats_[static_cast<std::size_t>(cable)];
    if (timeline_ != nullptr) timeline_->copy(cable, pcie);
    chans_[p].settled = now;
    chans_[p].load = chan(cable).load;
  }

  // Settlements from now on also go to `timeline` (null: none); it must outlive the ledger's
  // use of it. Every channel is settled first, so that it gets nothing from before.
  void count_into(LinkTimeline* timeline, std::int64_t now) {
    for (std::size_t c = 0; c < chans_.size(); ++c)
      settle(static_cast<ChannelId>(c), now);
    timeline_ = timeline;
  }

  const ChannelStats& stats(ChannelId c) const { return stats_[static_cast<std::size_t>(c)]; }
  // Where a channel's statistics are, for a prefetch.
  const void* stats_address(ChannelId c) const { return &stats_[static_cast<std::size_t>(c)]; }

 private:
  std::vector<Chan> chans_;
  std::vector<ChannelStats> stats_;
  LinkTimeline* timeline_ = nullptr;
};

}  // namespace mfabric::net::flow
