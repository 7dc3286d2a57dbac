// The `kernels:` section of a calibration file: fitted tables, or raw measurements fitted when
// the calibration is loaded (docs/calibration.md, "Measured kernels").
//
//   kernels:
//     measured_on: H200          # the GPU of the tables (its catalogue name)
//     source: ...                # provenance: where the measurements come from
//     expert:                    # an op kind (kernel_ops)
//       launch_forward: 35us     # per launch
//       launch_backward: 240us
//       forward: [[rows, dim, efficiency], ...]
//       backward: [[rows, dim, efficiency], ...]
//     measurements: [...]        # instead of (or besides) tables: rows to fit
//     (kernel_measurements.h)
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "workload/kernel_model.h"

namespace mfabric::workload {

// Errors name `source` and the field under `path`. Measurements are fitted against the GPU
// named by measured_on; a table given beside them wins for its op kind.
KernelCalibration parse_kernel_calibration(const YAML::Node& node, const std::string& source,
                                           const std::string& path);

// The section as YAML lines indented by `indent` spaces (the `kernels:` key not included).
std::string kernel_calibration_yaml(const KernelCalibration& kernels, int indent);

}  // namespace mfabric::workload
