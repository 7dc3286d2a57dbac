#include "report/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <ostream>

#include "core/error.h"
#include "core/json_text.h"
#include "core/output_files.h"
#include "core/output_text.h"
#include "core/provenance.h"
#include "core/units.h"
#include "core/yaml_fields.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/html_page.h"
#include "report/sweep_figure.h"
#include "report/sweep_heatmap.h"
#include "report/sweep_surprises.h"
#include "report/table.h"

namespace mfabric::report {
namespace {

constexpr const char* kSweepPageField = "report.html";

const std::string& x_value(const study::SweepSpec& spec, std::size_t k) {
  static const std::string none;
  for (const study::FieldValue& f : spec.points[k].fields) {
    if (f.path == spec.x) return f.value;
  }
  return none;
}

std::optional<double> plain_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string cell(double x, const char* format) {
  return std::isfinite(x) ? fmt::format(fmt::runtime(format), x) : std::string("n/a");
}

}  // namespace

std::optional<AxisNumbers> axis_numbers(const std::vector<std::string>& values) {
  const auto as_time = [](const std::string& t) -> std::optional<double> {
    try {
      return parse_time(t).seconds();
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  const auto as_rate = [](const std::string& t) -> std::optional<double> {
    try {
      return parse_rate(t).bps() / 1e9;
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  const auto as_size = [](const std::string& t) -> std::optional<double> {
    try {
      return static_cast<double>(parse_bytes(t).count());
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  const auto all = [&](const std::function<std::optional<double>(const std::string&)>& read,
                       const char* unit) -> std::optional<AxisNumbers> {
    AxisNumbers out{{}, unit};
    for (const std::string& v : values) {
      const std::optional<double> x = read(v);
      if (!x) return std::nullopt;
      out.values.push_back(*x);
    }
    return out;
  };
  if (values.empty()) return std::nullopt;
  if (auto n = all(plain_number, "")) return n;
  if (auto n = all(as_time, "s")) return n;
  if (auto n = all(as_rate, "Gbit/s")) return n;
  return all(as_size, "B");
}

SweepAxis sweep_axis(const study::SweepSpec& spec) {
  SweepAxis axis;
  const std::size_t n = spec.points.size();
  // A point that does not set x (a reference run, an extra point of another kind) has no place
  // on the axis.
  std::vector<std::string> set;
  for (std::size_t k = 0; k < n; ++k) {
    if (!x_value(spec, k).empty()) set.push_back(x_value(spec, k));
  }
  if (const std::optional<AxisNumbers> numbers = axis_numbers(set)) {
    axis.unit = numbers->unit;
    std::size_t next = 0;
    for (std::size_t k = 0; k < n; ++k) {
      axis.values.push_back(x_value(spec, k).empty() ? std::nan("") : numbers->values[next++]);
    }
  } else {
    axis.unit = "category";
    for (std::size_t k = 0; k < n; ++k) {
      const std::string& v = x_value(spec, k);
      if (v.empty()) {
        axis.values.push_back(std::nan(""));
        continue;
      }
      auto it = std::find(axis.categories.begin(), axis.categories.end(), v);
      if (it == axis.categories.end()) {
        axis.categories.push_back(v);
        it = axis.categories.end() - 1;
      }
      axis.values.push_back(static_cast<double>(it - axis.categories.begin()));
    }
    for (std::size_t i = 0; i < axis.categories.size(); ++i)
      axis.tics.push_back({axis.categories[i], static_cast<double>(i)});
    return axis;
  }
  std::vector<double> distinct;
  for (double v : axis.values) {
    if (std::isfinite(v)) distinct.push_back(v);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.empty()) return axis;
  axis.logarithmic = distinct.front() > 0 && distinct.back() / distinct.front() > 10;
  // A tic at each value while they fit (a dozen labels across the plot), else at every k-th.
  const std::size_t every = (distinct.size() + 11) / 12;
  for (std::size_t i = 0; i < distinct.size(); i += every)
    axis.tics.push_back({tic_label(distinct[i], axis.unit), distinct[i]});
  return axis;
}

nlohmann::json sweep_json(const study::SweepSpec& spec, const study::SweepResult& r, bool timing) {
  nlohmann::json points = nlohmann::json::array();
  for (const study::SweepRun& run : r.runs)
    points.push_back(study::sweep_run_json(spec, run, timing));
  nlohmann::json out = {{"schema_version", kSweepSchema},  {"name", spec.name},
                        {"description", spec.description}, {"x", spec.x},
                        {"fields", spec.fields},           {"points", std::move(points)}};
  if (spec.heatmap) out["heatmap"] = heatmap_json(spec, heatmap_cells(spec, r));
  nlohmann::json odd = nlohmann::json::array();
  for (const SweepSurprise& x : sweep_surprises(spec, r)) {
    odd.push_back({{"field", x.field},
                   {"point", x.point},
                   {"than_point", x.than},
                   {"slower_by", x.slower_by},
                   {"expected", x.expected},
                   {"causes", x.causes}});
  }
  out["surprises"] = std::move(odd);
  if (spec.paper_assumptions) out["assumptions"] = "paper";
  out["cost_convention"] = fabric::to_string(spec.cost_convention);
  out["provenance"] = provenance_json();
  out["provenance"]["sweep"] = spec.source;
  return out;
}

void write_sweep_csv(const study::SweepSpec& spec, const study::SweepResult& r, std::ostream& out) {
  out << provenance_csv_comment();
  static constexpr std::array<std::string_view, 14> kFigures{"model",
                                                             "link_gbps",
                                                             "fabric",
                                                             "gpus",
                                                             "iteration_time_s",
                                                             "tokens_per_s",
                                                             "tokens_per_s_per_musd",
                                                             "tokens_per_s_per_gpu",
                                                             "model_tflops_per_gpu",
                                                             "mfu",
                                                             "cost_built_usd",
                                                             "cost_paper_usd",
                                                             "reconfigurations",
                                                             "error"};
  out << "index";
  // A field named like a figure (the swept `fabric` and the figure `fabric`, the kind of the
  // fabric built) is written as in results.json, `fields.NAME`, so that no two columns share a
  // name.
  for (const std::string& f : spec.fields) {
    const bool clash =
        f == "index" || std::find(kFigures.begin(), kFigures.end(), f) != kFigures.end();
    out << ',' << csv_field(clash ? "fields." + f : f);
  }
  for (std::string_view name : kFigures)
    out << ',' << name;
  out << '\n';
  const auto number = [](double x) { return fmt::format("{}", x); };
  for (const study::SweepRun& run : r.runs) {
    const study::CompareRun& f = run.figures;
    // Empty for a point without a model (a micro-benchmark has no tokens or model FLOPs).
    const auto per_gpu = [&](double x) { return f.model.empty() ? std::string() : number(x); };
    out << run.index;
    for (const std::string& field : spec.fields) {
      std::string value;
      for (const study::FieldValue& v : spec.points[run.index].fields) {
        if (v.path == field) value = v.value;
      }
      out << ',' << csv_field(value);
    }
    const std::optional<double> per = tokens_per_musd(f, spec.cost_convention);
    out << ',' << csv_field(f.model) << ',' << number(f.link_gbps) << ',' << csv_field(f.fabric)
        << ',' << f.gpus << ',' << number(f.iteration_time_s) << ',' << number(f.tokens_per_s)
        << ',' << (per ? number(*per) : "") << ',' << per_gpu(f.tokens_per_s_per_gpu) << ','
        << per_gpu(f.model_tflops_per_gpu) << ',' << per_gpu(f.mfu) << ','
        << number(f.cost_built.total()) << ',' << number(f.cost_paper.total()) << ','
        << (f.reconfiguration ? std::to_string(f.reconfiguration->count) : "") << ','
        << csv_field(f.error) << '\n';
  }
}

// "surprises:" and a line each (sweep_surprises.h), or nothing.
std::string surprises_text(const study::SweepSpec& spec, const study::SweepResult& r) {
  std::string out;
  for (const SweepSurprise& x : sweep_surprises(spec, r))
    out += wrapped(printable(sweep_surprise_text(spec, x)), 100, "  ", "    ");
  return out.empty() ? out : "\nsurprises:\n" + out;
}

std::string sweep_text(const study::SweepSpec& spec, const study::SweepResult& r) {
  const std::string network_header =
      fmt::format("network ({})", study::cost_convention_label(spec.cost_convention));
  std::vector<std::string> header = {"#"};
  std::vector<Table::Align> align = {Table::Align::Right};
  for (const std::string& f : spec.fields) {
    header.push_back(f);
    align.push_back(Table::Align::Left);
  }
  for (const char* h : {"iteration (s)", "tokens/s", "MFU", network_header.c_str(),
                        "perf/$ (tokens/s per $M)", "reconfigurations"}) {
    header.push_back(h);
    align.push_back(Table::Align::Right);
  }
  header.push_back("error");
  align.push_back(Table::Align::Left);
  Table table(header, align);
  std::size_t failed = 0;
  for (const study::SweepRun& run : r.runs) {
    const study::CompareRun& f = run.figures;
    std::vector<std::string> row = {std::to_string(run.index)};
    for (const std::string& field : spec.fields) {
      std::string value;
      for (const study::FieldValue& v : spec.points[run.index].fields) {
        if (v.path == field) value = v.value;
      }
      row.push_back(value);
    }
    if (!f.error.empty()) {
      ++failed;
      for (int i = 0; i < 6; ++i)
        row.emplace_back("");
      row.push_back(f.error);
    } else {
      const std::optional<double> per = tokens_per_musd(f, spec.cost_convention);
      row.push_back(cell(f.iteration_time_s, "{:.4f}"));
      row.push_back(f.tokens_per_s > 0 ? whole_number(f.tokens_per_s) : "");
      row.push_back(f.mfu > 0 ? fmt::format("{:.1f}%", 100 * f.mfu) : "");
      const double cost = f.cost(spec.cost_convention).total();
      row.push_back(cost > 0 ? dollars(cost) : "");
      row.push_back(per ? whole_number(*per) : "");
      row.push_back(f.reconfiguration ? std::to_string(f.reconfiguration->count) : "");
      row.emplace_back("");
    }
    table.add_row(std::move(row));
  }
  return fmt::format("sweep {}: {} points ({} failed, {} resumed), x = {}\n", printable(spec.name),
                     r.runs.size(), failed, r.resumed, printable(spec.x)) +
         table.render() + heatmap_text(spec, heatmap_cells(spec, r)) + surprises_text(spec, r);
}

std::string sweep_html(const study::SweepSpec& spec, const study::SweepResult& r) {
  require_gnuplot(kSweepPageField);
  const SweepAxis axis = sweep_axis(spec);
  std::size_t failed = 0;
  for (const study::SweepRun& run : r.runs)
    failed += run.figures.error.empty() ? 0 : 1;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>mfabric sweep {}</title>\n<style>\n{}</style>\n</head>\n<body>\n<main>\n"
      "<h1>mfabric sweep: {}</h1>\n<p class=\"summary\">{}{} points ({} failed) &middot; x: "
      "<code>{}</code> &middot; fields: {}</p>\n<h2>Plots</h2>\n",
      html_text(spec.name), report_style(), html_text(spec.name),
      spec.description.empty() ? "" : html_text(spec.description) + " &middot; ", r.runs.size(),
      failed, html_text(spec.x), html_text(join(spec.fields)));
  out += provenance_html();
  for (const SweepSurprise& x : sweep_surprises(spec, r))
    out += "<p class=\"summary\">Surprise: " + html_text(sweep_surprise_text(spec, x)) + "</p>\n";
  for (SweepMetric metric : {SweepMetric::IterationTime, SweepMetric::TokensPerSecond,
                             SweepMetric::TokensPerSecondPerMusd})
    out += sweep_figure_html(spec, r, axis, metric);
  out += heatmap_html(spec, heatmap_cells(spec, r));
  out +=
      "<section id=\"results\">\n<h2>Results</h2>\n<div class=\"table-wrap\">\n<table>\n"
      "<thead><tr><th>#</th>";
  for (const std::string& f : spec.fields)
    out += "<th>" + html_text(f) + "</th>";
  out += fmt::format(
      "<th>fabric</th><th>GPUs</th><th>iteration time (s)</th><th>tokens/s</th>"
      "<th>network cost, {} (USD)</th><th>perf/$ (tokens/s per $M)</th><th>reconfigurations</th>"
      "</tr></thead>\n<tbody>\n",
      study::cost_convention_label(spec.cost_convention));
  for (const study::SweepRun& run : r.runs) {
    const study::CompareRun& f = run.figures;
    out += fmt::format("<tr{}><td class=\"num\">{}</td>",
                       f.error.empty() ? "" : " class=\"failed\"", run.index);
    for (const std::string& field : spec.fields) {
      std::string value;
      for (const study::FieldValue& v : spec.points[run.index].fields) {
        if (v.path == field) value = v.value;
      }
      out += "<td>" + html_text(value) + "</td>";
    }
    if (!f.error.empty()) {
      out += fmt::format("<td colspan=\"7\" class=\"error\">failed: {}</td></tr>\n",
                         html_text(f.error));
      continue;
    }
    const std::optional<double> per = tokens_per_musd(f, spec.cost_convention);
    out += fmt::format(
        "<td title=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        html_text(f.fabric_spec), html_text(f.fabric), f.gpus, cell(f.iteration_time_s, "{:.4g}"),
        f.tokens_per_s > 0 ? whole_number(f.tokens_per_s) : "",
        f.cost(spec.cost_convention).total() > 0 ? dollars(f.cost(spec.cost_convention).total())
                                                 : "",
        per ? whole_number(*per) : "",
        f.reconfiguration ? std::to_string(f.reconfiguration->count) : "");
  }
  out += "</tbody>\n</table>\n</div>\n</section>\n</main>\n</body>\n</html>\n";
  return out;
}

void check_sweep_outputs(const std::string& dir, bool report) {
  check_output_set(
      dir, std::vector<std::string>(std::begin(kSweepOutputFiles), std::end(kSweepOutputFiles)));
  if (report) require_gnuplot(kSweepOutputFiles[2]);
}

void write_sweep_outputs(const study::SweepSpec& spec, const study::SweepResult& r,
                         const std::string& dir) {
  const std::string html = sweep_html(spec, r);
  write_output_set(
      dir, {
               {kSweepOutputFiles[0],
                [&](std::ostream& out) { out << json_text(sweep_json(spec, r, false)) << "\n"; }},
               {kSweepOutputFiles[1], [&](std::ostream& out) { write_sweep_csv(spec, r, out); }},
               {kSweepOutputFiles[2], [&](std::ostream& out) { out << html; }},
               {kSweepOutputFiles[3],
                [&](std::ostream& out) {
                  for (const study::SweepRun& run : r.runs)
                    out << json_text(study::sweep_run_json(spec, run), -1) << "\n";
                }},
           });
}

}  // namespace mfabric::report
