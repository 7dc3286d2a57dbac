#include "report/sweep_figure.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "core/units.h"
#include "report/html_page.h"

namespace mfabric::report {
namespace {

constexpr const char* kFigurePageField = "report.html";

struct MetricText {
  const char* id;     // of the <figure>
  const char* title;  // of its caption
  const char* ylabel;
  const char* unit;  // of its tics (tic_label)
};

MetricText text_of(SweepMetric metric, fabric::CostConvention convention) {
  switch (metric) {
    case SweepMetric::IterationTime:
      return {"plot-iteration-time", "Iteration time", "iteration time", "s"};
    case SweepMetric::TokensPerSecond:
      return {"plot-tokens", "Training throughput", "tokens/s", "count"};
    case SweepMetric::TokensPerSecondPerMusd:
      break;
  }
  static const std::string paper =
      std::string("perf/$: tokens/s per million dollars of network cost (") +
      study::cost_convention_label(fabric::CostConvention::Paper) + ")";
  static const std::string built =
      std::string("perf/$: tokens/s per million dollars of network cost (") +
      study::cost_convention_label(fabric::CostConvention::Built) + ")";
  return {"plot-perf-per-dollar",
          convention == fabric::CostConvention::Built ? built.c_str() : paper.c_str(),
          "perf/$ (tokens/s per $M)", "count"};
}

std::optional<double> metric_of(const study::CompareRun& f, SweepMetric metric,
                                fabric::CostConvention convention) {
  std::optional<double> v;
  switch (metric) {
    case SweepMetric::IterationTime:
      v = f.iteration_time_s;
      break;
    case SweepMetric::TokensPerSecond:
      v = f.tokens_per_s;
      break;
    case SweepMetric::TokensPerSecondPerMusd:
      v = tokens_per_musd(f, convention);
      break;
  }
  // Zero is "not measured" (a run without tokens, a fabric without a price).
  if (v && *v > 0 && std::isfinite(*v)) return v;
  return std::nullopt;
}

const std::string* value_in(const study::SweepPoint& p, const std::string& path) {
  for (const study::FieldValue& f : p.fields) {
    if (f.path == path) return &f.value;
  }
  return nullptr;
}

// A field's value as a legend shows it: a name or a value with its unit says what it is
// ("fat-tree", "400G"); a bare number or boolean does not, and gets its field's last name
// ("expert_gemm=0.5", "micro_batch=8").
std::string readable(const std::string& path, const std::string& value) {
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::set<std::string> kBooleans{"true", "false", "yes", "no", "on", "off"};
  const std::optional<AxisNumbers> number = axis_numbers({value});
  const bool bare = value.empty() || kBooleans.count(lower) > 0 || (number && number->unit.empty());
  if (!bare) return value;
  const std::size_t dot = path.rfind('.');
  return (dot == std::string::npos ? path : path.substr(dot + 1)) + "=" + value;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts)
    out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The fields other than x whose value is one per value of x and that take more than one value
// over the points on the axis: they move with x (the alpha study's NIC count and EPS rate, the
// scale study's global batch), so they are part of a line, not what tells lines apart.
std::set<std::string> fields_moving_with_x(const study::SweepSpec& spec, const SweepAxis& axis) {
  std::set<std::string> out;
  for (const std::string& field : spec.fields) {
    if (field == spec.x) continue;
    std::map<double, std::optional<std::string>> at_x;
    std::set<std::optional<std::string>> seen;
    bool one_per_x = true;
    for (std::size_t k = 0; k < spec.points.size() && one_per_x; ++k) {
      if (!std::isfinite(axis.values[k])) continue;
      const std::string* v = value_in(spec.points[k], field);
      const std::optional<std::string> value = v ? std::optional(*v) : std::nullopt;
      seen.insert(value);
      const auto [it, added] = at_x.emplace(axis.values[k], value);
      one_per_x = added || it->second == value;
    }
    if (one_per_x && seen.size() > 1) out.insert(field);
  }
  return out;
}

// The x range a reference that does not set x is drawn over: the axis's points, a little
// around a single one.
std::optional<std::pair<double, double>> axis_span(const SweepAxis& axis) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : axis.values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return std::nullopt;
  if (lo == hi) {
    const double half = axis.unit == "category" || lo == 0 ? 0.5 : std::fabs(lo) * 0.1;
    return std::pair(lo - half, hi + half);
  }
  return std::pair(lo, hi);
}

// A series: the points on the axis that agree on every field but x and those moving with it.
struct Series {
  std::map<std::string, std::string> key;  // path -> value
  bool reference = false;                  // of the heatmap's reference
  std::vector<std::size_t> points;
};

}  // namespace

std::optional<double> tokens_per_musd(const study::CompareRun& r,
                                      fabric::CostConvention convention) {
  const double cost = r.cost(convention).total();
  if (cost > 0 && r.tokens_per_s > 0) return r.tokens_per_s / cost * 1e6;
  return std::nullopt;
}

std::vector<SweepLine> sweep_lines(const study::SweepSpec& spec, const study::SweepResult& r,
                                   const SweepAxis& axis, SweepMetric metric) {
  const std::size_t n = spec.points.size();
  if (axis.values.size() != n) return {};
  std::vector<const study::CompareRun*> run_of(n, nullptr);
  for (const study::SweepRun& run : r.runs) {
    if (run.index < n) run_of[run.index] = &run.figures;
  }
  const auto value_at = [&](std::size_t k) -> std::optional<double> {
    if (run_of[k] == nullptr || !run_of[k]->error.empty()) return std::nullopt;
    return metric_of(*run_of[k], metric, spec.cost_convention);
  };
  const auto fabric_of = [&](const std::vector<std::size_t>& points) {
    for (std::size_t k : points) {
      if (run_of[k] != nullptr && !run_of[k]->fabric.empty()) return run_of[k]->fabric;
    }
    return spec.name;
  };

  const std::set<std::string> moving = fields_moving_with_x(spec, axis);
  std::vector<Series> series;
  std::map<std::pair<std::map<std::string, std::string>, bool>, std::size_t> series_index;
  std::vector<std::size_t> across;  // references that do not set x
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(axis.values[k])) {
      across.push_back(k);
      continue;
    }
    Series s;
    for (const study::FieldValue& f : spec.points[k].fields) {
      if (f.path != spec.x && moving.count(f.path) == 0) s.key[f.path] = f.value;
    }
    s.reference = spec.heatmap && study::is_reference(spec.points[k], *spec.heatmap);
    const auto [it, added] = series_index.try_emplace({s.key, s.reference}, series.size());
    if (added) series.push_back(std::move(s));
    series[it->second].points.push_back(k);
  }
  // The fields that tell the series apart name them; a field every series sets alike does not.
  const auto value_in_key = [](const Series& s,
                               const std::string& path) -> std::optional<std::string> {
    const auto it = s.key.find(path);
    return it == s.key.end() ? std::nullopt : std::optional(it->second);
  };
  std::vector<std::string> telling;  // in the sweep file's order
  for (const std::string& field : spec.fields) {
    const bool differs = std::any_of(series.begin(), series.end(), [&](const Series& s) {
      return value_in_key(s, field) != value_in_key(series.front(), field);
    });
    if (differs) telling.push_back(field);
  }

  std::vector<SweepLine> series_lines, reference_lines;
  for (const Series& s : series) {
    SweepLine line;
    std::vector<std::string> parts;
    for (const std::string& field : telling) {
      if (const auto v = value_in_key(s, field)) parts.push_back(readable(field, *v));
    }
    line.title = parts.empty() ? fabric_of(s.points) : joined(parts);
    line.reference = s.reference;
    if (s.reference) line.title += " (reference)";
    for (std::size_t k : s.points) {
      if (const auto y = value_at(k)) line.points.emplace_back(axis.values[k], *y);
    }
    if (line.points.empty()) continue;
    std::stable_sort(line.points.begin(), line.points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    (s.reference ? reference_lines : series_lines).push_back(std::move(line));
  }
  const std::optional<std::pair<double, double>> span = axis_span(axis);
  for (std::size_t k : across) {
    const std::optional<double> y = value_at(k);
    if (!y || !span) continue;
    // Its own fields name it; those it shares with every series say nothing, and those that
    // tell the series apart say which series it stands next to.
    std::vector<std::string> own, context;
    for (const study::FieldValue& f : spec.points[k].fields) {
      const bool tells = std::find(telling.begin(), telling.end(), f.path) != telling.end();
      // A field that does not tell the series apart has the first one's value in all of them.
      const bool shared = !series.empty() && value_in_key(series.front(), f.path) == f.value;
      if (tells) {
        context.push_back(readable(f.path, f.value));
      } else if (!shared) {
        own.push_back(readable(f.path, f.value));
      }
    }
    SweepLine line;
    line.title = (own.empty() ? fabric_of({k}) : joined(own)) + " (reference)" +
                 (context.empty() ? "" : ", " + joined(context));
    line.reference = true;
    line.across_axis = true;
    line.points = {{span->first, *y}, {span->second, *y}};
    reference_lines.push_back(std::move(line));
  }
  series_lines.insert(series_lines.end(), std::make_move_iterator(reference_lines.begin()),
                      std::make_move_iterator(reference_lines.end()));
  return series_lines;
}

std::string tic_label(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "";
  if (unit == "s") {
    if (value == 0) return "0s";
    // Below a picosecond a time would print as "0s"; beyond the simulator's range it has none.
    if (value >= 1e-12) {
      try {
        return to_string(Time::from_seconds(value));
      } catch (const Error&) {
      }
    }
    return fmt::format("{:g}s", value);
  }
  if (unit == "Gbit/s" && value >= 0) return link_label(Rate::gbps(value));
  if (unit == "B" && value >= 0 && value < 9e18) return to_string(Bytes(std::llround(value)));
  if (unit == "count") {
    static constexpr std::array<std::pair<double, const char*>, 6> kPrefixes{
        {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
    const double size = std::fabs(value);
    if (size < 1e21) {
      for (const auto& [scale, prefix] : kPrefixes) {
        if (size >= scale) return fmt::format("{:g}{}", value / scale, prefix);
      }
    }
    return fmt::format("{:g}", value);
  }
  return fmt::format("{}", value);
}

std::optional<ValueScale> value_scale(const std::vector<double>& values, const std::string& unit) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (v < 0) return std::nullopt;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return std::nullopt;
  ValueScale scale;
  // Beyond 1e+-300 a power of ten at or around the values may not be a normal double.
  if (lo > 0 && hi / lo > 10 && lo >= 1e-300 && hi <= 1e300) {
    scale.logarithmic = true;
    int first = static_cast<int>(std::floor(std::log10(lo)));
    int last = static_cast<int>(std::ceil(std::log10(hi)));
    // log10 of a value a hair off a power of ten may land on the wrong side of it.
    while (std::pow(10.0, first) > lo)
      --first;
    while (std::pow(10.0, last) < hi)
      ++last;
    const int every = (last - first + 7) / 8;
    last = first + every * ((last - first + every - 1) / every);
    for (int e = first; e <= last; e += every) {
      const double at = std::pow(10.0, e);
      scale.tics.push_back({tic_label(at, unit), at});
    }
    scale.low = std::pow(10.0, first);
    scale.high = std::pow(10.0, last);
    return scale;
  }
  if (hi == 0) {
    scale.high = 1;
    scale.tics = {{tic_label(0, unit), 0}, {tic_label(1, unit), 1}};
    return scale;
  }
  // About five steps: the first round step at or above a fifth of the greatest value.
  const double rough = hi / 5;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  if (!std::isfinite(power) || power <= 0) return std::nullopt;
  double step = power * 10;
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (power * m >= rough) {
      step = power * m;
      break;
    }
  }
  const double steps = std::ceil(hi / step);
  if (!std::isfinite(step * steps) || steps > 10) return std::nullopt;
  for (int i = 0; i <= static_cast<int>(steps); ++i) {
    const double at = step * i;
    scale.tics.push_back({tic_label(at, unit), at});
  }
  scale.high = step * steps;
  return scale;
}

std::string sweep_figure_script(const study::SweepSpec& spec, const study::SweepResult& r,
                                const SweepAxis& axis, SweepMetric metric) {
  const std::vector<SweepLine> lines = sweep_lines(spec, r, axis, metric);
  if (lines.empty()) return "";
  const MetricText text = text_of(metric, spec.cost_convention);
  std::vector<double> ys;
  for (const SweepLine& line : lines) {
    for (const auto& [x, y] : line.points)
      ys.push_back(y);
  }
  std::string script =
      gnuplot_svg_canvas(960, static_cast<int>(420 + 20 * std::min<std::size_t>(lines.size(), 8)));
  script += fmt::format(
      "set border 3 lc rgb '#444444'\nset xtics nomirror out; set ytics nomirror out\n"
      "set grid back lc rgb '#dddddd'\n"
      "set key outside bottom center horizontal maxrows 4\n"
      "set xlabel {}\nset ylabel {}\n",
      gnuplot_string(spec.x), gnuplot_string(text.ylabel));
  if (axis.logarithmic) script += "set logscale x 10\n";
  const std::string x_tics = gnuplot_tics(axis.tics);
  if (!x_tics.empty()) script += fmt::format("set xtics ({})\n", x_tics);
  if (axis.unit == "category") {
    script += fmt::format("set xrange [-0.5:{}]\n",
                          gnuplot_number(static_cast<double>(axis.categories.size()) - 0.5));
  } else {
    script += "set offsets graph 0.03, graph 0.03, 0, 0\n";
  }
  if (const std::optional<ValueScale> y = value_scale(ys, text.unit)) {
    // A hair beyond the end tics: gnuplot 5.4 drops a tic that sits exactly at the end of a
    // log axis (it rounds the end; 100 at the bottom of [100:1e5] is lost).
    constexpr double kMargin = 1 + 1e-9;
    if (y->logarithmic) script += "set logscale y 10\n";
    script += fmt::format("set yrange [{}:{}]\nset ytics ({})\n",
                          gnuplot_number(y->logarithmic ? y->low / kMargin : y->low),
                          gnuplot_number(y->high * kMargin), gnuplot_tics(y->tics));
  } else {
    // Numbers no round step fits: gnuplot's own tics, from 0 (none of these is negative).
    script += "set yrange [0:*]\nset format y '%g'\n";
  }
  const std::size_t across = static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(), [](const SweepLine& l) { return l.across_axis; }));
  std::string plot = "plot ";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const SweepLine& line = lines[i];
    std::vector<std::vector<double>> rows;
    for (const auto& [x, y] : line.points)
      rows.push_back({x, y});
    script += gnuplot_data_block(fmt::format("l{}", i), rows);
    std::string style = "with linespoints lw 2 pt 7";
    if (line.across_axis) {
      // A lone reference is dark, apart from the series' colours.
      style = across == 1 ? "with lines lw 2 dt 2 lc rgb '#333333'" : "with lines lw 2 dt 2";
    } else if (line.reference) {
      style = "with linespoints lw 2 dt 2 pt 6";
    }
    plot += fmt::format("{}$l{} using 1:2 {} title {}", i > 0 ? ", " : "", i, style,
                        gnuplot_string(line.title));
  }
  return script + plot + "\n";
}

std::string sweep_figure_html(const study::SweepSpec& spec, const study::SweepResult& r,
                              const SweepAxis& axis, SweepMetric metric) {
  const MetricText text = text_of(metric, spec.cost_convention);
  std::string out = fmt::format(
      "<figure id=\"{}\">\n<figcaption><strong>{}.</strong> A line per combination of the other "
      "fields (fields that change with the x field, one value per value of x, stay on its "
      "line); dashed, the reference runs, across the axis when they do not set the x field. An "
      "axis over more than a decade is logarithmic. Failed points are left out.</figcaption>\n",
      text.id, html_text(text.title));
  const std::string script = sweep_figure_script(spec, r, axis, metric);
  if (script.empty()) {
    out += "<p class=\"missing\">Not drawn: no point has this figure.</p>\n</figure>\n";
    return out;
  }
  out += inline_svg(run_gnuplot(script, kFigurePageField), std::string(text.id) + "-");
  out += "\n</figure>\n";
  return out;
}

}  // namespace mfabric::report
