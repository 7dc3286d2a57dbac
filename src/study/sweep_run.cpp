#include "study/sweep_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "core/error.h"
#include "study/parallel.h"
#include "study/run_json.h"

namespace mfabric::study {

nlohmann::json sweep_run_json(const SweepSpec& spec, const SweepRun& run, bool timing) {
  const CompareRun& r = run.figures;
  nlohmann::json fields = nlohmann::json::object();
  if (run.index < spec.points.size()) {
    for (const FieldValue& f : spec.points[run.index].fields)
      fields[f.path] = f.value;
  }
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
  if (r.reconfiguration) {
    j["reconfiguration"] = reconfiguration_json(*r.reconfiguration);
  }
  if (!r.error.empty()) j["error"] = r.error;
  if (timing) j["wall_time_s"] = r.wall_time_s;
  return j;
}

SweepRun sweep_run_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    SweepRun run;
    run.index = j.at("index").get<std::size_t>();
    run.fingerprint = j.at("fingerprint").get<std::string>();
    CompareRun& r = run.figures;
    r.model = j.at("model").get<std::string>();
    r.link_gbps = j.at("link_gbps").get<double>();
    r.fabric = j.at("fabric").get<std::string>();
    r.fabric_spec = j.at("fabric_spec").get<std::string>();
    r.gpus = j.at("gpus").get<int>();
    r.iteration_time_s = j.at("iteration_time_s").get<double>();
    r.tokens_per_s = j.at("tokens_per_s").get<double>();
    r.cost_built = cost_components_from_json(j.at("cost_built_usd_by_component"));
    r.cost_paper = cost_components_from_json(j.at("cost_paper_usd_by_component"));
    if (j.contains("reconfiguration"))
      r.reconfiguration = reconfiguration_from_json(j.at("reconfiguration"));
    if (j.contains("error")) r.error = j.at("error").get<std::string>();
    if (j.contains("wall_time_s")) r.wall_time_s = j.at("wall_time_s").get<double>();
    return run;
  } catch (const nlohmann::json::exception& e) {
    throw Error("", where, fmt::format("not a sweep point's record: {}", e.what()));
  }
}

SweepRun run_point(const SweepSpec& spec, std::size_t k) {
  SweepRun run;
  run.index = k;
  run.fingerprint = point_fingerprint(spec, k);
  const auto start = std::chrono::steady_clock::now();
  CompareRun& r = run.figures;
  try {
    const sim::Experiment e = point_experiment(spec, k);
    r.model = e.model ? e.model->model : "";
    r.link_gbps = e.cluster.link.bps() / 1e9;
    r.fabric = e.fabric.name();
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
  return run;
}

std::vector<SweepRun> run_points(const SweepSpec& spec, const std::vector<std::size_t>& indices,
                                 const std::vector<double>& costs, int jobs,
                                 const std::function<void(const SweepRun&)>& on_done) {
  std::vector<SweepRun> out(indices.size());
  // The costliest first, so that the threads finish together; ties keep the sweep's order.
  std::vector<std::size_t> order(indices.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs.at(a) > costs.at(b); });
  std::mutex done_mutex;
  run_in_parallel(order.size(), jobs, [&](std::size_t i) {
    SweepRun run = run_point(spec, indices[order[i]]);
    const std::lock_guard<std::mutex> lock(done_mutex);
    out[order[i]] = std::move(run);
    if (on_done) on_done(out[order[i]]);
  });
  return out;
}

}  // namespace mfabric::study
