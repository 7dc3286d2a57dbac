#include "study/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "control/policy_names.h"
#include "core/error.h"
#include "core/input_files.h"
#include "core/rng.h"
#include "core/spec.h"
#include "core/yaml_fields.h"
#include "fabric/fabric_kinds.h"
#include "sim/load_experiment.h"
#include "workload/embedded_yaml.h"

namespace mfabric::study {
namespace {

const std::vector<std::string> kSweepFields = {"name",   "description", "experiment", "grid",
                                               "points", "x",           "heatmap"};
const std::vector<std::string> kHeatmapFields = {"x", "y", "reference"};

std::string flow_text(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

// A dotted path of non-empty names made of letters, digits, '_' and '-'.
void check_path(const std::string& path, const std::string& source, const std::string& field) {
  bool ok = !path.empty() && path.front() != '.' && path.back() != '.' &&
            path.find("..") == std::string::npos;
  for (char c : path) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      ok = false;
  }
  if (!ok) {
    throw Error(source, field,
                fmt::format("expected a dotted path into the experiment file such as "
                            "'cluster.link' or 'fabric.alpha', got '{}'",
                            path));
  }
}

// A field's values in the grid: a non-empty list.
std::vector<std::string> grid_values(const YAML::Node& node, const std::string& source,
                                     const std::string& field) {
  if (!node.IsSequence() || node.size() == 0) {
    throw Error(source, field,
                fmt::format("expected a non-empty list of values, got {}", describe(node)));
  }
  std::vector<std::string> out;
  for (const YAML::Node& v : node) {
    if (v.IsNull()) throw Error(source, field, "expected a value, got nothing");
    out.push_back(flow_text(v));
  }
  return out;
}

// The experiment's fabric as a map {kind: NAME, key: value, ...}, so that a point can set one
// parameter. A fabric written as a name keeps its meaning.
void fabric_as_map(YAML::Node& root) {
  if (!root["fabric"] || !root["fabric"].IsScalar()) return;
  const Spec spec = Spec::parse(root["fabric"].Scalar());
  YAML::Node map(YAML::NodeType::Map);
  map["kind"] = spec.name();
  for (const auto& [key, value] : spec.params())
    map[key] = value;
  root["fabric"] = map;
}

void set_field(YAML::Node root, const std::string& path, const YAML::Node& value,
               const std::string& point) {
  std::vector<std::string> names;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = path.find('.', from);
    names.push_back(path.substr(from, dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  YAML::Node at = root;
  std::string walked;
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + names[i];
    YAML::Node next = at[names[i]];
    if (next && !next.IsMap() && !next.IsNull()) {
      throw Error("", path,
                  fmt::format("{}: '{}' in the experiment is {}, not a map, so '{}' cannot be set",
                              point, walked, describe(next), path));
    }
    if (!next || next.IsNull()) {
      at[names[i]] = YAML::Node(YAML::NodeType::Map);
      next.reset(at[names[i]]);
    }
    at.reset(next);
  }
  at[names.back()] = YAML::Clone(value);
}

// The sweep's `heatmap:` map, checked against its fields and points.
SweepHeatmap parse_heatmap(const YAML::Node& node, const SweepSpec& spec) {
  const Fields f(node, spec.source, "heatmap", kHeatmapFields);
  SweepHeatmap h;
  const auto field_of_sweep = [&](const std::string& key) {
    const std::optional<std::string> path = f.optional_string(key);
    if (!path) throw Error(spec.source, f.field(key), "is required: a field of the sweep");
    if (std::find(spec.fields.begin(), spec.fields.end(), *path) == spec.fields.end()) {
      throw Error(spec.source, f.field(key),
                  fmt::format("'{}' is not a field of the sweep (its fields: {})", *path,
                              join(spec.fields)));
    }
    return *path;
  };
  h.x = field_of_sweep("x");
  h.y = field_of_sweep("y");
  if (h.x == h.y) throw Error(spec.source, "heatmap.y", "must differ from heatmap.x");
  const YAML::Node reference = f.get("reference");
  if (!reference || !reference.IsMap() || reference.size() == 0) {
    throw Error(spec.source, "heatmap.reference",
                "expected a map field: value naming the reference points, such as {fabric: "
                "fat-tree}");
  }
  for (const auto& entry : reference) {
    const std::string path = entry.first.Scalar();
    check_path(path, spec.source, "heatmap.reference." + path);
    h.reference.push_back({path, flow_text(entry.second)});
  }
  const bool any = std::any_of(spec.points.begin(), spec.points.end(),
                               [&](const SweepPoint& p) { return is_reference(p, h); });
  if (!any) {
    throw Error(spec.source, "heatmap.reference",
                "no point of the sweep sets these fields to these values");
  }
  return h;
}

// Notes a field the sweep sets (SweepSpec::fields, in the order they first appear).
void note_field(SweepSpec& spec, const std::string& path) {
  if (std::find(spec.fields.begin(), spec.fields.end(), path) == spec.fields.end())
    spec.fields.push_back(path);
}

// The points of `grid` (field: [values]) added to the sweep's, in odometer order: the last field
// fastest.
void add_grid_points(const YAML::Node& grid, const std::string& source, SweepSpec& spec) {
  if (!grid.IsMap() || grid.size() == 0) {
    throw Error(source, "grid",
                fmt::format("expected a map of field: [values], got {}", describe(grid)));
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  std::size_t count = 1;
  for (const auto& entry : grid) {
    const std::string path = entry.first.Scalar();
    check_path(path, source, "grid." + path);
    for (const auto& [seen, values] : axes) {
      if (seen == path) throw Error(source, "grid." + path, "appears twice");
    }
    axes.emplace_back(path, grid_values(entry.second, source, "grid." + path));
    count *= axes.back().second.size();
    if (count > kMaxSweepPoints) {
      throw Error(source, "grid",
                  fmt::format("has more than {} points; split the sweep", kMaxSweepPoints));
    }
    note_field(spec, path);
  }
  // Odometer order: the last field fastest.
  std::vector<std::size_t> at(axes.size(), 0);
  for (std::size_t k = 0; k < count; ++k) {
    SweepPoint p;
    for (std::size_t a = 0; a < axes.size(); ++a)
      p.fields.push_back({axes[a].first, axes[a].second[at[a]]});
    spec.points.push_back(std::move(p));
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++at[a] < axes[a].second.size()) break;
      at[a] = 0;
    }
  }
}

}  // namespace

namespace {

// Sets simulation.KEY to `value` in the experiment every point starts from.
template <class Value>
void set_simulation_field(SweepSpec& spec, const char* key, const Value& value) {
  YAML::Node simulation = spec.experiment["simulation"];
  if (!simulation || !simulation.IsMap()) {
    YAML::Node map(YAML::NodeType::Map);
    map[key] = value;
    spec.experiment["simulation"] = map;
  } else {
    simulation[key] = value;
  }
}

}  // namespace

void ignore_gpu_memory(SweepSpec& spec) {
  set_simulation_field(spec, "ignore_gpu_memory", true);
}

void run_exact(SweepSpec& spec) {
  set_simulation_field(spec, "extrapolate", false);
  set_solver(spec, "exact");
}

void set_solver(SweepSpec& spec, const std::string& solver) {
  set_simulation_field(spec, "solver", solver);
}

void set_extrapolate(SweepSpec& spec, const std::string& value) {
  if (value == "auto") {
    if (YAML::Node simulation = spec.experiment["simulation"]; simulation && simulation.IsMap()) {
      simulation.remove("extrapolate");
    }
    return;
  }
  set_simulation_field(spec, "extrapolate", value == "true");
}

void apply_paper_assumptions(SweepSpec& spec) {
  YAML::Node root = spec.experiment;
  YAML::Node calibration = root["calibration"];
  if (!calibration || !calibration.IsMap()) {
    YAML::Node map(YAML::NodeType::Map);
    map["base"] = "paper-measurement";
    root["calibration"] = map;
  } else {
    calibration["base"] = "paper-measurement";
  }
  // A reconfigurable fabric's controller (mFabric's) is the paper's simulator's, in the
  // experiment and in every point that sets a whole such fabric, unless the point chooses its
  // policy itself.
  const auto reconfigures = [](const YAML::Node& fabric) {
    if (!fabric || !fabric.IsMap() || !fabric["kind"]) return false;
    const fabric::FabricKind* kind = fabric::find_fabric_kind(fabric["kind"].Scalar());
    return kind != nullptr && kind->traits.reconfigurable;
  };
  const auto paper_controller = [&](YAML::Node fabric) {
    if (!reconfigures(fabric)) return;
    fabric["policy"] = control::kPaperSimPolicy;
    fabric.remove("switching");
  };
  paper_controller(root["fabric"]);  // a map already (parse_sweep)
  for (SweepPoint& p : spec.points) {
    const bool own_policy = std::any_of(p.fields.begin(), p.fields.end(), [](const FieldValue& f) {
      return f.path == "fabric.policy" || f.path == "fabric.switching";
    });
    for (FieldValue& f : p.fields) {
      if (f.path != "fabric" || own_policy) continue;
      YAML::Node value = YAML::Load(f.value);
      if (value.IsScalar()) {
        YAML::Node holder(YAML::NodeType::Map);
        holder["fabric"] = value;
        fabric_as_map(holder);
        value = holder["fabric"];
      }
      // Other fabrics keep the text they were written in (and so their runs' fingerprints).
      if (!reconfigures(value)) continue;
      paper_controller(value);
      f.value = flow_text(value);
    }
  }
  spec.paper_assumptions = true;
}

bool is_reference(const SweepPoint& p, const SweepHeatmap& h) {
  for (const FieldValue& want : h.reference) {
    const bool set = std::any_of(p.fields.begin(), p.fields.end(), [&](const FieldValue& f) {
      return f.path == want.path && f.value == want.value;
    });
    if (!set) return false;
  }
  return true;
}

std::string SweepPoint::label() const {
  std::string out;
  for (const FieldValue& f : fields)
    out += (out.empty() ? "" : " ") + f.path + "=" + f.value;
  return out;
}

SweepSpec parse_sweep(const std::string& yaml_text, const std::string& source) {
  SweepSpec spec;
  spec.source = source;
  const YAML::Node root = parse_yaml(yaml_text, source);
  const Fields f(root, source, "", kSweepFields);
  spec.name =
      f.optional_string("name").value_or(std::filesystem::path(source).stem().string().empty()
                                             ? std::string("sweep")
                                             : std::filesystem::path(source).stem().string());
  spec.description = f.optional_string("description").value_or("");

  if (!f.has("experiment")) {
    throw Error(source, "experiment", "is required: an experiment file or an inline experiment");
  }
  const YAML::Node experiment = f.get("experiment");
  if (experiment.IsScalar()) {
    const auto dir = std::filesystem::path(source).parent_path();
    const std::filesystem::path p(experiment.Scalar());
    spec.experiment_source = p.is_absolute() || dir.empty() ? p.string() : (dir / p).string();
    spec.experiment = with_context(source, "experiment", [&] {
      return parse_yaml(read_yaml_file(spec.experiment_source, "experiment file",
                                       "a YAML experiment (docs/experiment.md)"),
                        spec.experiment_source);
    });
  } else if (experiment.IsMap()) {
    spec.experiment = YAML::Clone(experiment);
    spec.experiment_source = source;
  } else {
    throw Error(
        source, "experiment",
        fmt::format("expected an experiment file name or a map, got {}", describe(experiment)));
  }
  if (!spec.experiment.IsMap()) {
    throw Error(spec.experiment_source, "",
                fmt::format("expected an experiment (a map), got {}", describe(spec.experiment)));
  }
  with_context(spec.experiment_source, "fabric", [&] {
    fabric_as_map(spec.experiment);
    return 0;
  });

  if (f.has("grid")) add_grid_points(f.get("grid"), source, spec);

  if (f.has("points")) {
    const YAML::Node points = f.get("points");
    if (!points.IsSequence()) {
      throw Error(source, "points",
                  fmt::format("expected a list of maps field: value, got {}", describe(points)));
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string field = fmt::format("points[{}]", i);
      const YAML::Node p = points[i];
      if (!p.IsMap() || p.size() == 0) {
        throw Error(source, field, fmt::format("expected a map field: value, got {}", describe(p)));
      }
      SweepPoint point;
      for (const auto& entry : p) {
        const std::string path = entry.first.Scalar();
        check_path(path, source, field + "." + path);
        if (entry.second.IsNull()) {
          throw Error(source, field + "." + path, "expected a value, got nothing");
        }
        point.fields.push_back({path, flow_text(entry.second)});
        note_field(spec, path);
      }
      spec.points.push_back(std::move(point));
    }
    if (spec.points.size() > kMaxSweepPoints) {
      throw Error(source, "points",
                  fmt::format("the sweep has more than {} points; split it", kMaxSweepPoints));
    }
  }
  if (spec.points.empty()) {
    throw Error(source, "grid", "the sweep has no point: give a grid, points, or both");
  }

  spec.x = f.optional_string("x").value_or(spec.fields.front());
  if (std::find(spec.fields.begin(), spec.fields.end(), spec.x) == spec.fields.end()) {
    throw Error(source, "x",
                fmt::format("'{}' is not a field of the sweep (its fields: {})", spec.x,
                            join(spec.fields)));
  }
  if (f.has("heatmap")) spec.heatmap = parse_heatmap(f.get("heatmap"), spec);
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  return parse_sweep(read_yaml_file(path, "sweep file", "a YAML sweep (docs/sweep.md)"), path);
}

std::string point_yaml(const SweepSpec& spec, std::size_t k) {
  YAML::Node root = YAML::Clone(spec.experiment);
  const SweepPoint& p = spec.points.at(k);
  const std::string point = fmt::format("point {} ({})", k, p.label());
  // Shorter paths first, so that a point may replace a map and then set one of its fields.
  std::vector<const FieldValue*> order;
  for (const FieldValue& f : p.fields)
    order.push_back(&f);
  std::stable_sort(order.begin(), order.end(), [](const FieldValue* a, const FieldValue* b) {
    return std::count(a->path.begin(), a->path.end(), '.') <
           std::count(b->path.begin(), b->path.end(), '.');
  });
  for (const FieldValue* f : order) {
    with_context(spec.source, "", [&] {
      set_field(root, f->path, YAML::Load(f->value), point);
      if (f->path == "fabric") fabric_as_map(root);
      return 0;
    });
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string point_fingerprint(const SweepSpec& spec, std::size_t k) {
  // The point's text, and what the text leaves to mfabric: the calibration it resolves to (a job
  // that names none takes its GPU's, a default that may change) and the shipped models' and
  // calibrations' contents. A journal is kept across builds (its runs are long), so a record
  // made under other defaults or data must not match.
  const std::string text = point_yaml(spec, k);
  std::string calibration;
  std::string convention;
  try {
    calibration = config::experiment_calibration_name(text, spec.experiment_source);
    // The parallelism convention a job resolves to, too (its default changed from the paper's
    // to Megatron's); said only when not the paper's, so that records made under the paper's
    // convention before it was named still match.
    const config::Experiment e = sim::parse_experiment(text, spec.experiment_source);
    if (e.model && e.model->convention != "paper") {
      convention = "convention: " + e.model->convention + "\n";
    }
  } catch (const Error&) {
    // The point fails when it is run, naming the field; its fingerprint need only be stable.
  }
  return fmt::format(
      "{:016x}",
      fnv1a(fmt::format("{}\ncalibration: {}\nshipped data: {:016x}\n{}", text, calibration,
                        workload::detail::embedded_yaml_digest(), convention)));
}

config::Experiment point_experiment(const SweepSpec& spec, std::size_t k) {
  const std::string text = point_yaml(spec, k);
  try {
    return sim::parse_experiment(text, spec.experiment_source);
  } catch (const Error& e) {
    const std::string where = e.field().empty() ? "" : e.field() + ": ";
    throw Error(spec.source, fmt::format("point {} ({})", k, spec.points[k].label()),
                where + e.message());
  }
}

std::vector<double> check_points(const SweepSpec& spec) {
  std::vector<double> costs;
  for (std::size_t k = 0; k < spec.points.size(); ++k)
    costs.push_back(estimated_cost(point_experiment(spec, k)));
  return costs;
}

double estimated_cost(const config::Experiment& e) {
  const double gpus = static_cast<double>(e.cluster.servers) * e.cluster.gpus_per_server;
  if (!e.model) return gpus;
  const config::TrainingJob& w = *e.model;
  const double micro_batches =
      w.micro_batch > 0 ? std::max(1.0, static_cast<double>(w.global_batch) / w.micro_batch) : 1;
  return gpus * std::max(1, w.ep) * micro_batches * e.iterations;
}

}  // namespace mfabric::study
