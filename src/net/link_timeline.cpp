#include "net/link_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace mfabric::net {

using fabric::LinkId;
using fabric::NodeKind;

namespace {

// Automatic bins stop doubling here (about 53 days): a run longer than that in one bin is no
// timeline; reaching it means max_cells is below the channels.
constexpr std::int64_t kWidestBin = std::numeric_limits<std::int64_t>::max() / 4;

}  // namespace

LinkTimeline::LinkTimeline(const LinkTable& links, const TimelineOptions& options)
    : links_(&links),
      bin_ps_(options.bin.ps() > 0 ? options.bin.ps() : kFirstAutomaticBin.ps()),
      automatic_(options.bin.ps() == 0),
      max_cells_(options.max_cells),
      open_(2 * links.topology().links().size()) {
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

void LinkTimeline::add_bytes(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes) {
  if (!(bytes > 0)) return;
  // An instant is the picosecond starting then: the same bin.
  const std::int64_t end = std::max(t1, t0 + 1);
  const double per_ps = bytes / static_cast<double>(end - t0);
  if (static_cast<std::size_t>(c) < open_.size()) {
    charge(c, t0, end, per_ps);
  } else {
    charge_circuit(c, t0, end, per_ps);
  }
}

void LinkTimeline::charge_circuit(ChannelId c, std::int64_t t0, std::int64_t t1,
                                  double bytes_per_ps) {
  for (ChannelId fibre : fibres(c)) {
    if (fibre >= 0) charge(fibre, t0, t1, bytes_per_ps);
  }
}

std::array<ChannelId, 2> LinkTimeline::fibres(ChannelId c) {
  const LinkId l = link_of_channel(c);
  const auto slot = static_cast<std::size_t>(c) - open_.size();
  if (circuit_fibres_.size() <= slot) circuit_fibres_.resize(slot + 1, {-1, -1});
  if (links_->connected(l)) {
    const fabric::Link& k = links_->link(l);
    const fabric::NodeId from = c % 2 == 0 ? k.a : k.b;
    const fabric::NodeId to = c % 2 == 0 ? k.b : k.a;
    const LinkId out = fibre_of_[static_cast<std::size_t>(from)];
    const LinkId in = fibre_of_[static_cast<std::size_t>(to)];
    const fabric::Topology& t = links_->topology();
    // Towards the device on the sender's fibre, from the device on the receiver's.
    circuit_fibres_[slot] = {channel_of(t, out, from), channel_of(t, in, t.other_end(in, to))};
  }
  return circuit_fibres_[slot];
}

void LinkTimeline::spread(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes_per_ps) {
  flush(c);
  for (;;) {
    const std::int64_t first = t0 / bin_ps_;
    const std::int64_t last = (t1 - 1) / bin_ps_;
    if (automatic_ && last >= kMaxAutomaticBins && bin_ps_ < kWidestBin) {
      coarsen();
      continue;
    }
    const auto overlap = [&](std::int64_t b) {
      return static_cast<double>(std::min(t1, (b + 1) * bin_ps_) - std::max(t0, b * bin_ps_)) *
             bytes_per_ps;
    };
    if (last > first) {
      if (!reserve(first, last - 1)) continue;
      for (std::int64_t b = first; b < last; ++b)
        cells_by_bin_[static_cast<std::size_t>(b)][static_cast<std::size_t>(c)] += overlap(b);
    }
    open_[static_cast<std::size_t>(c)] = {last, overlap(last)};
    return;
  }
}

void LinkTimeline::flush(ChannelId c) {
  Open& open = open_[static_cast<std::size_t>(c)];
  if (open.bin < 0) return;
  // reserve() may coarsen, which moves this open bin along with the others.
  while (!reserve(open.bin, open.bin)) {
  }
  cells_by_bin_[static_cast<std::size_t>(open.bin)][static_cast<std::size_t>(c)] += open.bytes;
  open = {};
}

bool LinkTimeline::reserve(std::int64_t first, std::int64_t last) {
  if (cells_by_bin_.size() <= static_cast<std::size_t>(last)) {
    cells_by_bin_.resize(static_cast<std::size_t>(last) + 1);
  }
  const auto channels = static_cast<std::int64_t>(open_.size());
  for (std::int64_t b = first; b <= last; ++b) {
    std::vector<double>& cells = cells_by_bin_[static_cast<std::size_t>(b)];
    if (!cells.empty()) continue;
    if (cells_ + channels > max_cells_) {
      if (!automatic_ || bin_ps_ >= kWidestBin) too_fine(b);
      coarsen();
      return false;
    }
    cells.assign(open_.size(), 0.0);
    cells_ += channels;
  }
  return true;
}

void LinkTimeline::too_fine(std::int64_t at_bin) const {
  throw TimelineTooFine(
      fmt::format("time bins of {} need more than {} cells ({} channels x bins) {} into the run",
                  to_string(Time::picoseconds(bin_ps_)), max_cells_, open_.size(),
                  to_string(Time::picoseconds((at_bin + 1) * bin_ps_))));
}

void LinkTimeline::coarsen() {
  bin_ps_ *= 2;
  for (Open& open : open_) {
    if (open.bin >= 0) open.bin /= 2;
  }
  std::vector<std::vector<double>> wider((cells_by_bin_.size() + 1) / 2);
  cells_ = 0;
  for (std::size_t b = 0; b < cells_by_bin_.size(); ++b) {
    std::vector<double>& from = cells_by_bin_[b];
    if (from.empty()) continue;
    std::vector<double>& to = wider[b / 2];
    if (to.empty()) {
      to = std::move(from);
      cells_ += static_cast<std::int64_t>(to.size());
    } else {
      for (std::size_t c = 0; c < to.size(); ++c)
        to[c] += from[c];
    }
  }
  cells_by_bin_ = std::move(wider);
}

void LinkTimeline::close() {
  for (std::size_t c = 0; c < open_.size(); ++c)
    flush(static_cast<ChannelId>(c));
  closed_ = true;
}

void LinkTimeline::copy(ChannelId from, ChannelId to) {
  for (std::vector<double>& cells : cells_by_bin_) {
    if (!cells.empty()) cells[static_cast<std::size_t>(to)] = cells[static_cast<std::size_t>(from)];
  }
  open_[static_cast<std::size_t>(to)] = open_[static_cast<std::size_t>(from)];
  if (open_[static_cast<std::size_t>(to)].bin >= 0) closed_ = false;
}

void LinkTimeline::add(const LinkTimeline& other) {
  if (other.open_.size() != open_.size() || other.automatic_ != automatic_ ||
      (!automatic_ && other.bin_ps_ != bin_ps_) || !other.closed_) {
    throw std::logic_error(
        "LinkTimeline::add: timelines of different channels or bins, or one still open");
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
  for (std::size_t b = 0; b < other.cells_by_bin_.size(); ++b) {
    const std::vector<double>& theirs = other.cells_by_bin_[b];
    if (theirs.empty()) continue;
    // reserve() may coarsen this timeline (automatic bins): theirs then go in at the new width.
    auto ours = static_cast<std::int64_t>(b) * other.bin_ps_ / bin_ps_;
    while (!reserve(ours, ours))
      ours = static_cast<std::int64_t>(b) * other.bin_ps_ / bin_ps_;
    std::vector<double>& cells = cells_by_bin_[static_cast<std::size_t>(ours)];
    for (std::size_t c = 0; c < cells.size(); ++c)
      cells[c] += theirs[c];
  }
}

std::int64_t LinkTimeline::bins() const {
  std::int64_t end = 0;
  for (std::size_t b = cells_by_bin_.size(); b > 0; --b) {
    if (!cells_by_bin_[b - 1].empty()) {
      end = static_cast<std::int64_t>(b);
      break;
    }
  }
  for (const Open& open : open_)
    end = std::max(end, open.bin + 1);
  return end;
}

double LinkTimeline::bytes(ChannelId c, std::int64_t b) const {
  const Open& open = open_[static_cast<std::size_t>(c)];
  double sum = open.bin == b ? open.bytes : 0.0;
  if (b >= 0 && static_cast<std::size_t>(b) < cells_by_bin_.size()) {
    const std::vector<double>& cells = cells_by_bin_[static_cast<std::size_t>(b)];
    if (!cells.empty()) sum += cells[static_cast<std::size_t>(c)];
  }
  return sum;
}

std::span<const double> LinkTimeline::bin_bytes(std::int64_t b) const {
  if (!closed_) throw std::logic_error("LinkTimeline::bin_bytes: bins still open (close() first)");
  if (b < 0 || static_cast<std::size_t>(b) >= cells_by_bin_.size()) return {};
  return cells_by_bin_[static_cast<std::size_t>(b)];
}

double LinkTimeline::total_bytes(ChannelId c) const {
  double sum = open_[static_cast<std::size_t>(c)].bytes;
  for (const std::vector<double>& cells : cells_by_bin_) {
    if (!cells.empty()) sum += cells[static_cast<std::size_t>(c)];
  }
  return sum;
}

}  // namespace mfabric::net
