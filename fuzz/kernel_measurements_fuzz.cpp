// Measured kernel times (workload::read_kernel_measurements, docs/calibration.md, "Measured
// kernels"): the three reference CSV formats, then the fit of what was read and the model's check
// of it. The input's repeat markers are expanded (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "workload/kernel_fit.h"
#include "workload/kernel_measurements.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mfabric;
  const std::optional<std::string> path =
      fuzz::expanded_scratch_file("measurements.csv", data, size);
  if (!path) return -1;
  fuzz::expect_only_mfabric_errors([&] {
    const workload::KernelMeasurements m = workload::read_kernel_measurements(*path);
    // The fit cross-validates over shapes: bounded as a calibration's measurements list is.
    if (m.rows.empty() || m.rows.size() > workload::kMaxKernelMeasurements) return;
    const workload::GpuSpec& gpu = workload::find_gpu("H200");
    const workload::KernelCalibration k = workload::fit_kernel_calibration(m.rows, gpu, *path);
    const workload::KernelModel model(gpu, &k, workload::Efficiency{});
    volatile std::size_t sink = workload::check_kernels(model, m.rows).size();
    (void)sink;
  });
  return 0;
}
