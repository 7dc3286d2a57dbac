// Reading and writing a calibration's kernel tables (kernel_tables_yaml.h).
#include "workload/kernel_tables_yaml.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "workload/kernel_fit.h"
#include "workload/kernel_measurements.h"

namespace mfabric::workload {

namespace {

const std::vector<std::string> kTableFields = {"launch_forward", "launch_backward", "forward",
                                               "backward"};

Time launch_time(const Fields& f, const std::string& key) {
  const std::optional<Time> t = f.optional_time(key);
  if (!t) return Time::zero();
  if (*t < Time::zero() || *t > Time::from_seconds(1)) {
    throw Error(f.source(), f.field(key),
                fmt::format("expected a time from 0 to 1s per launch, got {}", to_string(*t)));
  }
  return *t;
}

KernelCurve parse_curve(const YAML::Node& node, const std::string& source, const std::string& at) {
  if (!node.IsSequence() || node.size() == 0) {
    throw Error(
        source, at,
        fmt::format("expected a list of [rows, dim, efficiency] points, got {}", describe(node)));
  }
  std::vector<KernelPoint> points;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string here = fmt::format("{}[{}]", at, i);
    const YAML::Node& p = node[i];
    if (!p.IsSequence() || p.size() != 3) {
      throw Error(source, here,
                  fmt::format("expected [rows, dim, efficiency], got {}", describe(p)));
    }
    double v[3];
    for (std::size_t k = 0; k < 3; ++k) {
      try {
        v[k] = p[k].as<double>();
      } catch (const YAML::Exception&) {
        throw Error(source, here, fmt::format("expected numbers, got {}", describe(p[k])));
      }
    }
    points.push_back({v[0], v[1], v[2]});
  }
  return with_context(source, at, [&] { return KernelCurve(points); });
}

}  // namespace

KernelCalibration parse_kernel_calibration(const YAML::Node& node, const std::string& source,
                                           const std::string& path) {
  std::vector<std::string> known = {"measured_on", "source", "measurements"};
  for (KernelOp op : kernel_ops())
    known.emplace_back(to_string(op));
  const Fields f(node, source, path, known);
  KernelCalibration c;
  const std::optional<std::string> gpu_name = f.optional_string("measured_on");
  if (!gpu_name) throw Error(source, f.field("measured_on"), "expected the GPU the tables are of");
  const GpuSpec& gpu = with_context(source, f.field("measured_on"),
                                    [&]() -> const GpuSpec& { return find_gpu(*gpu_name); });
  c.measured_on = gpu.name;
  c.source = f.optional_string("source").value_or("");
  if (f.has("measurements")) {
    const std::vector<KernelMeasurement> rows =
        parse_kernel_measurements(f.get("measurements"), source, f.field("measurements"));
    c.tables = with_context(source, f.field("measurements"),
                            [&] { return fit_kernel_calibration(rows, gpu, c.source).tables; });
  }
  for (KernelOp op : kernel_ops()) {
    const std::string key(to_string(op));
    if (!f.has(key)) continue;
    const Fields t(f.get(key), source, f.field(key), kTableFields);
    KernelTable table;
    table.launch_forward = launch_time(t, "launch_forward");
    table.launch_backward = launch_time(t, "launch_backward");
    if (!t.has("forward")) throw Error(source, t.field("forward"), "expected the forward's points");
    table.forward = parse_curve(t.get("forward"), source, t.field("forward"));
    if (t.has("backward"))
      table.backward = parse_curve(t.get("backward"), source, t.field("backward"));
    c.tables[op] = std::move(table);
  }
  if (c.tables.empty()) {
    throw Error(source, path, "expected tables (expert, dense, ...) or measurements to fit");
  }
  return c;
}

namespace {

void write_curve(std::string& out, const std::string& pad, const char* key,
                 const KernelCurve& curve) {
  out += fmt::format("{}{}:  # [rows, dim, efficiency]\n", pad, key);
  for (const KernelPoint& p : curve.points())
    out += fmt::format("{}  - [{:.0f}, {:.0f}, {:.6g}]\n", pad, p.rows, p.dim, p.efficiency);
}

std::string nanoseconds(Time t) {
  return fmt::format("{}ns", static_cast<long long>(std::llround(t.seconds() * 1e9)));
}

}  // namespace

std::string kernel_calibration_yaml(const KernelCalibration& kernels, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string out;
  out += fmt::format("{}measured_on: {}\n", pad, kernels.measured_on);
  if (!kernels.source.empty()) {
    YAML::Emitter e;
    e << kernels.source;
    out += fmt::format("{}source: {}\n", pad, e.c_str());
  }
  for (const auto& [op, table] : kernels.tables) {
    out += fmt::format("{}{}:\n", pad, to_string(op));
    out += fmt::format("{}  launch_forward: {}\n", pad, nanoseconds(table.launch_forward));
    if (!table.backward.empty()) {
      out += fmt::format("{}  launch_backward: {}\n", pad, nanoseconds(table.launch_backward));
    }
    write_curve(out, pad + "  ", "forward", table.forward);
    if (!table.backward.empty()) write_curve(out, pad + "  ", "backward", table.backward);
  }
  return out;
}

}  // namespace mfabric::workload
