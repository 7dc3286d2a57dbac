// KernelCurve: the efficiency an op kind reaches as a function of its shape, read off measured
// points (docs/calibration.md, "Measured kernels").
//
// A point is (rows, dim, efficiency): rows is the parallel extent of the kernel (the tokens of a
// GEMM, the query rows of all heads of an attention), dim a second shape feature (a GEMM's weight
// elements, the head dimensions of an attention). Points of the same dim form a line; a line is
// interpolated linearly in log rows and held constant beyond its first and last point (a kernel
// with fewer rows than measured is taken as efficient as the smallest measured one: the launch
// overhead, not the table, carries the fixed cost). Between two lines the efficiencies mix
// linearly in log dim; beyond the outermost lines the nearest line holds. Points measured twice
// (the same dim and rows) are averaged.
#pragma once

#include <vector>

namespace mfabric::workload {

struct KernelPoint {
  double rows = 0;
  double dim = 0;
  double efficiency = 0;  // fraction of the GPU's peak, in (0, 1]
};

class KernelCurve {
 public:
  KernelCurve() = default;
  // Throws mfabric::Error for a point with rows or dim <= 0 or an efficiency outside (0, 1].
  explicit KernelCurve(const std::vector<KernelPoint>& points);

  bool empty() const { return lines_.empty(); }
  double efficiency(double rows, double dim) const;
  // The mean efficiency of the points (after merging): what a one-number reading of the table
  // (a bandwidth fraction, the optimizer step's) takes.
  double mean_efficiency() const;
  // The points after merging, ordered by dim, then rows.
  std::vector<KernelPoint> points() const;

 private:
  struct Line {
    double dim = 0;
    std::vector<KernelPoint> points;  // by rows
  };
  static double along(const Line& line, double rows);

  std::vector<Line> lines_;  // by dim
};

}  // namespace mfabric::workload
