#include "report/sweep_surprises.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/error.h"
#include "core/units.h"
#include "report/compare_report.h"
#include "report/format.h"

namespace mfabric::report {
namespace {

// A field whose larger (or, `smaller_is_faster`, smaller) value should never slow a run.
struct MonotoneField {
  const char* path;
  bool smaller_is_faster;
  const char* expected;  // why the faster setting should be faster
};
constexpr MonotoneField kMonotone[] = {
    {"fabric.reconfiguration", true, "the OCS switches faster"},
    {"cluster.link", false, "the links are faster"},
    {"fabric.alpha", false, "more of each server's NICs are on the OCS"},
};

// The field's value as a number that grows with speed; none when it does not read.
std::optional<double> speed_order(const MonotoneField& f, const std::string& value) {
  try {
    const std::string path = f.path;
    if (path == "fabric.reconfiguration") return -static_cast<double>(parse_time(value).ps());
    if (path == "cluster.link") return parse_rate(value).bps();
    std::size_t used = 0;
    const double x = std::stod(value, &used);
    if (used != value.size()) return std::nullopt;
    return f.smaller_is_faster ? -x : x;
  } catch (const std::exception&) {
    return std::nullopt;  // Error, or std::stod's invalid_argument / out_of_range
  }
}

const std::string* field_value(const study::SweepPoint& p, const std::string& field) {
  for (const study::FieldValue& v : p.fields) {
    if (v.path == field) return &v.value;
  }
  return nullptr;
}

}  // namespace

std::vector<SweepSurprise> sweep_surprises(const study::SweepSpec& spec,
                                           const study::SweepResult& r) {
  std::vector<SweepSurprise> out;
  for (const MonotoneField& f : kMonotone) {
    if (std::find(spec.fields.begin(), spec.fields.end(), f.path) == spec.fields.end()) continue;
    // The finished points by the values of every other field, each with its speed order.
    std::map<std::vector<std::string>, std::vector<std::pair<double, const study::SweepRun*>>>
        groups;
    for (const study::SweepRun& run : r.runs) {
      if (!run.figures.error.empty() || !(run.figures.iteration_time_s > 0)) continue;
      const study::SweepPoint& p = spec.points.at(run.index);
      const std::string* value = field_value(p, f.path);
      if (value == nullptr) continue;
      const std::optional<double> order = speed_order(f, *value);
      if (!order) continue;
      std::vector<std::string> others;
      for (const std::string& field : spec.fields) {
        if (field == f.path) continue;
        const std::string* v = field_value(p, field);
        others.push_back(v ? *v : std::string());
      }
      groups[others].emplace_back(*order, &run);
    }
    for (auto& [others, runs] : groups) {
      std::stable_sort(runs.begin(), runs.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 1; i < runs.size(); ++i) {
        const study::SweepRun& slow = *runs[i - 1].second;  // the slower setting
        const study::SweepRun& fast = *runs[i].second;      // the faster setting
        if (runs[i].first == runs[i - 1].first) continue;
        const double a = fast.figures.iteration_time_s, b = slow.figures.iteration_time_s;
        if (a <= b * (1 + kSurpriseThreshold)) continue;
        out.push_back({f.path, fast.index, slow.index, a / b - 1, f.expected,
                       slowdown_causes(fast.figures, slow.figures)});
      }
    }
  }
  return out;
}

std::string sweep_surprise_text(const study::SweepSpec& spec, const SweepSurprise& x) {
  std::string text = fmt::format("point {} ({}) is {:.1f}% slower than point {} ({}), though {}",
                                 x.point, spec.points.at(x.point).label(), 100 * x.slower_by,
                                 x.than, spec.points.at(x.than).label(), x.expected);
  if (x.causes.empty()) {
    return text +
           "; the figures a sweep keeps show no cause (simulate --trace on both points shows "
           "where the time goes).";
  }
  return text + fmt::format("; what the runs show: {}.", join_strings(x.causes, "; "));
}

}  // namespace mfabric::report
