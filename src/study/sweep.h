// Sweeps (docs/sweep.md): one experiment and a list of points, each point a set of the
// experiment file's fields with new values. A sweep file is YAML:
//
//   name: reconfiguration-delay
//   experiment: ../mixtral-8x22b-mfabric.yaml   # an experiment file, or an inline map
//   grid:                                       # every combination, the first field slowest
//     fabric.reconfiguration: [1us, 1ms, 25ms, 1s]
//   points:                                     # explicit points, after the grid
//     - {fabric.reconfiguration: 25ms, cluster.link: 100G}
//   x: fabric.reconfiguration                   # the report's x axis (default: the first field)
//
// A field is a dotted path into the experiment file (`cluster.link`, `workload.ep`,
// `simulation.completion_batching`, `failures`); a fabric given as a name ("mfabric:alpha=6")
// is turned into its map form first, so that `fabric.alpha` reaches its parameter. Values are
// YAML (scalars with units, lists, maps) and are checked by the experiment loader as if written
// in the file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "fabric/cost.h"

namespace mfabric::study {

// One field of a point: its dotted path and its value as YAML text (flow style).
struct FieldValue {
  std::string path;
  std::string value;
};

struct SweepPoint {
  std::vector<FieldValue> fields;  // in the sweep file's order
  // "fabric.reconfiguration=25ms cluster.link=100G", for tables and messages.
  std::string label() const;
};

// A heatmap of the report (docs/sweep.md, "Heatmaps"): each point's iteration time over its
// reference point's, with `x` across and `y` up, one map per combination of the other fields.
// A point's reference is the point that sets every `reference` field to its value and agrees
// with it on every field not at or under a reference path (so `reference: {fabric: fat-tree}`
// pairs each mFabric point with the fat-tree point of the same model, link and calibration,
// whatever its fabric.* fields).
struct SweepHeatmap {
  std::string x, y;
  std::vector<FieldValue> reference;
};

struct SweepSpec {
  std::string source;  // the sweep file, for messages
  std::string name;
  std::string description;
  // The experiment as YAML, and the file its relative paths (model files, traces) start from.
  YAML::Node experiment;
  std::string experiment_source;
  std::vector<std::string> fields;  // every field a point sets, in order of first appearance
  std::string x;                    // the report's x axis: one of `fields`
  std::vector<SweepPoint> points;
  std::optional<SweepHeatmap> heatmap;
  bool paper_assumptions = false;  // apply_paper_assumptions() was applied
  // How network cost is counted in the results' cost and perf/$ figures (`sweep --convention`;
  // the records keep both costs).
  fabric::CostConvention cost_convention = fabric::CostConvention::Paper;
};

// `mfabric sweep --assumptions paper` (docs/sweep.md): the experiment every point starts from
// gets the paper-measurement calibration as its base (its own calibration fields still apply)
// and, when its fabric is mFabric, the paper's simulator's controller (policy paper-sim, the
// switching rule its own), as does every point that sets a whole mFabric fabric unless it sets
// fabric.policy or fabric.switching itself. Points that set a whole calibration keep it.
void apply_paper_assumptions(SweepSpec& spec);

// `mfabric sweep --ignore-gpu-memory`: the experiment every point starts from gets
// simulation.ignore_gpu_memory: true (docs/workload.md, "Memory"); a point that sets it keeps its
// own.
void ignore_gpu_memory(SweepSpec& spec);
// simulation.extrapolate: false in the experiment every point starts from (sweep --exact): no
// shortcut (docs/shortcuts.md); a point that sets it keeps its own.
void run_exact(SweepSpec& spec);
// simulation.solver: SOLVER in the experiment every point starts from (sweep --solver).
void set_solver(SweepSpec& spec, const std::string& solver);
// simulation.extrapolate in the experiment every point starts from (sweep --extrapolate): "true"
// or "false" sets it, "auto" removes it (the default rule).
void set_extrapolate(SweepSpec& spec, const std::string& value);

// True when `p` sets every reference field of `h` to its value.
bool is_reference(const SweepPoint& p, const SweepHeatmap& h);

// The largest number of points a sweep may have (a grid multiplies quickly; a typo in a list
// should not start a million runs).
inline constexpr std::size_t kMaxSweepPoints = 100000;

// mfabric::Error(file, field, expectation) for an unreadable file, YAML errors, unknown keys, an
// empty sweep, a field path that is not a path, or an x that no point sets. The points are not
// checked against the experiment here: check_points() does that.
SweepSpec load_sweep(const std::string& path);
SweepSpec parse_sweep(const std::string& yaml_text, const std::string& source);

// The experiment file of point k, as text: the point's identity (two sweeps whose point has the
// same text run the same simulation, which resuming relies on).
std::string point_yaml(const SweepSpec& spec, std::size_t k);
// A 64-bit FNV-1a fingerprint, as 16 hex digits, of point_yaml with what the text leaves to
// mfabric: the calibration it resolves to and a digest of the shipped models and calibrations.
std::string point_fingerprint(const SweepSpec& spec, std::size_t k);

// The experiment of point k; mfabric::Error naming the sweep file and the point when a field
// does not fit the experiment (the loader's message, located at the point).
config::Experiment point_experiment(const SweepSpec& spec, std::size_t k);

// Every point's experiment loads and its fabric builds: a sweep with a bad point is refused
// before any point runs. Returns each point's estimated_cost, read on the way (loading a point
// builds its fabric, which at thousands of servers is worth doing once).
std::vector<double> check_points(const SweepSpec& spec);

// A rough, relative estimate of a run's cost, to balance points over threads and MPI ranks:
// GPUs x EP group size x micro-batches x iterations for a training job (the EP all-to-alls
// dominate, docs/performance.md), the GPUs otherwise.
double estimated_cost(const config::Experiment& e);

}  // namespace mfabric::study
