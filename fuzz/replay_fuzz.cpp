// Compute replay CSV (workload::ComputeReplay::load, docs/workload.md): op,layer,phase,duration.
// The input's repeat markers are expanded (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "workload/compute.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> path = fuzz::expanded_scratch_file("replay.csv", data, size);
  if (!path) return -1;
  fuzz::expect_only_mfabric_errors([&] {
    const workload::ComputeReplay replay = workload::ComputeReplay::load(*path);
    volatile const Time* sink = replay.find(workload::Op::Experts, 3, workload::Phase::Backward);
    (void)sink;
  });
  return 0;
}
