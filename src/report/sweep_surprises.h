// A sweep's surprises (docs/sweep.md, "Surprises"): a point that should be faster than its
// neighbour along one field (a faster OCS, faster links, more OCS NICs per server) and is slower,
// with what the runs show of why (compare_report.h, slowdown_causes).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "study/sweep.h"
#include "study/sweep_driver.h"

namespace mfabric::report {

struct SweepSurprise {
  std::string field;      // the one field the two points differ in
  std::size_t point = 0;  // the point that should be faster
  std::size_t than = 0;   // its neighbour along `field`, which was faster
  double slower_by = 0;   // iteration time / the neighbour's - 1
  std::string expected;   // why it should be faster: "the OCS switches faster"
  std::vector<std::string> causes;
};

// For each field a faster setting of which should not slow a run (fabric.reconfiguration
// smaller, cluster.link or fabric.alpha larger), the finished points that agree on every other
// field, in order of that field: each one slower than the one before it by more than
// kSurpriseThreshold (compare_report.h). In field, then point order.
std::vector<SweepSurprise> sweep_surprises(const study::SweepSpec& spec,
                                           const study::SweepResult& r);
// "point 4 (fabric.reconfiguration=10us) is 2.1% slower than point 5
// (fabric.reconfiguration=100us), though the OCS switches faster; what the runs show: ...".
std::string sweep_surprise_text(const study::SweepSpec& spec, const SweepSurprise& x);

}  // namespace mfabric::report
