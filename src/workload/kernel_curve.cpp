// KernelCurve: interpolation of measured efficiencies (kernel_curve.h).
#include "workload/kernel_curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace mfabric::workload {

KernelCurve::KernelCurve(const std::vector<KernelPoint>& points) {
  for (const KernelPoint& p : points) {
    // !(x > 0) also catches NaN.
    if (!(p.rows > 0) || !(p.dim > 0) || !std::isfinite(p.rows) || !std::isfinite(p.dim)) {
      throw Error("", "rows",
                  fmt::format("expected rows and dim > 0, got {} and {}", p.rows, p.dim));
    }
    if (!(p.efficiency > 0 && p.efficiency <= 1)) {
      throw Error("", "efficiency",
                  fmt::format("expected a fraction of peak in (0, 1], got {}", p.efficiency));
    }
  }
  std::vector<KernelPoint> sorted = points;
  std::sort(sorted.begin(), sorted.end(), [](const KernelPoint& a, const KernelPoint& b) {
    return a.dim != b.dim ? a.dim < b.dim : a.rows < b.rows;
  });
  for (std::size_t i = 0; i < sorted.size();) {
    // Average the repeats of one (dim, rows).
    std::size_t j = i;
    double sum = 0;
    while (j < sorted.size() && sorted[j].dim == sorted[i].dim && sorted[j].rows == sorted[i].rows)
      sum += sorted[j++].efficiency;
    const KernelPoint merged{sorted[i].rows, sorted[i].dim, sum / static_cast<double>(j - i)};
    if (lines_.empty() || lines_.back().dim != merged.dim) lines_.push_back({merged.dim, {}});
    lines_.back().points.push_back(merged);
    i = j;
  }
}

double KernelCurve::along(const Line& line, double rows) {
  const std::vector<KernelPoint>& p = line.points;
  if (rows <= p.front().rows) return p.front().efficiency;
  if (rows >= p.back().rows) return p.back().efficiency;
  const auto hi = std::upper_bound(p.begin(), p.end(), rows,
                                   [](double r, const KernelPoint& q) { return r < q.rows; });
  const KernelPoint& b = *hi;
  const KernelPoint& a = *(hi - 1);
  const double w = std::log(rows / a.rows) / std::log(b.rows / a.rows);
  return a.efficiency + (b.efficiency - a.efficiency) * w;
}

double KernelCurve::efficiency(double rows, double dim) const {
  if (lines_.empty()) throw Error("", "", "an empty kernel table has no efficiency");
  if (dim <= lines_.front().dim) return along(lines_.front(), rows);
  if (dim >= lines_.back().dim) return along(lines_.back(), rows);
  const auto hi = std::upper_bound(lines_.begin(), lines_.end(), dim,
                                   [](double d, const Line& l) { return d < l.dim; });
  const Line& b = *hi;
  const Line& a = *(hi - 1);
  const double w = std::log(dim / a.dim) / std::log(b.dim / a.dim);
  return along(a, rows) * (1 - w) + along(b, rows) * w;
}

double KernelCurve::mean_efficiency() const {
  if (lines_.empty()) throw Error("", "", "an empty kernel table has no efficiency");
  double sum = 0;
  std::size_t n = 0;
  for (const Line& l : lines_) {
    for (const KernelPoint& p : l.points)
      sum += p.efficiency;
    n += l.points.size();
  }
  return sum / static_cast<double>(n);
}

std::vector<KernelPoint> KernelCurve::points() const {
  std::vector<KernelPoint> out;
  for (const Line& l : lines_)
    out.insert(out.end(), l.points.begin(), l.points.end());
  return out;
}

}  // namespace mfabric::workload
