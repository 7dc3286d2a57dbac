#include "study/sweep_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <mutex>

#include "core/error.h"
#include "core/json_text.h"
#include "core/units.h"
#include "study/parallel.h"
#include "study/run_json.h"

namespace mfabric::study {

nlohmann::json sweep_run_json(const SweepSpec& spec, const SweepRun& run, bool timing) {
  static const std::vector<FieldValue> none;
  return run_record_json(run.index < spec.points.size() ? spec.points[run.index].fields : none, run,
                         timing);
}

nlohmann::json run_record_json(const std::vector<FieldValue>& point_fields, const SweepRun& run,
                               bool timing) {
  const CompareRun& r = run.figures;
  nlohmann::json fields = nlohmann::json::object();
  for (const FieldValue& f : point_fields)
    fields[f.path] = f.value;
  const double cost = r.cost_paper.total();
  nlohmann::json j = {
      {"index", run.index},
      {"fingerprint", run.fingerprint},
      {"fields", std::move(fields)},
      {"model", r.model},
      {"link_gbps", r.link_gbps},
      {"fabric", r.fabric},
      {"fabric_spec", r.fabric_spec},
      {"gpus", r.gpus},
      {"iteration_time_s", r.iteration_time_s},
      {"tokens_per_s", r.tokens_per_s},
      {"tokens_per_s_per_musd", cost > 0 && r.tokens_per_s > 0
                                    ? nlohmann::json(r.tokens_per_s / cost * 1e6)
                                    : nlohmann::json(nullptr)},
      {"cost_usd", {{"built", r.cost_built.total()}, {"paper", cost}}},
      {"cost_built_usd_by_component", cost_components_json(r.cost_built)},
      {"cost_paper_usd_by_component", cost_components_json(r.cost_paper)},
  };
  if (!r.all_to_all.empty()) j["all_to_all"] = r.all_to_all;
  // Training jobs only: a micro-benchmark's point has no tokens or model FLOPs.
  if (!r.model.empty()) {
    j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
    j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
    j["mfu"] = r.mfu;
    if (r.busiest_expert_over_mean) j["busiest_expert_over_mean"] = *r.busiest_expert_over_mean;
  }
  if (r.reconfiguration) {
    j["reconfiguration"] = reconfiguration_json(*r.reconfiguration);
    nlohmann::json& c = j["reconfiguration"];
    c["critical_holds"] = r.reconfiguration->critical_holds;
    c["critical_held_s"] = r.reconfiguration->critical_held_s;
    c["holds"] = r.reconfiguration->holds;
    c["all_to_alls"] = r.reconfiguration->all_to_alls;
    c["regions"] = r.reconfiguration->regions;
  }
  j["iterations"] = r.iterations;
  j["compute_s"] = r.compute_s;
  j["exposed_communication_s"] = r.exposed_communication_s;
  if (!run.timeline.empty()) {
    nlohmann::json spans = nlohmann::json::array();
    for (const TimelineSpan& t : run.timeline)
      spans.push_back({t.start_s, t.end_s, t.reconfiguration});
    j["timeline"] = std::move(spans);
  }
  if (!r.shortcuts.empty()) j["shortcuts"] = shortcuts_json(r.shortcuts);
  if (!r.framework_warnings.empty()) j["framework_warnings"] = r.framework_warnings;
  if (!r.error.empty()) j["error"] = r.error;
  if (timing) j["wall_time_s"] = r.wall_time_s;
  return j;
}

namespace {

using nlohmann::json;

// Reads one record strictly: every member known, of its type, in its range, so that a
// journal edited by hand or corrupted on disk is refused with the member at fault instead of
// reaching the results (a float too large for an int is undefined behaviour, a negative time a
// wrong table, a denormal a failed plot).
class RecordReader {
 public:
  RecordReader(const json& object, std::string prefix)
      : object_(object), prefix_(std::move(prefix)) {
    if (!object_.is_object())
      fail("", fmt::format("expected an object, got {}", json_excerpt(object_)));
  }

  // Refuses members other than `known`.
  void only(std::initializer_list<const char*> known) const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      // An iterator, not a structured binding: clang 14 (the sanitizer build) cannot capture a
      // binding in a lambda.
      const std::string& key = it.key();
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) ==
          known.end()) {
        // A hostile key can be megabytes long: the message names its start.
        fail(key.size() > 64 ? key.substr(0, 61) + "..." : key,
             "is not a member of a sweep point's record (written by another version of "
             "mfabric, or edited)");
      }
    }
  }
  bool has(const char* key) const { return object_.contains(key); }
  const json& at(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(key, "is missing");
    return *it;
  }
  std::string field(const char* key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw Error("", prefix_.empty() ? key : (key.empty() ? prefix_ : prefix_ + "." + key), message);
  }

  // Member `key`, an array of at most `max` `what`s.
  const json& array(const char* key, std::size_t max, const char* what) const {
    const json& v = at(key);
    if (!v.is_array() || v.size() > max) {
      fail(key,
           fmt::format("expected an array of at most {} {}, got {}", max, what, json_excerpt(v)));
    }
    return v;
  }

  std::string string(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, fmt::format("expected a string, got {}", json_excerpt(v)));
    return v.get<std::string>();
  }

  // A whole number in [0, max], written as a JSON integer.
  std::uint64_t count(const char* key, std::uint64_t max) const {
    const json& v = at(key);
    // Only a JSON integer: get<int>() of 1e30 would be undefined behaviour.
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= max) return v.get<std::uint64_t>();
    if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() >= 0 &&
        static_cast<std::uint64_t>(v.get<std::int64_t>()) <= max) {
      return static_cast<std::uint64_t>(v.get<std::int64_t>());
    }
    fail(key, fmt::format("expected a whole number from 0 to {}, got {}", max, json_excerpt(v)));
  }

  // A time in seconds as the simulator computes it (core/units.h: whole picoseconds in 64
  // bits): 0, or 1 ps to Time::max().
  double seconds(const char* key) const {
    const double x = number(key);
    if (x == 0 || (x >= kPicosecond && x <= kMaxSeconds)) return x;
    fail(key, fmt::format("expected a time in seconds, 0 or {:g} (1 ps) to {:.0f}, got {}",
                          kPicosecond, kMaxSeconds, json_excerpt(at(key))));
  }

  // A figure (Gbit/s, tokens/s, dollars, bytes, wall seconds): 0, or from 1e-30 to 1e30, far
  // beyond what a run gives either way, so that the figures derived from it (tokens/s per
  // million dollars) stay finite and the plots can be drawn.
  double amount(const char* key) const {
    const double x = number(key);
    if (x == 0 || (x >= kSmallest && x <= kLargest)) return x;
    fail(key, fmt::format("expected 0 or a number from {:g} to {:g}, got {}", kSmallest, kLargest,
                          json_excerpt(at(key))));
  }

  // A figure derived from the others (a total, a ratio), which the results compute anew: any
  // finite non-negative number (its inputs' ranges bound it, but not within those ranges).
  double derived(const char* key) const {
    const double x = number(key);
    if (std::isfinite(x) && x >= 0) return x;
    fail(key, fmt::format("expected a non-negative number, got {}", json_excerpt(at(key))));
  }

  RecordReader object(const char* key) const { return RecordReader(at(key), field(key)); }

 private:
  double number(const char* key) const {
    const json& v = at(key);
    if (!v.is_number()) fail(key, fmt::format("expected a number, got {}", json_excerpt(v)));
    return v.get<double>();
  }

  static constexpr double kPicosecond = 1e-12;
  static constexpr double kMaxSeconds = Time::max().seconds();
  static constexpr double kSmallest = 1e-30;
  static constexpr double kLargest = 1e30;

  const json& object_;
  std::string prefix_;
};

fabric::CostBreakdown cost_components(const RecordReader& r) {
  r.only({"nics", "transceivers", "switch_ports", "ocs_ports", "patch_panel_ports", "fibres"});
  fabric::CostBreakdown c;
  c.nics = r.amount("nics");
  c.transceivers = r.amount("transceivers");
  c.switch_ports = r.amount("switch_ports");
  c.ocs_ports = r.amount("ocs_ports");
  c.patch_panel_ports = r.amount("patch_panel_ports");
  c.fibres = r.amount("fibres");
  return c;
}

// [[start_s, end_s, reconfiguration], ...], each span in order within itself.
std::vector<TimelineSpan> timeline_spans(const RecordReader& in) {
  const json& spans =
      in.array("timeline", kMaxTimelineSpans, "[start_s, end_s, reconfiguration] spans");
  std::vector<TimelineSpan> out;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const json& span = spans[i];
    const std::string where = fmt::format("timeline[{}]", i);
    const auto valid_time = [](const json& v) {
      if (!v.is_number()) return false;
      const double x = v.get<double>();
      return x == 0 || (x >= 1e-12 && x <= Time::max().seconds());
    };
    if (!span.is_array() || span.size() != 3 || !valid_time(span[0]) || !valid_time(span[1]) ||
        !span[2].is_boolean() || span[1].get<double>() < span[0].get<double>()) {
      in.fail(where, fmt::format("expected [start_s, end_s, reconfiguration] with 0 <= start_s "
                                 "<= end_s and a true or false, got {}",
                                 json_excerpt(span)));
    }
    out.push_back({span[0].get<double>(), span[1].get<double>(), span[2].get<bool>()});
  }
  return out;
}

// [{"name", "used", "bound" (when used), "detail"}, ...] (shortcuts_json).
std::vector<sim::Shortcut> record_shortcuts(const RecordReader& in) {
  const json& list = in.array("shortcuts", 16, "shortcuts");
  std::vector<sim::Shortcut> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const RecordReader s(list[i], fmt::format("shortcuts[{}]", i));
    s.only({"name", "used", "bound", "detail"});
    sim::Shortcut shortcut;
    shortcut.name = s.string("name");
    const json& used = s.at("used");
    if (!used.is_boolean()) {
      s.fail("used", fmt::format("expected true or false, got {}", json_excerpt(used)));
    }
    shortcut.used = used.get<bool>();
    if (shortcut.used) shortcut.bound = s.derived("bound");
    shortcut.detail = s.string("detail");
    out.push_back(std::move(shortcut));
  }
  return out;
}

// ["sentence", ...] (workload::megatron_refusals).
std::vector<std::string> record_warnings(const RecordReader& in) {
  const json& list = in.array("framework_warnings", 16, "sentences");
  std::vector<std::string> out;
  for (const json& w : list) {
    if (!w.is_string() || w.get_ref<const std::string&>().empty()) {
      in.fail("framework_warnings",
              fmt::format("expected sentences (strings), got {}", json_excerpt(w)));
    }
    out.push_back(w.get<std::string>());
  }
  return out;
}

bool is_fingerprint(const std::string& s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

SweepRun sweep_run_from_json(const nlohmann::json& j, const std::string& source,
                             const std::string& where) {
  try {
    const RecordReader in(j, "");
    in.only({"index",
             "fingerprint",
             "fields",
             "model",
             "link_gbps",
             "fabric",
             "fabric_spec",
             "all_to_all",
             "gpus",
             "iteration_time_s",
             "tokens_per_s",
             "tokens_per_s_per_musd",
             "tokens_per_s_per_gpu",
             "model_tflops_per_gpu",
             "mfu",
             "busiest_expert_over_mean",
             "cost_usd",
             "cost_built_usd_by_component",
             "cost_paper_usd_by_component",
             "reconfiguration",
             "timeline",
             "iterations",
             "compute_s",
             "exposed_communication_s",
             "shortcuts",
             "framework_warnings",
             "error",
             "wall_time_s"});
    SweepRun run;
    run.index = static_cast<std::size_t>(in.count("index", kMaxSweepPoints - 1));
    run.fingerprint = in.string("fingerprint");
    if (!is_fingerprint(run.fingerprint)) {
      in.fail("fingerprint", fmt::format("expected 16 hexadecimal digits (0-9, a-f), got {}",
                                         json_excerpt(in.at("fingerprint"))));
    }
    // The point's fields, the derived figures and the totals are written for readers of the
    // journal; the results take them from the sweep file and recompute them. They are checked all
    // the same.
    const json& fields = in.at("fields");
    if (!fields.is_object()) {
      in.fail("fields",
              fmt::format("expected an object of field: value, got {}", json_excerpt(fields)));
    }
    const RecordReader field_values(fields, "fields");
    for (const auto& [key, value] : fields.items())
      field_values.string(key.c_str());
    if (!in.at("tokens_per_s_per_musd").is_null()) in.derived("tokens_per_s_per_musd");
    const RecordReader totals = in.object("cost_usd");
    totals.only({"built", "paper"});
    totals.derived("built");
    totals.derived("paper");

    CompareRun& r = run.figures;
    r.model = in.string("model");
    r.link_gbps = in.amount("link_gbps");
    r.fabric = in.string("fabric");
    r.fabric_spec = in.string("fabric_spec");
    // Absent from the records of mfabric before the all-to-all was named, and from sweeps'.
    if (in.has("all_to_all")) r.all_to_all = in.string("all_to_all");
    r.gpus = static_cast<int>(in.count("gpus", std::numeric_limits<int>::max()));
    r.iteration_time_s = in.seconds("iteration_time_s");
    r.tokens_per_s = in.amount("tokens_per_s");
    // Absent from the records of mfabric before these figures, and from points without a model:
    // 0 (resumed runs set them anew from their experiment, fill_gpu_throughput).
    if (in.has("tokens_per_s_per_gpu")) r.tokens_per_s_per_gpu = in.amount("tokens_per_s_per_gpu");
    if (in.has("model_tflops_per_gpu")) r.model_tflops_per_gpu = in.amount("model_tflops_per_gpu");
    if (in.has("mfu")) r.mfu = in.amount("mfu");
    if (in.has("busiest_expert_over_mean")) {
      r.busiest_expert_over_mean = in.amount("busiest_expert_over_mean");
    }
    r.cost_built = cost_components(in.object("cost_built_usd_by_component"));
    r.cost_paper = cost_components(in.object("cost_paper_usd_by_component"));
    if (in.has("reconfiguration")) {
      const RecordReader c = in.object("reconfiguration");
      c.only({"policy", "planner", "count", "time_s", "held_time_s", "circuit_bytes", "eps_bytes",
              "critical_holds", "critical_held_s", "holds", "all_to_alls", "regions"});
      ReconfigurationSummary s;
      s.policy = c.string("policy");
      s.planner = c.string("planner");
      s.count = static_cast<std::int64_t>(
          c.count("count", static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
      s.time_s = c.seconds("time_s");
      s.held_time_s = c.seconds("held_time_s");
      s.circuit_bytes = c.amount("circuit_bytes");
      s.eps_bytes = c.amount("eps_bytes");
      // Absent from the records of mfabric before the critical path was recorded.
      if (c.has("critical_holds")) {
        s.critical_holds = static_cast<std::int64_t>(c.count("critical_holds", s.count));
      }
      if (c.has("critical_held_s")) s.critical_held_s = c.seconds("critical_held_s");
      constexpr auto kMaxCount =
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      if (c.has("holds")) s.holds = static_cast<std::int64_t>(c.count("holds", kMaxCount));
      if (c.has("all_to_alls")) {
        s.all_to_alls = static_cast<std::int64_t>(c.count("all_to_alls", kMaxCount));
      }
      if (c.has("regions")) {
        s.regions = static_cast<int>(c.count("regions", std::numeric_limits<int>::max()));
      }
      r.reconfiguration = s;
    }
    if (in.has("timeline")) run.timeline = timeline_spans(in);
    // Absent from the records of mfabric before a run's time breakdown was recorded.
    if (in.has("iterations")) {
      r.iterations = static_cast<int>(in.count("iterations", std::numeric_limits<int>::max()));
    }
    if (in.has("compute_s")) r.compute_s = in.amount("compute_s");
    if (in.has("exposed_communication_s")) {
      r.exposed_communication_s = in.amount("exposed_communication_s");
    }
    if (in.has("shortcuts")) r.shortcuts = record_shortcuts(in);
    if (in.has("framework_warnings")) {
      r.framework_warnings = record_warnings(in);
    }
    if (in.has("error")) {
      r.error = in.string("error");
      if (r.error.empty()) in.fail("error", "expected why the point failed, got an empty string");
    }
    if (in.has("wall_time_s")) r.wall_time_s = in.amount("wall_time_s");
    return run;
  } catch (const Error& e) {
    const std::string field =
        where.empty() ? e.field() : (e.field().empty() ? where : where + ": " + e.field());
    throw Error(source, field, e.message());
  }
}

SweepRun run_point(const SweepSpec& spec, std::size_t k) {
  SweepRun run;
  run.index = k;
  run.fingerprint = point_fingerprint(spec, k);
  const auto start = std::chrono::steady_clock::now();
  CompareRun& r = run.figures;
  try {
    const config::Experiment e = point_experiment(spec, k);
    r.model = e.model ? e.model->model : "";
    r.link_gbps = e.cluster.link.bps() / 1e9;
    r.fabric = e.fabric.name();
    r.all_to_all = all_to_all_of(e);
    const sim::Simulation s = sim::simulate(e);
    fill_run_figures(r, s, tokens_per_iteration(e));
  } catch (const Error& e) {
    r.error = e.what();
  } catch (const std::exception& e) {
    // A fault of ours or the machine's (out of memory), not of the input: the point is
    // reported and the others go on.
    r.error = fmt::format("internal error: {}", e.what());
  }
  r.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A record goes to the journal and, under MPI, to rank 0 as JSON and is read back strictly:
  // one the reader would refuse (a figure out of range) is a failed point here, never a journal
  // that cannot be resumed.
  try {
    (void)sweep_run_from_json(sweep_run_json(spec, run), "", "");
  } catch (const Error& e) {
    CompareRun failed;
    failed.model = r.model;
    failed.fabric = r.fabric;
    failed.fabric_spec = r.fabric_spec;
    failed.wall_time_s = std::isfinite(r.wall_time_s) ? std::max(0.0, r.wall_time_s) : 0;
    failed.error = fmt::format("internal error: a figure of the run is out of range: {}", e.what());
    r = std::move(failed);
  }
  return run;
}

std::vector<SweepRun> run_points(const SweepSpec& spec, const std::vector<std::size_t>& indices,
                                 const std::vector<double>& costs, int jobs,
                                 const std::function<void(const SweepRun&)>& on_done,
                                 ParallelRun* parallel) {
  std::vector<SweepRun> out(indices.size());
  // The costliest first, so that the threads finish together; ties keep the sweep's order.
  std::vector<std::size_t> order(indices.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs.at(a) > costs.at(b); });
  std::mutex done_mutex;
  const ParallelRun used = run_in_parallel(order.size(), jobs, [&](std::size_t i) {
    SweepRun run = run_point(spec, indices[order[i]]);
    const std::lock_guard<std::mutex> lock(done_mutex);
    out[order[i]] = std::move(run);
    if (on_done) on_done(out[order[i]]);
  });
  if (parallel) *parallel = used;
  return out;
}

}  // namespace mfabric::study
