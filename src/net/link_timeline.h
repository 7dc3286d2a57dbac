// Bytes per directed channel per time bin (docs/telemetry.md): what utilisation over time is
// made of. A backend that records one charges its channels' bytes as it moves them: the flow
// backend when a channel's load changes (a load r held from t0 to t1 adds r x the overlap to
// each bin it spans), the packet backend per packet on the wire.
//
// Memory: a bin in which any channel carried bytes holds a cell for every channel (channels x
// bins, never more than `max_cells`: automatic bins are made twice as wide when a run outgrows
// them, fixed bins are refused with TimelineTooFine), plus one open bin per channel, the last one
// it was charged in. A charge inside a channel's open bin (most of them: loads change far more
// often than bins end) is one addition to a small per-channel record; a bin joins the cells when
// the channel is charged in a later one, or on close(). Cells are stored bin by bin, so that the
// bins being closed, those of the last moments of the run, stay in cache.
//
// Circuits are counted on the fibres they cross: a circuit slot's ids are reused by one NIC pair
// after another (link_table.h), but light from NIC a to NIC b runs over a's fibre to the optical
// device and over b's fibre from it, and those are topology links that stay what they are. So a
// circuit's bytes a -> b are charged to a's fibre (towards the device) and to b's fibre (from
// it); the timeline has channels for topology links only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/units.h"
#include "net/link_table.h"
#include "net/router.h"

namespace mfabric::net {

// The most cells (channels x bins) a timeline keeps: 400 MB of doubles.
inline constexpr std::int64_t kMaxTimelineCells = 50'000'000;
// Automatic bins: the first width, and the most bins a run is cut into before they are made
// twice as wide (so a run ends with 200 to 400 bins of 1 ms x 2^k, or fewer of 1 ms).
inline constexpr Time kFirstAutomaticBin = Time::milliseconds(1);
inline constexpr std::int64_t kMaxAutomaticBins = 400;

struct TimelineOptions {
  // Fixed bins of this width; zero: automatic (kFirstAutomaticBin, doubled as the run grows).
  Time bin;
  std::int64_t max_cells = kMaxTimelineCells;
};

// Fixed bins that would need more than max_cells cells. Not an mfabric::Error: those are
// located in the input file on their way out of a run, and this one belongs to whoever chose the
// bin (simulate's --bin), which catches it and says so.
class TimelineTooFine : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LinkTimeline {
 public:
  // Channels for the table's topology links. The table must outlive the timeline while bytes
  // are added (a circuit's fibres are looked up in it); reading needs no table.
  // mfabric::Error for a negative bin or max_cells below 1.
  LinkTimeline(const LinkTable& links, const TimelineOptions& options);

  // Channel c carried `bps` from t0 to t1 (picoseconds, t0 <= t1).
  void add_rate(ChannelId c, std::int64_t t0, std::int64_t t1, double bps) {
    if (t1 <= t0 || !(bps > 0)) return;
    if (static_cast<std::size_t>(c) < open_.size()) {
      charge(c, t0, t1, bps * kBytesPerBitPs);
    } else {
      charge_circuit(c, t0, t1, bps * kBytesPerBitPs);
    }
  }
  // Channel c carried `bytes` at an even pace from t0 to t1 (a packet on the wire); all of it in
  // t0's bin when t0 == t1.
  void add_bytes(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes);
  // Channel `to` has carried what channel `from` has, so far (the flow backend leaves a PCIe
  // channel that mirrors its NIC's cable out of routes: what it carried is the cable's).
  void copy(ChannelId from, ChannelId to);
  // Adds another timeline's bytes, channel by channel (the packet backend's two parts). Both
  // must have the same channels and either both automatic bins (the finer is coarsened first)
  // or the same fixed bin; `other` must be closed.
  void add(const LinkTimeline& other);
  // Every open bin joins the cells (TimelineTooFine if fixed bins then need more than
  // max_cells): for readers of bin_bytes(). Charging again opens bins again.
  void close();

  Time bin() const { return Time::picoseconds(bin_ps_); }
  bool automatic() const { return automatic_; }
  // Topology channels: 2 x topology links.
  std::size_t channels() const { return open_.size(); }
  // Bins from time 0 to the end of the last one holding bytes.
  std::int64_t bins() const;
  // Bytes channel c carried in bin b.
  double bytes(ChannelId c, std::int64_t b) const;
  // Once closed, every channel's bytes in bin b, by channel; empty when no channel carried any
  // (std::logic_error while bins are open).
  std::span<const double> bin_bytes(std::int64_t b) const;
  // Bytes channel c carried over the whole run.
  double total_bytes(ChannelId c) const;
  // Cells held now (at most max_cells), open bins not counted.
  std::int64_t cells() const { return cells_; }

 private:
  static constexpr double kBytesPerBitPs = 1e-12 / 8.0;
  struct Open {
    std::int64_t bin = -1;  // -1: none
    double bytes = 0;
  };

  // Adds bytes at `bytes_per_ps` over [t0, t1) to channel c (of the topology): to its open bin
  // if the interval is inside it, else through spread().
  void charge(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes_per_ps) {
    closed_ = false;
    Open& open = open_[static_cast<std::size_t>(c)];
    const std::int64_t start = open.bin * bin_ps_;
    if (open.bin >= 0 && t0 >= start && t1 <= start + bin_ps_) {
      open.bytes += static_cast<double>(t1 - t0) * bytes_per_ps;
      return;
    }
    spread(c, t0, t1, bytes_per_ps);
  }
  // A circuit channel's charge, on the fibres of its NICs.
  void charge_circuit(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes_per_ps);
  // The open bin joins the cells, and so do the bins of [t0, t1) but its last, which becomes
  // the open bin.
  void spread(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes_per_ps);
  // Channel c's open bin joins the cells.
  void flush(ChannelId c);
  // Cells for bins [first, last]; false when automatic bins were made wider first (every bin
  // index is then out of date: the caller works them out again). TimelineTooFine for fixed bins
  // beyond max_cells.
  bool reserve(std::int64_t first, std::int64_t last);
  // Bins twice as wide: each pair of bins added together, open bins moved along.
  void coarsen();
  // The fibre channels a circuit channel's bytes go to.
  std::array<ChannelId, 2> fibres(ChannelId c);
  [[noreturn]] void too_fine(std::int64_t at_bin) const;

  const LinkTable* links_;
  std::int64_t bin_ps_;
  bool automatic_;
  std::int64_t max_cells_;
  std::int64_t cells_ = 0;
  bool closed_ = true;
  std::vector<Open> open_;                         // per channel
  std::vector<std::vector<double>> cells_by_bin_;  // [bin][channel]; empty: no bytes in the bin
  // Per node: a NIC's fibre to its optical device (OCS or patch panel), or kNoLink.
  std::vector<fabric::LinkId> fibre_of_;
  // Per circuit-slot channel: the fibre channels its bytes went to last (a packet port of a torn
  // down circuit still drains after its slot is free).
  std::vector<std::array<ChannelId, 2>> circuit_fibres_;
};

// A backend that counts every channel's bytes per time bin offers this (Backend::timeline(),
// backend.h).
class TimelineRecorder {
 public:
  virtual ~TimelineRecorder() = default;

  // Starts counting every channel's bytes per time bin from now on.
  virtual void record_timeline(const TimelineOptions& options) = 0;
  // The bins counted up to now, handed over closed (counting stops); nullopt when not counting.
  virtual std::optional<LinkTimeline> take_timeline() = 0;
};

}  // namespace mfabric::net
