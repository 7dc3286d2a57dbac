#include "net/link_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::NodeKind;

namespace {

// Bytes per picosecond at `bps` bits per second.
constexpr double kBytesPerBitPs = 1e-12 / 8.0;

// Automatic bins stop doubling here (about 53 days): a run longer than that in one bin is no
// timeline; reaching it means max_cells is below the channels that carried bytes.
constexpr std::int64_t kWidestBin = std::numeric_limits<std::int64_t>::max() / 4;

}  // namespace

LinkTimeline::LinkTimeline(const LinkTable& links, const TimelineOptions& options)
    : links_(&links),
      bin_ps_(options.bin.ps() > 0 ? options.bin.ps() : kFirstAutomaticBin.ps()),
      automatic_(options.bin.ps() == 0),
      max_cells_(options.max_cells),
      rows_(2 * links.topology().links().size()) {
  if (options.bin.ps() < 0) {
    throw Error("", "bin",
                fmt::format("a time bin must be positive, got {}", to_string(options.bin)));
  }
  if (max_cells_ < 1) {
    throw Error("", "max_cells", fmt::format("must be at least 1, got {}", max_cells_));
  }
  const fabric::Topology& t = links.topology();
  fibre_of_.assign(t.nodes().size(), kNoLink);
  for (std::size_t v = 0; v < t.nodes().size(); ++v) {
    if (t.nodes()[v].kind != NodeKind::Nic) continue;
    for (LinkId l : t.links_of(static_cast<fabric::NodeId>(v))) {
      const NodeKind other = t.node(t.other_end(l, static_cast<fabric::NodeId>(v))).kind;
      if (other == NodeKind::Ocs || other == NodeKind::PatchPanel) fibre_of_[v] = l;
    }
  }
}

void LinkTimeline::add_rate(ChannelId c, std::int64_t t0, std::int64_t t1, double bps) {
  if (t1 <= t0 || !(bps > 0)) return;
  for (ChannelId row : targets(c)) {
    if (row >= 0) spread(row, t0, t1, bps * kBytesPerBitPs);
  }
}

void LinkTimeline::add_bytes(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes) {
  if (!(bytes > 0)) return;
  for (ChannelId row : targets(c)) {
    if (row < 0) continue;
    if (t1 > t0) {
      spread(row, t0, t1, bytes / static_cast<double>(t1 - t0));
    } else {
      std::int64_t first = t0 / bin_ps_;
      std::int64_t last = first;
      Row& r = cover(row, first, last);
      r.bytes[static_cast<std::size_t>(first - r.first)] += bytes;
    }
  }
}

std::array<ChannelId, 2> LinkTimeline::targets(ChannelId c) {
  const LinkId l = link_of_channel(c);
  const auto topology_links = static_cast<LinkId>(rows_.size() / 2);
  if (l < topology_links) return {c, -1};
  const auto slot = static_cast<std::size_t>(c - 2 * topology_links);
  if (circuit_targets_.size() <= slot) circuit_targets_.resize(slot + 1, {-1, -1});
  if (links_->connected(l)) {
    const fabric::Link& k = links_->link(l);
    const fabric::NodeId from = c % 2 == 0 ? k.a : k.b;
    const fabric::NodeId to = c % 2 == 0 ? k.b : k.a;
    const LinkId out = fibre_of_[static_cast<std::size_t>(from)];
    const LinkId in = fibre_of_[static_cast<std::size_t>(to)];
    const fabric::Topology& t = links_->topology();
    // Towards the device on the sender's fibre, from the device on the receiver's.
    circuit_targets_[slot] = {channel_of(t, out, from), channel_of(t, in, t.other_end(in, to))};
  }
  return circuit_targets_[slot];
}

void LinkTimeline::spread(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes_per_ps) {
  std::int64_t first = t0 / bin_ps_;
  std::int64_t last = (t1 - 1) / bin_ps_;
  Row& r = cover(c, first, last);
  double* cell = r.bytes.data() + (first - r.first);
  for (std::int64_t b = first; b <= last; ++b, ++cell) {
    const std::int64_t lo = std::max(t0, b * bin_ps_);
    const std::int64_t hi = std::min(t1, (b + 1) * bin_ps_);
    *cell += static_cast<double>(hi - lo) * bytes_per_ps;
  }
}

LinkTimeline::Row& LinkTimeline::cover(ChannelId c, std::int64_t& first, std::int64_t& last) {
  Row& r = rows_[static_cast<std::size_t>(c)];
  for (;;) {
    if (automatic_ && last >= kMaxAutomaticBins && bin_ps_ < kWidestBin) {
      coarsen();
      first /= 2;
      last /= 2;
      continue;
    }
    const auto size = static_cast<std::int64_t>(r.bytes.size());
    const std::int64_t from = size == 0 ? first : std::min(first, r.first);
    const std::int64_t to = size == 0 ? last : std::max(last, r.first + size - 1);
    const std::int64_t growth = (to - from + 1) - size;
    if (growth == 0) return r;
    if (cells_ + growth <= max_cells_) {
      if (size > 0 && from < r.first) {
        r.bytes.insert(r.bytes.begin(), static_cast<std::size_t>(r.first - from), 0.0);
      }
      r.first = from;
      r.bytes.resize(static_cast<std::size_t>(to - from + 1), 0.0);
      cells_ += growth;
      return r;
    }
    if (!automatic_ || bin_ps_ >= kWidestBin) {
      throw TimelineTooFine(
          fmt::format("time bins of {} need more than {} cells (channels x bins) {} into the run",
                      to_string(Time::picoseconds(bin_ps_)), max_cells_,
                      to_string(Time::picoseconds((last + 1) * bin_ps_))));
    }
    coarsen();
    first /= 2;
    last /= 2;
  }
}

void LinkTimeline::coarsen() {
  bin_ps_ *= 2;
  cells_ = 0;
  for (Row& r : rows_) {
    if (r.bytes.empty()) continue;
    const std::int64_t first = r.first / 2;
    const std::int64_t last = (r.first + static_cast<std::int64_t>(r.bytes.size()) - 1) / 2;
    std::vector<double> wider(static_cast<std::size_t>(last - first + 1), 0.0);
    for (std::size_t i = 0; i < r.bytes.size(); ++i) {
      wider[static_cast<std::size_t>((r.first + static_cast<std::int64_t>(i)) / 2 - first)] +=
          r.bytes[i];
    }
    r.first = first;
    r.bytes = std::move(wider);
    cells_ += static_cast<std::int64_t>(r.bytes.size());
  }
}

void LinkTimeline::copy(ChannelId from, ChannelId to) {
  Row& target = rows_[static_cast<std::size_t>(to)];
  const Row& source = rows_[static_cast<std::size_t>(from)];
  const auto before = static_cast<std::int64_t>(target.bytes.size());
  const auto after = static_cast<std::int64_t>(source.bytes.size());
  if (after > before && cells_ + (after - before) > max_cells_) {
    throw TimelineTooFine(fmt::format("time bins of {} need more than {} cells (channels x bins)",
                                      to_string(Time::picoseconds(bin_ps_)), max_cells_));
  }
  target = source;
  cells_ += after - before;
}

void LinkTimeline::add(const LinkTimeline& other) {
  if (other.rows_.size() != rows_.size() || other.automatic_ != automatic_ ||
      (!automatic_ && other.bin_ps_ != bin_ps_)) {
    throw std::logic_error("LinkTimeline::add: timelines of different channels or bins");
  }
  if (other.bin_ps_ < bin_ps_) {
    LinkTimeline coarser = other;
    while (coarser.bin_ps_ < bin_ps_)
      coarser.coarsen();
    add(coarser);
    return;
  }
  while (bin_ps_ < other.bin_ps_)
    coarsen();
  for (std::size_t c = 0; c < rows_.size(); ++c) {
    const Row& theirs = other.rows_[c];
    if (theirs.bytes.empty()) continue;
    std::int64_t first = theirs.first;
    std::int64_t last = theirs.first + static_cast<std::int64_t>(theirs.bytes.size()) - 1;
    Row& ours = cover(static_cast<ChannelId>(c), first, last);
    // cover() may have coarsened this timeline (automatic bins): theirs go in at the new width.
    const std::int64_t factor = bin_ps_ / other.bin_ps_;
    for (std::size_t i = 0; i < theirs.bytes.size(); ++i) {
      const std::int64_t b = (theirs.first + static_cast<std::int64_t>(i)) / factor;
      ours.bytes[static_cast<std::size_t>(b - ours.first)] += theirs.bytes[i];
    }
  }
}

std::int64_t LinkTimeline::bins() const {
  std::int64_t end = 0;
  for (const Row& r : rows_) {
    if (!r.bytes.empty()) end = std::max(end, r.first + static_cast<std::int64_t>(r.bytes.size()));
  }
  return end;
}

double LinkTimeline::bytes(ChannelId c, std::int64_t b) const {
  const Row& r = rows_[static_cast<std::size_t>(c)];
  const std::int64_t i = b - r.first;
  if (i < 0 || i >= static_cast<std::int64_t>(r.bytes.size())) return 0.0;
  return r.bytes[static_cast<std::size_t>(i)];
}

double LinkTimeline::total_bytes(ChannelId c) const {
  double sum = 0;
  for (double b : rows_[static_cast<std::size_t>(c)].bytes)
    sum += b;
  return sum;
}

}  // namespace mfabric::net
