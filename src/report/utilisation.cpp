#include "report/utilisation.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>

#include "core/output_text.h"
#include "core/provenance.h"

namespace mfabric::report {
namespace {

const net::LinkTimeline& timeline_of(const sim::RunResult& result) {
  if (!result.timeline) throw std::invalid_argument("utilisation: the run counted no timeline");
  return *result.timeline;
}

// Bins of a run: up to its end, and up to the last byte counted (never later, but a report must
// not lose one).
std::int64_t bin_count(const net::LinkTimeline& tl, Time end) {
  const std::int64_t width = tl.bin().ps();
  return std::max((end.ps() + width - 1) / width, tl.bins());
}

// The run's end, unless bytes were counted in a bin after the one it ends in: then that bin's.
Time end_of(const net::LinkTimeline& tl, Time makespan) {
  const std::int64_t width = tl.bin().ps();
  if (tl.bins() <= (makespan.ps() + width - 1) / width) return makespan;
  return Time::picoseconds(tl.bins() * width);
}

// Seconds to the picosecond without trailing zeros: "0.032", "1.5", "0" (the long per-link file
// is a fifth shorter than with twelve decimals).
std::string seconds_text(std::int64_t ps) {
  std::string text = fmt::format("{:.12f}", static_cast<double>(ps) / 1e12);
  while (text.back() == '0')
    text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// Bin b's length in picoseconds: the bin, or what is left of the run in the last one.
std::int64_t length_ps(Time bin, Time end, std::int64_t b) {
  return std::min(bin.ps(), end.ps() - b * bin.ps());
}

}  // namespace

UtilisationSeries::UtilisationSeries(const fabric::Topology& topology, const sim::RunResult& result)
    : classes_(classify_links(topology)) {
  const net::LinkTimeline& tl = timeline_of(result);
  bin_ = tl.bin();
  end_ = end_of(tl, result.makespan);
  count_ = bin_count(tl, end_);
  bytes_.assign(classes_.classes.size(), std::vector<double>(static_cast<std::size_t>(count_), 0));
  for (std::int64_t b = 0; b < count_; ++b) {
    const std::span<const double> cells = tl.bin_bytes(b);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      bytes_[static_cast<std::size_t>(classes_.of_link[c / 2])][static_cast<std::size_t>(b)] +=
          cells[c];
    }
  }
}

double UtilisationSeries::length_s(std::int64_t b) const {
  return Time::picoseconds(length_ps(bin_, end_, b)).seconds();
}

double UtilisationSeries::bytes(std::size_t k, std::int64_t b) const {
  return bytes_[k][static_cast<std::size_t>(b)];
}

double UtilisationSeries::utilisation(std::size_t k, std::int64_t b) const {
  const double capacity = classes_.classes[k].capacity_bytes_per_s * length_s(b);
  return capacity > 0 ? bytes(k, b) / capacity : 0.0;
}

double UtilisationSeries::mean_utilisation(std::size_t k) const {
  double total = 0;
  for (double x : bytes_[k])
    total += x;
  const double capacity = classes_.classes[k].capacity_bytes_per_s * end_s();
  return capacity > 0 ? total / capacity : 0.0;
}

double UtilisationSeries::peak_utilisation(std::size_t k) const {
  double peak = 0;
  for (std::int64_t b = 0; b < bins(); ++b)
    peak = std::max(peak, utilisation(k, b));
  return peak;
}

void write_utilisation_csv(const UtilisationSeries& s, std::ostream& out) {
  out << provenance_csv_comment();
  out << "time_s,bin_s,class,bytes,utilisation\n";
  for (std::int64_t b = 0; b < s.bins(); ++b) {
    for (std::size_t k = 0; k < s.classes().classes.size(); ++k) {
      out << fmt::format("{},{},{},{:.0f},{:.6f}\n", seconds_text(s.start(b).ps()),
                         seconds_text(length_ps(s.bin(), s.end(), b)),
                         csv_field(s.classes().classes[k].id), s.bytes(k, b), s.utilisation(k, b));
    }
  }
}

void write_link_utilisation_csv(const fabric::Topology& topology, const sim::RunResult& result,
                                std::ostream& out) {
  out << provenance_csv_comment();
  const net::LinkTimeline& tl = timeline_of(result);
  const LinkClasses classes = classify_links(topology);
  const Time end = end_of(tl, result.makespan);
  const std::int64_t count = bin_count(tl, end);
  out << "time_s,bin_s,link,direction,from,to,class,bytes,utilisation\n";
  for (std::size_t c = 0; c < tl.channels(); ++c) {
    const auto channel = static_cast<net::ChannelId>(c);
    if (!(tl.total_bytes(channel) > 0)) continue;
    const std::size_t l = c / 2;
    const fabric::Link& link = topology.links()[l];
    const bool ab = c % 2 == 0;
    const std::string head = fmt::format(
        "{},{},{},{},{}", l, ab ? "ab" : "ba", csv_field(topology.name(ab ? link.a : link.b)),
        csv_field(topology.name(ab ? link.b : link.a)),
        csv_field(classes.classes[static_cast<std::size_t>(classes.of_link[l])].id));
    for (std::int64_t b = 0; b < count; ++b) {
      const double bytes = tl.bytes(channel, b);
      if (!(bytes > 0)) continue;
      const std::int64_t length = length_ps(tl.bin(), end, b);
      const double capacity = link.rate.bps() / 8.0 * Time::picoseconds(length).seconds();
      out << fmt::format("{},{},{},{:.0f},{:.6f}\n", seconds_text(b * tl.bin().ps()),
                         seconds_text(length), head, bytes, capacity > 0 ? bytes / capacity : 0.0);
    }
  }
}

}  // namespace mfabric::report
