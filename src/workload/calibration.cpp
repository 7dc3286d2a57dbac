// Calibrations: parsing, the shipped ones, and the cost of a collective kind.
#include "workload/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "core/error.h"
#include "core/output_text.h"
#include "core/yaml_fields.h"
#include "workload/embedded_yaml.h"
#include "workload/kernel_tables_yaml.h"

namespace mfabric::workload {

const CollectiveCost& CollectiveCosts::of(CollectiveKind kind) const {
  switch (kind) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::Barrier:
      return all_reduce;
    case CollectiveKind::AllGather:
      return all_gather;
    case CollectiveKind::ReduceScatter:
      return reduce_scatter;
    case CollectiveKind::AllToAll:
      return all_to_all;
    case CollectiveKind::Broadcast:
      return broadcast;
  }
  return all_reduce;
}

bool CollectiveCosts::is_free() const {
  return all_reduce.is_free() && all_gather.is_free() && reduce_scatter.is_free() &&
         all_to_all.is_free() && broadcast.is_free() && p2p.is_free();
}

namespace {

// A chain of `base:` references deeper than this is a cycle.
constexpr int kMaxBaseDepth = 8;

const std::vector<std::string> kCalibrationFields = {"name",    "description", "gpu",    "base",
                                                     "compute", "collectives", "kernels"};
const std::vector<std::string> kComputeFields = {
    "attention", "dense_gemm", "expert_gemm",      "generic",
    "optimizer", "replay",     "expert_per_token", "expert_layer_busiest"};

// A measured expert time: positive, and at most `limit` (beyond it, a unit was dropped).
std::optional<Time> expert_time(const Fields& f, const std::string& key, Time limit) {
  const std::optional<Time> t = f.optional_time(key);
  if (!t) return std::nullopt;
  if (*t <= Time::zero() || *t > limit) {
    throw Error(f.source(), f.field(key),
                fmt::format("expected a time above 0 and at most {}, got {}", to_string(limit),
                            to_string(*t)));
  }
  return t;
}
const std::vector<std::string> kCostFields = {"efficiency", "overhead"};
// The kinds a `collectives:` map may set, and where each lives.
const std::array<std::pair<const char*, CollectiveCost CollectiveCosts::*>, 6> kKinds{{
    {"all_reduce", &CollectiveCosts::all_reduce},
    {"all_gather", &CollectiveCosts::all_gather},
    {"reduce_scatter", &CollectiveCosts::reduce_scatter},
    {"all_to_all", &CollectiveCosts::all_to_all},
    {"broadcast", &CollectiveCosts::broadcast},
    {"p2p", &CollectiveCosts::p2p},
}};

double fraction(const Fields& f, const std::string& key, double current, const char* of_what) {
  const std::optional<double> v = f.optional_double(key);
  if (!v) return current;
  if (!(*v > 0 && *v <= 1)) {
    throw Error(f.source(), f.field(key),
                fmt::format("expected a fraction of {} in (0, 1], got {}", of_what, *v));
  }
  return *v;
}

// Sets efficiency and overhead of `cost` from the map's fields, keeping what is not given.
void parse_cost(const Fields& f, CollectiveCost& cost) {
  cost.efficiency = fraction(f, "efficiency", cost.efficiency, "the line rate");
  if (cost.efficiency < kMinCollectiveEfficiency) {
    throw Error(f.source(), f.field("efficiency"),
                fmt::format("expected at least {} of the line rate, got {}",
                            kMinCollectiveEfficiency, cost.efficiency));
  }
  if (const std::optional<Time> t = f.optional_time("overhead")) {
    if (*t < Time::zero() || *t > Time::from_seconds(1)) {
      throw Error(f.source(), f.field("overhead"),
                  fmt::format("expected a time from 0 to 1s per step, got {}", to_string(*t)));
    }
    cost.overhead = *t;
  }
}

Calibration parse_map(const YAML::Node& node, const std::string& source, const std::string& path,
                      int depth, const Calibration* unbased = nullptr);

Calibration load_named(const std::string& name_or_path, int depth);

Calibration parse_text(const std::string& text, const std::string& source, int depth) {
  const YAML::Node root = parse_yaml(text, source);
  if (!root.IsMap()) {
    throw Error(source, "", fmt::format("expected a calibration map, got {}", describe(root)));
  }
  Calibration c = parse_map(root, source, "", depth);
  if (!root["name"]) throw Error(source, "name", "a calibration file needs a name");
  return c;
}

// A shipped calibration is found by its file name (NAME.yaml, whose `name` the tests hold equal
// to NAME) and parsed when used: a shipped file may be based on another one, so there is no
// table of parsed calibrations to build first. A broken shipped file is reported on use and by
// the tests, naming the file.
const detail::EmbeddedYaml* find_shipped(const std::string& lower_name) {
  for (int i = 0; i < detail::kCalibrationsSize; ++i) {
    const detail::EmbeddedYaml& e = detail::kCalibrations[i];
    if (ascii_lower(e.file) == lower_name + ".yaml") return &e;
  }
  return nullptr;
}

Calibration load_named(const std::string& name_or_path, int depth) {
  if (depth > kMaxBaseDepth) {
    throw Error(fmt::format("calibration {} is based on itself (a chain of more than {} bases)",
                            quote_input(name_or_path), kMaxBaseDepth));
  }
  if (const detail::EmbeddedYaml* e = find_shipped(ascii_lower(name_or_path))) {
    return parse_text(e->yaml, std::string("data/calibrations/") + e->file, depth);
  }
  if (names_a_yaml_file(name_or_path)) {
    Calibration c = parse_text(read_yaml_file(name_or_path, "calibration file",
                                              "a calibration name or a YAML calibration file"),
                               name_or_path, depth);
    // A file's replay path is relative to the file.
    if (!c.replay.empty() && !std::filesystem::path(c.replay).is_absolute()) {
      const auto dir = std::filesystem::path(name_or_path).parent_path();
      if (!dir.empty()) c.replay = (dir / c.replay).string();
    }
    return c;
  }
  throw Error(fmt::format("unknown calibration {} (known: {}; or a .yaml file)",
                          quote_input(name_or_path), join(calibration_names())));
}

// The measured kernel tables of the op kinds whose efficiency `compute` states (expert_gemm,
// attention, dense_gemm): those ops run at the roofline with the stated efficiency.
void drop_measured_tables(Calibration& c, const Fields& compute) {
  if (!c.kernels) return;
  static const std::pair<const char*, KernelOp> kStated[] = {
      {"expert_gemm", KernelOp::Expert},
      {"attention", KernelOp::Attention},
      {"dense_gemm", KernelOp::Dense},
  };
  std::shared_ptr<KernelCalibration> kept;
  for (const auto& [field, op] : kStated) {
    if (!compute.has(field) || !c.kernels->find(op)) continue;
    if (!kept) kept = std::make_shared<KernelCalibration>(*c.kernels);
    kept->tables.erase(op);
  }
  if (kept) c.kernels = std::move(kept);
}

// `unbased`: what a map without `base` starts from (an experiment's: its GPU's default); null:
// the roofline (a calibration file states itself whole).
Calibration parse_map(const YAML::Node& node, const std::string& source, const std::string& path,
                      int depth, const Calibration* unbased) {
  const Fields f(node, source, path, kCalibrationFields);
  Calibration c;
  if (const std::optional<std::string> base = f.optional_string("base")) {
    c = with_context(source, f.field("base"), [&] { return load_named(*base, depth + 1); });
  } else if (unbased) {
    c = *unbased;
  }
  // Unnamed: the base's name, marked "+" when fields change it; "custom" on the bare roofline.
  const bool changed = f.has("compute") || f.has("collectives") || f.has("kernels");
  const bool based = f.has("base") || unbased;
  c.name = f.optional_string("name").value_or(based ? (changed ? c.name + "+" : c.name)
                                                    : (changed ? "custom" : c.name));
  if (const std::optional<std::string> gpu = f.optional_string("gpu")) {
    c.gpu = with_context(source, f.field("gpu"), [&] { return find_gpu(*gpu).name; });
  }
  if (f.has("kernels")) {
    c.kernels = std::make_shared<const KernelCalibration>(
        parse_kernel_calibration(f.get("kernels"), source, f.field("kernels")));
  }
  if (f.has("compute")) {
    const Fields cf(f.get("compute"), source, f.field("compute"), kComputeFields);
    c.compute.attention = fraction(cf, "attention", c.compute.attention, "peak FLOP/s");
    c.compute.dense_gemm = fraction(cf, "dense_gemm", c.compute.dense_gemm, "peak FLOP/s");
    c.compute.expert_gemm = fraction(cf, "expert_gemm", c.compute.expert_gemm, "peak FLOP/s");
    c.generic = fraction(cf, "generic", c.generic, "peak FLOP/s");
    if (cf.has("optimizer")) {
      c.optimizer = fraction(cf, "optimizer", 1, "HBM bandwidth");
    }
    c.replay = cf.optional_string("replay").value_or(c.replay);
    if (cf.has("expert_per_token") && cf.has("expert_layer_busiest")) {
      throw Error(source, cf.field("expert_layer_busiest"),
                  "give expert_per_token or expert_layer_busiest, not both");
    }
    if (cf.has("expert_per_token")) {
      c.expert_per_token = expert_time(cf, "expert_per_token", Time::milliseconds(1));
      c.expert_layer_busiest.reset();
    }
    if (cf.has("expert_layer_busiest")) {
      c.expert_layer_busiest = expert_time(cf, "expert_layer_busiest", Time::from_seconds(1000));
      c.expert_per_token.reset();
    }
    // An efficiency stated here is the nearest statement of that op's compute: it wins over a
    // measured table (this file's or the base's) and, for the experts, over a base's measured
    // time per token, so that a sweep of compute.expert_gemm moves the experts on any base.
    if (cf.has("expert_gemm") && !cf.has("expert_per_token") && !cf.has("expert_layer_busiest")) {
      c.expert_per_token.reset();
      c.expert_layer_busiest.reset();
    }
    drop_measured_tables(c, cf);
  }
  if (f.has("collectives")) {
    std::vector<std::string> known = kCostFields;
    for (const auto& [key, member] : kKinds)
      known.emplace_back(key);
    const Fields cf(f.get("collectives"), source, f.field("collectives"), known);
    // Shared values first, then each kind's own, which win.
    if (cf.has("efficiency") || cf.has("overhead")) {
      for (const auto& [key, member] : kKinds)
        parse_cost(cf, c.collectives.*member);
    }
    for (const auto& [key, member] : kKinds) {
      if (!cf.has(key)) continue;
      parse_cost(Fields(cf.get(key), source, cf.field(key), kCostFields), c.collectives.*member);
    }
  }
  return c;
}

}  // namespace

void calibrate(TrainingSpec& spec, const Calibration& c) {
  spec.efficiency = c.compute;
  spec.optimizer_efficiency = c.optimizer;
  spec.kernels = c.kernels;
  spec.expert_per_token = c.expert_per_token;
  spec.expert_layer_busiest = c.expert_layer_busiest;
}

std::vector<std::string> calibration_names() {
  std::vector<std::string> names;
  for (int i = 0; i < detail::kCalibrationsSize; ++i) {
    const std::string file = detail::kCalibrations[i].file;
    names.push_back(file.substr(0, file.size() - std::string(".yaml").size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> calibration_for_gpu(const std::string& gpu) {
  // A calibration for any GPU (no `gpu:`) is nobody's own.
  if (gpu.empty()) return std::nullopt;
  for (const std::string& name : calibration_names()) {
    if (ascii_lower(load_calibration(name).gpu) == ascii_lower(gpu)) return name;
  }
  return std::nullopt;
}

Calibration load_calibration(const std::string& name_or_path) {
  return load_named(name_or_path, 1);
}

Calibration default_calibration(const std::string& gpu) {
  return load_calibration(calibration_for_gpu(gpu).value_or("roofline"));
}

Calibration parse_calibration(const YAML::Node& node, const std::string& source,
                              const std::string& path, const std::string& gpu) {
  if (node.IsScalar()) {
    return with_context(source, path, [&] { return load_calibration(node.Scalar()); });
  }
  if (!node.IsMap()) {
    throw Error(source, path,
                fmt::format("expected a calibration name such as 'paper-measurement' or a map "
                            "{{base, compute, collectives, kernels}}, got {}",
                            describe(node)));
  }
  // Only a map without `base` starts from the GPU's default: no need to load it otherwise.
  if (node["base"]) return parse_map(node, source, path, 1);
  const Calibration unbased = default_calibration(gpu);
  return parse_map(node, source, path, 1, &unbased);
}

}  // namespace mfabric::workload
