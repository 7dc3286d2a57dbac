// Link utilisation over time (docs/telemetry.md), from the bytes per channel per time bin a run
// counted (sim::RunResult::timeline, net/link_timeline.h): per link class (utilisation.csv, the
// report's figure) and per link (utilisation_links.csv). Utilisation is bytes carried over what
// the links could carry in the bin: bytes / (capacity x bin length), a fraction from 0 to 1,
// capacity at the links' built rates. Bins are [b x bin, (b + 1) x bin); the last one ends with
// the run.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "core/units.h"
#include "fabric/topology.h"
#include "report/link_classes.h"
#include "sim/engine.h"

namespace mfabric::report {

class UtilisationSeries {
 public:
  // The run must have counted a timeline (result.timeline); std::invalid_argument otherwise.
  UtilisationSeries(const fabric::Topology& topology, const sim::RunResult& result);

  const LinkClasses& classes() const { return classes_; }
  Time bin() const { return bin_; }
  std::int64_t bins() const { return static_cast<std::int64_t>(bytes_.empty() ? 0 : count_); }
  // Time from the start of the run to the start of bin b, in seconds, and bin b's length.
  Time start(std::int64_t b) const { return Time::picoseconds(b * bin_.ps()); }
  Time end() const { return end_; }
  double start_s(std::int64_t b) const { return start(b).seconds(); }
  double length_s(std::int64_t b) const;
  double end_s() const { return end_.seconds(); }
  // Bytes class k's links carried in bin b (both directions), and their utilisation.
  double bytes(std::size_t k, std::int64_t b) const;
  double utilisation(std::size_t k, std::int64_t b) const;
  // Over the whole run: bytes / (capacity x run time), and the highest bin.
  double mean_utilisation(std::size_t k) const;
  double peak_utilisation(std::size_t k) const;

 private:
  LinkClasses classes_;
  Time bin_;
  Time end_;
  std::int64_t count_ = 0;
  std::vector<std::vector<double>> bytes_;  // [class][bin]
};

// time_s,bin_s,class,bytes,utilisation: a row per bin and class, in time order (time_s: the
// bin's start; bin_s: its length; bytes over both directions of the class's links).
void write_utilisation_csv(const UtilisationSeries& series, std::ostream& out);

// time_s,bin_s,link,direction,from,to,class,bytes,utilisation: a row per directed link (as in
// links.csv: link id, "ab" or "ba") and bin in which it carried bytes, link by link; a bin
// missing for a link carried nothing. The run must have counted a timeline.
void write_link_utilisation_csv(const fabric::Topology& topology, const sim::RunResult& result,
                                std::ostream& out);

}  // namespace mfabric::report
