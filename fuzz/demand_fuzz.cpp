// Region demand files for `mfabric plan --demand` (control::read_demand_file, docs/cli.md): JSON
// server x server bytes or EP tokens. The input's repeat markers are expanded (fuzz_support.h),
// which is how 100,000 levels of nesting and rows of a million entries reach the reader (issue
// 24). A demand that reads must be what the planners assume: symmetric, nothing on the diagonal,
// every pair within kMaxPairBytes, and pairs() summing to total().
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "control/demand.h"
#include "control/demand_file.h"
#include "fuzz_support.h"

namespace {

void check(const mfabric::control::ServerDemand& d) {
  using mfabric::fuzz::property_failed;
  const int n = d.servers();
  if (n < 1 || n > mfabric::control::kMaxRegionServers) {
    property_failed("a demand of " + std::to_string(n) + " servers");
  }
  for (int i = 0; i < n; ++i) {
    if (d.at(i, i) != 0) property_failed("demand on the diagonal at " + std::to_string(i));
    for (int j = i + 1; j < n; ++j) {
      const std::int64_t b = d.at(i, j);
      if (b != d.at(j, i) || b < 0 || b > mfabric::control::kMaxPairBytes) {
        property_failed("pair " + std::to_string(i) + "," + std::to_string(j) +
                        " is not symmetric or out of range");
      }
    }
  }
  // In 128 bits: 2^19 pairs of up to 2^50 bytes may sum past 2^63 (total() is then UBSan's).
  __int128 sum = 0;
  for (const mfabric::control::DemandPair& p : d.pairs()) {
    if (p.i >= p.j || p.bytes <= 0 || p.bytes != d.at(p.i, p.j)) property_failed("a bad pair");
    sum += p.bytes;
  }
  if (sum != d.total()) property_failed("pairs() does not sum to total()");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> path = fuzz::expanded_scratch_file("demand.json", data, size);
  if (!path) return -1;
  fuzz::expect_only_mfabric_errors([&] { check(control::read_demand_file(*path)); });
  return 0;
}
