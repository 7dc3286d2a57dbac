// Compute replay CSV (workload::ComputeReplay::load, docs/workload.md): op,layer,phase,duration.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "workload/compute.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::string path = fuzz::write_scratch("replay.csv", fuzz::as_text(data, size));
  fuzz::expect_only_mfabric_errors([&] {
    const workload::ComputeReplay replay = workload::ComputeReplay::load(path);
    volatile const Time* sink = replay.find(workload::Op::Experts, 3, workload::Phase::Backward);
    (void)sink;
  });
  return 0;
}
