#include "report/sweep_heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/output_text.h"
#include "report/gnuplot.h"
#include "report/html_page.h"
#include "report/sweep_report.h"
#include "report/table.h"

namespace mfabric::report {
namespace {

constexpr const char* kPageField = "report.html";

bool at_or_under(const std::string& path, const std::string& prefix) {
  return path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
          path[prefix.size()] == '.');
}

bool covered_by_reference(const std::string& path, const study::SweepHeatmap& h) {
  return std::any_of(h.reference.begin(), h.reference.end(),
                     [&](const study::FieldValue& f) { return at_or_under(path, f.path); });
}

// What a point and its reference share: every field not at or under a reference path.
std::string match_key(const study::SweepPoint& p, const study::SweepHeatmap& h) {
  std::map<std::string, std::string> kept;
  for (const study::FieldValue& f : p.fields) {
    if (!covered_by_reference(f.path, h)) kept[f.path] = f.value;
  }
  std::string key;
  for (const auto& [path, value] : kept)
    key += path + "=" + value + "\n";
  return key;
}

std::string panel_of(const study::SweepPoint& p, const study::SweepHeatmap& h) {
  std::string out;
  for (const study::FieldValue& f : p.fields) {
    if (f.path != h.x && f.path != h.y) out += (out.empty() ? "" : " ") + f.path + "=" + f.value;
  }
  return out;
}

std::string value_of(const study::SweepPoint& p, const std::string& path) {
  for (const study::FieldValue& f : p.fields) {
    if (f.path == path) return f.value;
  }
  return "";
}

std::vector<std::string> panels_of(const std::vector<HeatmapCell>& cells) {
  std::vector<std::string> panels;
  for (const HeatmapCell& c : cells) {
    if (std::find(panels.begin(), panels.end(), c.panel) == panels.end()) panels.push_back(c.panel);
  }
  return panels;
}

struct Grid {
  std::vector<std::string> xs, ys;
  std::map<std::pair<std::string, std::string>, double> ratio;
};

Grid grid_of(const std::vector<HeatmapCell>& cells, const std::string& panel) {
  Grid g;
  std::vector<std::string> xs, ys;
  for (const HeatmapCell& c : cells) {
    if (c.panel != panel) continue;
    xs.push_back(c.x);
    ys.push_back(c.y);
    g.ratio[{c.x, c.y}] = c.ratio;
  }
  g.xs = heatmap_axis(xs);
  g.ys = heatmap_axis(ys);
  return g;
}

std::size_t index_of(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

}  // namespace

std::vector<std::string> heatmap_axis(const std::vector<std::string>& values) {
  std::vector<std::string> distinct;
  for (const std::string& v : values) {
    if (std::find(distinct.begin(), distinct.end(), v) == distinct.end()) distinct.push_back(v);
  }
  const std::optional<AxisNumbers> numbers = axis_numbers(distinct);
  if (!numbers) return distinct;
  std::vector<std::size_t> order(distinct.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return numbers->values[a] < numbers->values[b];
  });
  std::vector<std::string> out;
  for (std::size_t i : order)
    out.push_back(distinct[i]);
  return out;
}

std::vector<HeatmapCell> heatmap_cells(const study::SweepSpec& spec, const study::SweepResult& r) {
  std::vector<HeatmapCell> cells;
  if (!spec.heatmap) return cells;
  const study::SweepHeatmap& h = *spec.heatmap;
  std::map<std::string, double> reference_time;
  for (const study::SweepRun& run : r.runs) {
    const study::SweepPoint& p = spec.points[run.index];
    if (run.figures.error.empty() && run.figures.iteration_time_s > 0 && study::is_reference(p, h))
      reference_time.emplace(match_key(p, h), run.figures.iteration_time_s);
  }
  for (const study::SweepRun& run : r.runs) {
    const study::SweepPoint& p = spec.points[run.index];
    if (!run.figures.error.empty() || run.figures.iteration_time_s <= 0 ||
        study::is_reference(p, h)) {
      continue;
    }
    const auto it = reference_time.find(match_key(p, h));
    if (it == reference_time.end()) continue;
    cells.push_back({panel_of(p, h), value_of(p, h.x), value_of(p, h.y),
                     run.figures.iteration_time_s / it->second});
  }
  return cells;
}

nlohmann::json heatmap_json(const study::SweepSpec& spec, const std::vector<HeatmapCell>& cells) {
  if (!spec.heatmap) return nullptr;
  nlohmann::json reference = nlohmann::json::object();
  for (const study::FieldValue& f : spec.heatmap->reference)
    reference[f.path] = f.value;
  nlohmann::json out = nlohmann::json::array();
  for (const HeatmapCell& c : cells)
    out.push_back({{"panel", c.panel}, {"x", c.x}, {"y", c.y}, {"ratio", c.ratio}});
  return {{"x", spec.heatmap->x}, {"y", spec.heatmap->y}, {"reference", reference}, {"cells", out}};
}

std::string heatmap_text(const study::SweepSpec& spec, const std::vector<HeatmapCell>& cells) {
  if (!spec.heatmap || cells.empty()) return "";
  std::string out = fmt::format(
      "\niteration time over the reference ({}), {} across, {} down:\n",
      [&] {
        std::string ref;
        for (const study::FieldValue& f : spec.heatmap->reference)
          ref += (ref.empty() ? "" : " ") + f.path + "=" + f.value;
        return printable(ref);
      }(),
      printable(spec.heatmap->x), printable(spec.heatmap->y));
  for (const std::string& panel : panels_of(cells)) {
    const Grid g = grid_of(cells, panel);
    std::vector<std::string> header{printable(spec.heatmap->y)};
    std::vector<Table::Align> align{Table::Align::Left};
    for (const std::string& x : g.xs) {
      header.push_back(printable(x));
      align.push_back(Table::Align::Right);
    }
    Table t(header, align);
    for (auto y = g.ys.rbegin(); y != g.ys.rend(); ++y) {
      std::vector<std::string> row{printable(*y)};
      for (const std::string& x : g.xs) {
        const auto it = g.ratio.find({x, *y});
        row.push_back(it == g.ratio.end() ? "-" : fmt::format("{:.3f}", it->second));
      }
      t.add_row(row);
    }
    out += fmt::format("\n{}\n", panel.empty() ? "(all points)" : printable(panel)) + t.render();
  }
  return out;
}

std::string heatmap_html(const study::SweepSpec& spec, const std::vector<HeatmapCell>& cells) {
  if (!spec.heatmap) return "";
  const study::SweepHeatmap& h = *spec.heatmap;
  std::string ref;
  for (const study::FieldValue& f : h.reference)
    ref += (ref.empty() ? "" : ", ") + f.path + " = " + f.value;
  std::string out = fmt::format(
      "<section id=\"heatmaps\">\n<h2>Iteration time over the reference</h2>\n<p>Each cell is a "
      "point's iteration time divided by that of its reference point ({}) with the same other "
      "fields: 1.00 is parity, above 1 slower than the reference. White at 1, red above, blue "
      "below.</p>\n",
      html_text(ref));
  if (cells.empty()) {
    return out +
           "<p class=\"missing\">Not drawn: no point has a reference that finished.</p>\n"
           "</section>\n";
  }
  int index = 0;
  for (const std::string& panel : panels_of(cells)) {
    const Grid g = grid_of(cells, panel);
    double lo = 0.95, hi = 1.3;
    for (const auto& [at, ratio] : g.ratio) {
      lo = std::min(lo, ratio);
      hi = std::max(hi, ratio);
    }
    std::vector<std::vector<double>> rows;
    for (const auto& [at, ratio] : g.ratio) {
      rows.push_back({static_cast<double>(index_of(g.xs, at.first)),
                      static_cast<double>(index_of(g.ys, at.second)), ratio});
    }
    const int width = 140 + 90 * static_cast<int>(g.xs.size());
    const int height = 110 + 40 * static_cast<int>(g.ys.size());
    std::string script = gnuplot_svg_canvas(std::max(width, 420), height);
    script += gnuplot_data_block("d", rows);
    script += fmt::format(
        "unset key\nset border 3 lc rgb '#444444'\nset tics nomirror out\n"
        "set xlabel {}\nset ylabel {}\nset xtics ({})\nset ytics ({})\n"
        "set xrange [-0.5:{}]\nset yrange [-0.5:{}]\n"
        "set palette defined ({} '#4393c3', 1 '#ffffff', 1.05 '#fddbc7', {} '#b2182b')\n"
        "set cbrange [{}:{}]\nset colorbox\n"
        "plot $d using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette, \\\n"
        "  $d using 1:2:(sprintf('%.2f', $3)) with labels font ',12'\n",
        gnuplot_string(h.x), gnuplot_string(h.y), gnuplot_tic_list(g.xs), gnuplot_tic_list(g.ys),
        gnuplot_number(static_cast<double>(g.xs.size()) - 0.5),
        gnuplot_number(static_cast<double>(g.ys.size()) - 0.5), gnuplot_number(std::min(lo, 0.95)),
        gnuplot_number(std::max(hi, 1.3)), gnuplot_number(std::min(lo, 0.95)),
        gnuplot_number(std::max(hi, 1.3)));
    const std::string id = fmt::format("heatmap-{}", index++);
    out += fmt::format("<figure id=\"{}\">\n<figcaption><strong>{}</strong></figcaption>\n", id,
                       html_text(panel.empty() ? spec.name : panel));
    out += inline_svg(run_gnuplot(script, kPageField), id + "-");
    out += "\n</figure>\n";
  }
  return out + "</section>\n";
}

}  // namespace mfabric::report
