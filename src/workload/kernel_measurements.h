// Measured kernel times: the rows a kernel calibration is fitted to and checked against
// (docs/calibration.md, "Measured kernels").
//
// Read from the reference measurement files (data/measurements/: the H200's MoE kernels, its
// permutation, its FP8 GEMMs, optimizer step and MLA attention; each format recognised by its
// header) or from a calibration's `kernels.measurements` list (what scripts/measure-gpu.py
// writes). Rows the model does not cover (a grouped-GEMM launch, whose loop form is measured
// beside it) are returned as skipped, with the reason.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "core/units.h"
#include "workload/kernel_model.h"

namespace mfabric::workload {

// A calibration's `measurements:` list holds at most this many rows: the fit cross-validates over
// its shapes (rows x shapes x 128 candidate overheads), and a measurement run writes a few dozen.
inline constexpr std::size_t kMaxKernelMeasurements = 500;

struct KernelMeasurement {
  KernelShape shape;
  std::string group;  // the shape's name: rows of one group differ in tokens only
  Time forward;
  std::optional<Time> forward_backward;
  std::string where;  // file:line
};

struct KernelMeasurements {
  std::vector<KernelMeasurement> rows;
  std::vector<std::string> skipped;  // "file:line: why"
};

// One reference CSV (its format from its header), or a calibration file (.yaml / .yml) whose
// `kernels.measurements` list is read; throws mfabric::Error naming the file, line and column (or
// field).
KernelMeasurements read_kernel_measurements(const std::string& path);

// A calibration's `kernels.measurements` list: maps {op, group, forward, forward_backward, and
// the op's shape fields (kernel_shape_fields)}. Errors name `source` and the field under `path`.
std::vector<KernelMeasurement> parse_kernel_measurements(const YAML::Node& list,
                                                         const std::string& source,
                                                         const std::string& path);

// The YAML fields each op kind's shape takes, in the order a writer gives them.
const std::vector<std::string>& kernel_shape_fields(KernelOp op);

}  // namespace mfabric::workload
