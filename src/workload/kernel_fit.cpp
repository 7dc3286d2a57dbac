// Fitting and checking kernel tables (kernel_fit.h).
#include "workload/kernel_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/error.h"

namespace mfabric::workload {

namespace {

// Candidate launch overheads: this many steps from 0 up to the smallest time per launch.
constexpr int kOverheadSteps = 128;

// One phase's observation: the time of the work and the coordinates of the table point.
struct PhaseSample {
  double seconds = 0;
  KernelWork work;
  double phase_work = 0;
  double memory_seconds = 0;  // the floor the op's bytes set (KernelModel::time)
  std::string group;
};

std::vector<PhaseSample> phase_samples(const std::vector<KernelMeasurement>& rows, bool backward,
                                       double memory_rate) {
  std::vector<PhaseSample> out;
  for (const KernelMeasurement& r : rows) {
    PhaseSample s;
    s.work = kernel_work(r.shape);
    s.group = r.group;
    s.memory_seconds = (backward ? 2 : 1) * s.work.memory_bytes / memory_rate;
    if (backward) {
      if (!r.forward_backward) continue;
      s.seconds = (*r.forward_backward - r.forward).seconds();
      s.phase_work = s.work.backward;
    } else {
      s.seconds = r.forward.seconds();
      s.phase_work = s.work.forward;
    }
    // A backward no longer than nothing is noise in a subtraction: it says nothing.
    if (s.seconds > 0 && s.phase_work > 0) out.push_back(s);
  }
  return out;
}

double point_efficiency(const PhaseSample& s, double overhead, double peak) {
  const double work_seconds = s.seconds - s.work.launches * overhead;
  if (work_seconds <= 0) return 1;
  return std::min(1.0, s.phase_work / (peak * work_seconds));
}

KernelCurve curve_of(const std::vector<PhaseSample>& samples, double overhead, double peak,
                     const std::string& left_out, std::size_t left_out_index) {
  std::vector<KernelPoint> points;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const PhaseSample& s = samples[i];
    if (!left_out.empty() ? s.group == left_out : i == left_out_index) continue;
    points.push_back({s.work.rows, s.work.dim, point_efficiency(s, overhead, peak)});
  }
  return KernelCurve(points);
}

double predict_seconds(const PhaseSample& s, const KernelCurve& curve, double overhead,
                       double peak) {
  return s.work.launches * overhead +
         std::max(s.phase_work / (peak * curve.efficiency(s.work.rows, s.work.dim)),
                  s.memory_seconds);
}

// The launch overhead that predicts held-out samples best (kernel_fit.h).
double fit_overhead(const std::vector<PhaseSample>& samples, double peak) {
  std::set<std::string> groups;
  for (const PhaseSample& s : samples)
    groups.insert(s.group);
  const bool by_group = groups.size() >= 2;
  if (!by_group && samples.size() < 2) return 0;
  double max_overhead = std::numeric_limits<double>::max();
  for (const PhaseSample& s : samples)
    max_overhead = std::min(max_overhead, s.seconds / s.work.launches);
  double best = 0;
  double best_score = std::numeric_limits<double>::max();
  for (int step = 0; step < kOverheadSteps; ++step) {
    const double c = max_overhead * step / kOverheadSteps;
    double score = 0;
    if (by_group) {
      for (const std::string& g : groups) {
        const KernelCurve curve = curve_of(samples, c, peak, g, 0);
        for (const PhaseSample& s : samples) {
          if (s.group != g) continue;
          const double e = std::log(predict_seconds(s, curve, c, peak) / s.seconds);
          score += e * e;
        }
      }
    } else {
      for (std::size_t i = 0; i < samples.size(); ++i) {
        const KernelCurve curve = curve_of(samples, c, peak, "", i);
        const double e = std::log(predict_seconds(samples[i], curve, c, peak) / samples[i].seconds);
        score += e * e;
      }
    }
    if (score < best_score) {  // strict: the smallest overhead among equals
      best_score = score;
      best = c;
    }
  }
  // Whole nanoseconds, as a calibration file writes it, so that a written table and the fitted
  // one are the same.
  return std::round(best * 1e9) * 1e-9;
}

}  // namespace

KernelTable fit_kernel_table(const std::vector<KernelMeasurement>& rows, const GpuSpec& gpu,
                             double memory_efficiency) {
  if (rows.empty()) throw Error("", "measurements", "no measurements to fit");
  const KernelOp op = rows.front().shape.op;
  for (const KernelMeasurement& r : rows) {
    if (r.shape.op != op) {
      throw Error(r.where, "op",
                  fmt::format("expected {} like the other rows, got {}", to_string(op),
                              to_string(r.shape.op)));
    }
  }
  const double peak = KernelModel(gpu, nullptr, Efficiency{}).peak(op);
  KernelTable table;
  if (!(memory_efficiency > 0 && memory_efficiency <= 1)) {
    throw Error(
        "", "memory_efficiency",
        fmt::format("expected a fraction of HBM bandwidth in (0, 1], got {}", memory_efficiency));
  }
  const double memory_rate = gpu.memory_bandwidth * memory_efficiency;
  const std::vector<PhaseSample> forward = phase_samples(rows, false, memory_rate);
  if (forward.empty()) {
    throw Error(rows.front().where, "forward", "no row has a usable forward time");
  }
  const double cf = fit_overhead(forward, peak);
  table.launch_forward = Time::from_seconds(cf);
  table.forward = curve_of(forward, cf, peak, "", forward.size());
  const std::vector<PhaseSample> backward = phase_samples(rows, true, memory_rate);
  if (!backward.empty()) {
    const double cb = fit_overhead(backward, peak);
    table.launch_backward = Time::from_seconds(cb);
    table.backward = curve_of(backward, cb, peak, "", backward.size());
  }
  return table;
}

namespace {

std::map<KernelOp, std::vector<KernelMeasurement>> by_op(
    const std::vector<KernelMeasurement>& rows) {
  std::map<KernelOp, std::vector<KernelMeasurement>> out;
  for (const KernelMeasurement& r : rows)
    out[r.shape.op].push_back(r);
  return out;
}

KernelCheck check_row(const KernelModel& model, const KernelMeasurement& r) {
  KernelCheck c;
  c.row = &r;
  c.predicted = model.time(r.shape);
  c.forward_error = c.predicted.forward.seconds() / r.forward.seconds() - 1;
  if (r.forward_backward) {
    c.forward_backward_error = c.predicted.total().seconds() / r.forward_backward->seconds() - 1;
  }
  return c;
}

// The element-wise table of the rows, if any were measured: its mean efficiency is the GEMMs'
// memory floor (KernelModel::time).
std::optional<KernelTable> elementwise_table(
    const std::map<KernelOp, std::vector<KernelMeasurement>>& ops, const GpuSpec& gpu) {
  const auto it = ops.find(KernelOp::Elementwise);
  if (it == ops.end()) return std::nullopt;
  return fit_kernel_table(it->second, gpu, 1);
}

double memory_efficiency_of(const std::optional<KernelTable>& copy) {
  return copy ? copy->forward.mean_efficiency() : 1;
}

}  // namespace

KernelCalibration fit_kernel_calibration(const std::vector<KernelMeasurement>& rows,
                                         const GpuSpec& gpu, const std::string& source) {
  KernelCalibration c;
  c.measured_on = gpu.name;
  c.source = source;
  const auto ops = by_op(rows);
  const std::optional<KernelTable> copy = elementwise_table(ops, gpu);
  const double memory = memory_efficiency_of(copy);
  for (const auto& [op, of_op] : ops) {
    if (op == KernelOp::Elementwise) {
      c.tables.emplace(op, *copy);
    } else {
      c.tables.emplace(op, fit_kernel_table(of_op, gpu, is_memory_bound(op) ? 1 : memory));
    }
  }
  return c;
}

std::vector<KernelCheck> check_kernels(const KernelModel& model,
                                       const std::vector<KernelMeasurement>& rows) {
  std::vector<KernelCheck> out;
  for (const KernelMeasurement& r : rows)
    out.push_back(check_row(model, r));
  return out;
}

std::vector<KernelCheck> leave_one_shape_out(const std::vector<KernelMeasurement>& rows,
                                             const GpuSpec& gpu) {
  // A shape is its op kind and its group: an FP8 GEMM and the bf16 GEMM of the same shape are
  // two shapes of two tables.
  std::set<std::pair<KernelOp, std::string>> shapes;
  for (const KernelMeasurement& r : rows)
    shapes.emplace(r.shape.op, r.group);
  const auto ops = by_op(rows);
  const std::optional<KernelTable> copy = elementwise_table(ops, gpu);
  const double memory = memory_efficiency_of(copy);
  std::vector<KernelCheck> out;
  for (const auto& [op, group] : shapes) {
    std::vector<KernelMeasurement> train;
    for (const KernelMeasurement& r : rows) {
      if (r.shape.op == op && r.group != group) train.push_back(r);
    }
    if (train.empty()) continue;  // the op kind's only shape
    KernelCalibration fitted;
    fitted.measured_on = gpu.name;
    fitted.tables.emplace(op, fit_kernel_table(train, gpu, is_memory_bound(op) ? 1 : memory));
    // The element-wise table sets the GEMMs' memory floor in the model too.
    if (op != KernelOp::Elementwise && copy) fitted.tables.emplace(KernelOp::Elementwise, *copy);
    const KernelModel model(gpu, &fitted, Efficiency{});
    for (const KernelMeasurement& r : rows) {
      if (r.shape.op == op && r.group == group) out.push_back(check_row(model, r));
    }
  }
  return out;
}

}  // namespace mfabric::workload
