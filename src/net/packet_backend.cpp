#include "net/packet_backend.h"

#include <fmt/format.h>

#include <stdexcept>

namespace mfabric::net {

PacketBackend::PacketBackend(const fabric::Topology& topology, const PacketBackendOptions& options)
    : topology_(topology), network_(topology, options) {}

TransferId PacketBackend::start(const net::Transfer& t, DoneCallback on_done) {
  check_transfer(t);
  network_.route(t, route_);
  // The id is taken once the part accepted the transfer (the packet part refuses a flow of too
  // many packets).
  const TransferId id = next_id_;
  auto done = [id, done = std::move(on_done)](TransferId, Time at) {
    if (done) done(id, at);
  };
  if (!route_.channels.empty() && route_.cost.network_links == 0 && route_.cost.proxies == 0) {
    if (!inside_) {
      inside_ = std::make_unique<FlowBackend>(topology_);
      if (timeline_) inside_->record_timeline(*timeline_);
    }
    if (inside_->now() < now()) inside_->advance(now());
    ++next_id_;
    inside_->start(t, std::move(done));
    inside_ids_.push_back(id);
    return id;
  }
  network_.start_routed(t, route_, std::move(done));
  ++next_id_;
  network_ids_.push_back(id);
  return id;
}

void PacketBackend::set_link_rate(fabric::LinkId link, Rate rate) {
  network_.set_link_rate(link, rate);  // checks the link and the rate first
  if (inside_ && static_cast<std::size_t>(link) < topology_.links().size()) {
    inside_->set_link_rate(link, rate);
  }
}

void PacketBackend::reroute_down() {
  network_.reroute_down();
  if (inside_) inside_->reroute_down();
}

std::optional<Time> PacketBackend::next_event_time() const {
  std::optional<Time> next = network_.next_event_time();
  if (inside_) {
    const std::optional<Time> f = inside_->next_event_time();
    if (f && (!next || *f < *next)) next = f;
  }
  return next;
}

void PacketBackend::advance(Time t) {
  if (t < now()) {
    throw std::logic_error(fmt::format("PacketBackend::advance: time {} ps is before now ({} ps)",
                                       t.ps(), now().ps()));
  }
  for (;;) {
    const std::optional<Time> next = next_event_time();
    if (!next || *next > t) break;
    // Both clocks at `next` before either part runs: a completion callback of the fluid part
    // may start a packet flow, which starts at `next`.
    network_.move_clock(*next);
    if (inside_) inside_->advance(*next);
    network_.advance(*next);
  }
  if (inside_) inside_->advance(t);
  network_.advance(t);
}

std::size_t PacketBackend::active_transfers() const {
  return network_.active_transfers() + (inside_ ? inside_->active_transfers() : 0);
}

std::int64_t PacketBackend::events_processed() const {
  return network_.events_processed() + (inside_ ? inside_->events_processed() : 0);
}

const std::vector<ChannelStats>& PacketBackend::channel_stats() const {
  if (!inside_) return network_.channel_stats();
  merged_channels_ = network_.channel_stats();
  const std::vector<ChannelStats>& f = inside_->channel_stats();
  for (std::size_t c = 0; c < f.size() && c < merged_channels_.size(); ++c) {
    merged_channels_[c].bytes += f[c].bytes;
    merged_channels_[c].busy += f[c].busy;
  }
  return merged_channels_;
}

std::vector<StalledTransfer> PacketBackend::stalled_transfers(std::size_t limit) const {
  std::vector<StalledTransfer> out = network_.stalled_transfers(limit);
  for (StalledTransfer& st : out)
    st.id = ours(network_ids_, st.id);
  if (inside_ && out.size() < limit) {
    for (StalledTransfer st : inside_->stalled_transfers(limit - out.size())) {
      st.id = ours(inside_ids_, st.id);
      out.push_back(st);
    }
  }
  return out;
}

void PacketBackend::record_timeline(const TimelineOptions& options) {
  network_.record_timeline(options);
  if (inside_) inside_->record_timeline(options);
  timeline_ = options;
}

std::optional<LinkTimeline> PacketBackend::take_timeline() {
  std::optional<LinkTimeline> out = network_.take_timeline();
  if (inside_) {
    std::optional<LinkTimeline> fluid = inside_->take_timeline();
    if (out && fluid) out->add(*fluid);
  }
  timeline_.reset();
  return out;
}

TransferTotals PacketBackend::totals() const {
  TransferTotals t = network_.totals();
  if (inside_) {
    const TransferTotals f = inside_->totals();
    t.started += f.started;
    t.delivered += f.delivered;
    t.bytes_sent += f.bytes_sent;
    t.bytes_delivered += f.bytes_delivered;
  }
  return t;
}

}  // namespace mfabric::net
