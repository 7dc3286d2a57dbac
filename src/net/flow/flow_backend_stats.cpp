// FlowBackend's statistics (net/backend_stats.h), timeline (net/link_timeline.h) and
// diagnostics: what it counted, read without changing what it simulates.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "net/flow/flow_backend.h"
#include "net/flow/flow_state.h"

namespace mfabric::net {

using flow::Cold;
using flow::FlowState;

std::size_t FlowBackend::active_transfers() const {
  return s_->active;
}

std::int64_t FlowBackend::events_processed() const {
  return s_->events;
}

const std::vector<ChannelStats>& FlowBackend::channel_stats() const {
  return s_->channels.settle_all(s_->now, s_->mirrors);
}

void FlowBackend::record_timeline(const TimelineOptions& options) {
  State& s = *s_;
  s.sync();
  s.timeline = std::make_unique<LinkTimeline>(s.links, options);
  s.channels.count_into(s.timeline.get(), s.now);
}

std::optional<LinkTimeline> FlowBackend::take_timeline() {
  State& s = *s_;
  if (!s.timeline) return std::nullopt;
  s.channels.settle_all(s.now, s.mirrors);
  // A PCIe channel mirroring its NIC's cable was never in a route: it carried what the cable did.
  for (std::size_t c = 0; c < s.timeline->channels(); ++c) {
    const ChannelId cable = s.mirrors.cable_of(static_cast<ChannelId>(c));
    if (cable >= 0) s.timeline->copy(cable, static_cast<ChannelId>(c));
  }
  s.channels.count_into(nullptr, s.now);
  s.timeline->close();
  std::optional<LinkTimeline> out(std::move(*s.timeline));
  s.timeline.reset();
  return out;
}

std::optional<Rate> FlowBackend::rate_of(TransferId id) const {
  s_->flush();
  const std::int32_t slot = s_->table.find_active(id);
  if (slot < 0) return std::nullopt;
  return Rate::bits_per_second(s_->hot_of(slot).rate);
}

std::vector<ChannelId> FlowBackend::channels_of(TransferId id) const {
  const std::int32_t slot = s_->table.find_active(id);
  if (slot < 0) return {};
  return s_->full_path(slot);
}

std::vector<StalledTransfer> FlowBackend::stalled_transfers(std::size_t limit) const {
  State& s = *s_;
  s.flush();
  std::vector<StalledTransfer> out;
  for (std::size_t i = 0; i < s.table.slots() && out.size() < limit; ++i) {
    const auto slot = static_cast<std::int32_t>(i);
    const bool paused = s.table.hot(slot).state == FlowState::Paused;
    if (!paused && (s.table.hot(slot).state != FlowState::Active || s.drains.contains(slot)))
      continue;
    StalledTransfer st;
    const Cold& c = s.table.cold(slot);
    st.id = c.id;
    st.src = c.src;
    st.dst = c.dst;
    st.rate = Rate::bits_per_second(s.table.hot(slot).rate);
    st.remaining = Bytes(static_cast<std::int64_t>(std::min(s.remaining_now(slot), 9e18)));
    st.why =
        st.rate.bps() > 0 ? StalledTransfer::Why::PastTimeRange : StalledTransfer::Why::LinkDown;
    if (paused) st.why = StalledTransfer::Why::Paused;
    for (ChannelId ch : s.full_path(slot)) {
      if (!s.router.link_up(link_of_channel(ch))) {
        st.down_link = link_of_channel(ch);
        break;
      }
    }
    out.push_back(st);
  }
  return out;
}

TransferTotals FlowBackend::totals() const {
  return s_->totals;
}

}  // namespace mfabric::net
