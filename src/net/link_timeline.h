// Bytes per directed channel per time bin (docs/telemetry.md): what utilisation over time is
// made of. A backend that records one charges its channels' bytes as it moves them: the flow
// backend when a channel's load changes (a load r held from t0 to t1 adds r x the overlap to
// each bin it spans), the packet backend per packet on the wire. Memory is one cell per channel
// and bin from the first bin in which the channel carried anything to the last, never more than
// `max_cells`: automatic bins are made twice as wide when a run outgrows them, fixed bins are
// refused (TimelineTooFine).
//
// Circuits are counted on the fibres they cross: a circuit slot's ids are reused by one NIC pair
// after another (link_table.h), but light from NIC a to NIC b runs over a's fibre to the optical
// device and over b's fibre from it, and those are topology links that stay what they are. So a
// circuit's bytes a -> b are charged to a's fibre (towards the device) and to b's fibre (from
// it); the timeline has rows for topology channels only.
#pragma once

#include <array>
#include <cstdint>
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
  // Rows for the table's topology channels. The table must outlive the timeline while bytes are
  // added (a circuit's fibres are looked up in it); reading needs no table.
  // mfabric::Error for a bin that is negative or max_cells below 1.
  LinkTimeline(const LinkTable& links, const TimelineOptions& options);

  // Channel c carried `bps` from t0 to t1 (picoseconds, t0 <= t1).
  void add_rate(ChannelId c, std::int64_t t0, std::int64_t t1, double bps);
  // Channel c carried `bytes` at an even pace from t0 to t1 (a packet on the wire); all of it in
  // t0's bin when t0 == t1.
  void add_bytes(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes);
  // Channel `to`'s row becomes a copy of channel `from`'s (the flow backend leaves a PCIe channel
  // that mirrors its NIC's cable out of routes: what it carried is the cable's).
  void copy(ChannelId from, ChannelId to);
  // Adds another timeline's bytes, channel by channel (the packet backend's two parts). Both
  // must have the same rows and either both automatic bins (the finer is coarsened first) or
  // the same fixed bin.
  void add(const LinkTimeline& other);

  Time bin() const { return Time::picoseconds(bin_ps_); }
  bool automatic() const { return automatic_; }
  // Topology channels: 2 x topology links.
  std::size_t channels() const { return rows_.size(); }
  // Bins from time 0 to the end of the last one holding bytes.
  std::int64_t bins() const;
  // Bytes channel c carried in bin b; 0 outside its recorded bins.
  double bytes(ChannelId c, std::int64_t b) const;
  // Channel c's recorded bins: bytes per bin from bin first_bin(c) on (empty: none).
  std::int64_t first_bin(ChannelId c) const { return rows_[static_cast<std::size_t>(c)].first; }
  std::span<const double> row(ChannelId c) const {
    return rows_[static_cast<std::size_t>(c)].bytes;
  }
  // Bytes channel c carried over the whole run.
  double total_bytes(ChannelId c) const;
  // Cells held now (at most max_cells).
  std::int64_t cells() const { return cells_; }

 private:
  struct Row {
    std::int64_t first = 0;     // the bin of bytes[0]
    std::vector<double> bytes;  // empty: nothing carried yet
  };
  // Channel c's row covers bins [first, last], growing it (and coarsening automatic bins when
  // the run or the cells outgrow them: first and last are then divided accordingly).
  Row& cover(ChannelId c, std::int64_t& first, std::int64_t& last);
  // Bins twice as wide: each row's pairs of bins added together.
  void coarsen();
  // The rows bytes of channel c go to: itself, or a circuit's two fibres.
  std::array<ChannelId, 2> targets(ChannelId c);
  // Adds bytes at `bytes_per_ps` over [t0, t1) to row `c` (a topology channel).
  void spread(ChannelId c, std::int64_t t0, std::int64_t t1, double bytes_per_ps);

  const LinkTable* links_;
  std::int64_t bin_ps_;
  bool automatic_;
  std::int64_t max_cells_;
  std::int64_t cells_ = 0;
  std::vector<Row> rows_;
  // Per node: a NIC's fibre to its optical device (OCS or patch panel), or kNoLink.
  std::vector<fabric::LinkId> fibre_of_;
  // Per circuit-slot channel: the fibre channels its bytes went to last (a packet port of a torn
  // down circuit still drains after its slot is free).
  std::vector<std::array<ChannelId, 2>> circuit_targets_;
};

}  // namespace mfabric::net
