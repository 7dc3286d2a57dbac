// Fitting kernel tables to measured times, and checking them against the measurements
// (docs/calibration.md, "Measured kernels").
//
// Per op kind and phase, the launch overhead c is the one that predicts held-out shapes best
// (cross-validation over the shapes measured: each shape in turn is left out, the table built
// from the others predicts it, and the c with the least squared log error over all of them wins;
// rows instead of shapes when only one shape was measured). Given c, each measured row is one
// point of the table: efficiency = work / (peak x (time - launches x c)), capped at 1. Nothing
// is set by hand: the overhead comes from the data, the table is the data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workload/compute.h"
#include "workload/kernel_measurements.h"
#include "workload/kernel_model.h"

namespace mfabric::workload {

// Fits the table of rows' op kind (every row must be of that kind), with GEMMs' times floored
// at their bytes over `memory_efficiency` of HBM bandwidth (as KernelModel::time does). Throws
// mfabric::Error if no row has a usable time.
KernelTable fit_kernel_table(const std::vector<KernelMeasurement>& rows, const GpuSpec& gpu,
                             double memory_efficiency);

// A table for every op kind among the rows; the element-wise rows' mean efficiency is the
// GEMMs' memory floor.
KernelCalibration fit_kernel_calibration(const std::vector<KernelMeasurement>& rows,
                                         const GpuSpec& gpu, const std::string& source);

struct KernelCheck {
  const KernelMeasurement* row = nullptr;
  KernelTime predicted;
  double forward_error = 0;                      // predicted / measured - 1
  std::optional<double> forward_backward_error;  // where the row has forward+backward
};

// The model's error on each row.
std::vector<KernelCheck> check_kernels(const KernelModel& model,
                                       const std::vector<KernelMeasurement>& rows);

// Each shape (group) predicted by a table fitted without it, per op kind; op kinds measured at
// one shape only are left out (nothing to fit from).
std::vector<KernelCheck> leave_one_shape_out(const std::vector<KernelMeasurement>& rows,
                                             const GpuSpec& gpu);

}  // namespace mfabric::workload
