#include "report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <sstream>

#include "core/json_text.h"
#include "core/output_files.h"
#include "core/output_text.h"
#include "core/provenance.h"
#include "report/compare_html.h"
#include "report/compare_paper.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/table.h"
#include "study/run_json.h"

namespace mfabric::report {
namespace {

using study::CompareResult;
using study::CompareRun;

nlohmann::json optional_number(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

// "400G"; {:g}, so that a link speed that is not a number still prints.
std::string link_text(double gbps) {
  return fmt::format("{:g}G", gbps);
}

bool finite_positive(double x) {
  return std::isfinite(x) && x > 0;
}

// A run whose figures can be quoted: it finished, with a finite, positive iteration time.
bool finished(const CompareRun& run) {
  return run.error.empty() && finite_positive(run.iteration_time_s);
}

// min-max of a list, "1.23x" or "1.10-1.45x".
std::string span_text(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.front() == v.back() || fmt::format("{:.2f}", v.front()) == fmt::format("{:.2f}", v.back()))
    return ratio(v.front());
  return fmt::format("{:.2f}-{}", v.front(), ratio(v.back()));
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s / static_cast<double>(v.size());
}

std::string noun_count(std::int64_t n, const char* noun) {
  return fmt::format("{} {}{}", with_commas(n), noun, n == 1 ? "" : "s");
}

// The values of `field` over the runs, each once, in the order of the runs (a NaN once).
template <class Field>
std::vector<std::string> distinct(const std::vector<CompareRun>& runs, Field field) {
  std::vector<std::string> out;
  for (const CompareRun& run : runs) {
    std::string v = field(run);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
  }
  return out;
}

std::string milliseconds_text(double s) {
  return fmt::format("{:.3g} ms", s * 1e3);
}

// One fabric that reconfigures (label `reference`, its runs by model) against every other fabric
// at one link speed: speed, perf/$ and network cost over the models both ran; empty when no other
// fabric ran a model it ran.
using RunsByModel = std::map<std::string, const CompareRun*>;
std::string versus_text(const std::string& reference, const RunsByModel& own,
                        const std::map<std::string, RunsByModel>& fabrics, double link,
                        const char* convention_name, fabric::CostConvention convention) {
  std::vector<std::string> parts;
  for (const auto& [fabric, models] : fabrics) {
    if (fabric == reference) continue;
    std::vector<double> speed, per_dollar, cheaper;
    for (const auto& [model, other] : models) {
      const auto mine = own.find(model);
      if (mine == own.end()) continue;
      const CompareRun& a = *mine->second;
      speed.push_back(other->iteration_time_s / a.iteration_time_s);
      const double cost_a = a.cost(convention).total();
      const double cost_o = other->cost(convention).total();
      if (finite_positive(cost_a) && finite_positive(cost_o)) {
        per_dollar.push_back((other->iteration_time_s * cost_o) / (a.iteration_time_s * cost_a));
        cheaper.push_back(cost_o / cost_a);
      }
    }
    if (speed.empty()) continue;
    std::string line = fmt::format("  vs {}: speed {} (mean {})", printable(fabric),
                                   span_text(speed), ratio(mean(speed)));
    if (!per_dollar.empty()) {
      line += fmt::format(", perf/$ {}, network cost {} of {}'s ({})", span_text(per_dollar),
                          ratio(mean(cheaper)), printable(reference), convention_name);
    }
    parts.push_back(line);
  }
  if (parts.empty()) return "";
  std::string out =
      fmt::format("\n{} at {} ({} model{}; ratios > 1x favour {}):\n", printable(reference),
                  link_text(link), own.size(), own.size() == 1 ? "" : "s", printable(reference));
  for (const std::string& p : parts)
    out += p + "\n";
  return out;
}

}  // namespace

std::string spread_text(const CompareResult& r) {
  const std::string seeds = fmt::format("{} seeds", r.spread_seeds);
  if (r.spread_skew_band)
    return r.spread_seeds > 1 ? seeds + " and the routing skew band" : "the routing skew band";
  return r.spread_seeds > 1 ? seeds : "one seed";
}

std::string baseline_text(const CompareRun& baseline) {
  if (baseline.all_to_all.empty()) return "the " + baseline.fabric;
  std::string text =
      fmt::format("the {} with the {} all-to-all", baseline.fabric, baseline.all_to_all);
  if (baseline.all_to_all_trials.size() > 1) {
    std::vector<std::string> names;
    for (const study::AllToAllTrial& t : baseline.all_to_all_trials)
      names.push_back(t.algorithm);
    const std::string last = names.back();
    names.pop_back();
    text += fmt::format(", the fastest there of {} and {}", join_strings(names, ", "), last);
  }
  return text;
}

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (std::abs(s) >= 100) return fmt::format("{:.1f} s", s);
  if (std::abs(s) >= 1 || s == 0) return fmt::format("{:.2f} s", s);
  return fmt::format("{:.3g} s", s);
}

std::string compare_set_text(const CompareResult& r) {
  std::size_t failed = 0;
  for (const CompareRun& run : r.runs)
    failed += run.error.empty() ? 0 : 1;
  const std::vector<std::string> models =
      distinct(r.runs, [](const CompareRun& run) { return run.model; });
  const std::vector<std::string> links =
      distinct(r.runs, [](const CompareRun& run) { return link_text(run.link_gbps); });
  const std::vector<std::string> fabrics =
      distinct(r.runs, [](const CompareRun& run) { return run.fabric; });
  const auto listed = [](const std::vector<std::string>& names, const char* noun) {
    const std::string head = noun_count(static_cast<std::int64_t>(names.size()), noun);
    return names.empty() ? head : fmt::format("{} ({})", head, join_strings(names, ", "));
  };
  std::size_t tried = 0;
  for (const CompareRun& run : r.runs)
    tried += run.all_to_all_trials.size();
  const std::string baselines =
      tried > 0 ? fmt::format(
                      "; each electrical fabric with its fastest all-to-all ({} runs tried "
                      "for it, --baselines as-given for the fabrics' own)",
                      tried)
                : "";
  return fmt::format(
      "{}{} ({} failed): {} at {} on {}; seed {}, {}calibration {}, assumptions {}, {} backend; "
      "network cost by {}{}.",
      r.description.empty() ? std::string() : r.description + ": ",
      noun_count(static_cast<std::int64_t>(r.runs.size()), "run"), failed, listed(models, "model"),
      listed(links, "link speed"), listed(fabrics, "fabric"), r.seed,
      r.gpu.empty() ? std::string() : fmt::format("{} GPUs, ", r.gpu), r.calibration,
      study::to_string(r.assumptions), r.backend, study::cost_convention_label(r.cost_convention),
      baselines);
}

std::vector<std::string> compare_headline(const CompareResult& r) {
  std::vector<std::string> out;
  const std::vector<study::Verdict> all_verdicts =
      study::verdicts(r.runs, study::counted_convention(r.cost_convention));
  const fabric::CostConvention convention = study::counted_convention(r.cost_convention);
  const char* convention_name = study::cost_convention_label(convention);
  std::vector<std::string> variants;
  for (const CompareRun& run : r.runs)
    if (study::is_reconfigurable_run(run) &&
        std::find(variants.begin(), variants.end(), run.fabric) == variants.end())
      variants.push_back(run.fabric);
  if (variants.empty() && !r.runs.empty()) {
    out.push_back(
        "No mFabric run in this comparison, so there is no verdict on mFabric: the fabrics are "
        "related to the fat-tree in the plots and the table.");
  }
  for (const CompareRun& m : r.runs) {
    if (!study::is_reconfigurable_run(m)) continue;
    const fabric::FabricKind* kind = study::kind_of_run(m);
    const std::string label = kind ? kind->label_or(m.fabric) : m.fabric;
    const std::string who = variants.size() > 1 ? fmt::format("{} ({})", label, m.fabric) : label;
    // Which job ran (the paper's, a recipe's, the file's), when the result says.
    std::string job;
    for (const config::TrainingJob& w : r.models)
      if (w.model == m.model) job = fmt::format(" ({})", config::job_text(w));
    const std::string where = fmt::format("{} at {}{}", m.model, link_text(m.link_gbps), job);
    if (!finished(m)) {
      out.push_back(fmt::format("{}: the {} run {}, so there is no verdict.", where, m.fabric,
                                m.error.empty() ? "has no iteration time" : "failed"));
      continue;
    }
    const double cost = m.cost(convention).total();
    const CompareRun* fat_tree = study::fat_tree_of(r.runs, m);
    if (!fat_tree) {
      bool fat_tree_failed = false;
      for (const CompareRun& other : r.runs)
        fat_tree_failed |= study::is_baseline_run(other) && other.model == m.model &&
                           other.link_gbps == m.link_gbps && !finished(other);
      std::string own = fmt::format("{}: {} takes {} per iteration", where, who,
                                    seconds_text(m.iteration_time_s));
      if (finite_positive(cost))
        own += fmt::format(" and its network costs {} ({})", dollars(cost), convention_name);
      own += fat_tree_failed ? "; the fat-tree run failed, so there is nothing to compare it with."
                             : "; there is no fat-tree run to compare it with.";
      out.push_back(own);
      continue;
    }
    const double speed = fat_tree->iteration_time_s / m.iteration_time_s;
    // The range over the spread's pairs, where it ran.
    std::optional<study::Verdict> spread;
    for (const study::Verdict& v : all_verdicts) {
      if (v.model == m.model && v.link_gbps == m.link_gbps && v.fabric == m.fabric && v.pairs > 1)
        spread = v;
    }
    const std::string over = spread_text(r);
    std::string verdict =
        fmt::format("{}: {} trains at {} the speed of {} ({}: {} vs {} per iteration)", where, who,
                    spread ? fmt::format("{} ({}-{} over {})", ratio(speed),
                                         ratio(spread->speed.low), ratio(spread->speed.high), over)
                           : ratio(speed),
                    baseline_text(*fat_tree), faster_or_slower(speed),
                    seconds_text(m.iteration_time_s), seconds_text(fat_tree->iteration_time_s));
    const double fat_tree_cost = fat_tree->cost(convention).total();
    if (finite_positive(cost) && finite_positive(fat_tree_cost)) {
      const double cost_ratio = cost / fat_tree_cost;
      verdict += fmt::format(
          " for {} its network cost ({} vs {}, {}), {} its perf/$.", ratio(cost_ratio),
          dollars(cost), dollars(fat_tree_cost), convention_name,
          spread && spread->perf_per_dollar ? fmt::format("{} ({}-{})", ratio(speed / cost_ratio),
                                                          ratio(spread->perf_per_dollar->low),
                                                          ratio(spread->perf_per_dollar->high))
                                            : ratio(speed / cost_ratio));
    } else {
      verdict += "; there is no network cost to set against it.";
    }
    // A range that crosses 1x: which fabric is faster depends on the routing, by this much.
    if (spread && spread->speed.low < 1 && spread->speed.high > 1) {
      verdict +=
          fmt::format(" Which is faster depends on routing: from {} ({}) to {} ({}) over {}.",
                      ratio(spread->speed.low), faster_or_slower(spread->speed.low),
                      ratio(spread->speed.high), faster_or_slower(spread->speed.high), over);
    }
    // The routing skew the speed rests on (it can flip the verdict: docs/routing.md).
    if (m.busiest_expert_over_mean) {
      verdict +=
          fmt::format(" Its expert routing gives the busiest expert {:.2f}x the mean's tokens.",
                      *m.busiest_expert_over_mean);
    }
    out.push_back(verdict);
  }
  std::vector<std::string> failed;
  for (const CompareRun& run : r.runs)
    if (!run.error.empty())
      failed.push_back(
          fmt::format("{} at {} on {}", run.model, link_text(run.link_gbps), run.fabric));
  if (!failed.empty()) {
    out.push_back(fmt::format("{} failed: {} (the errors are with the results).",
                              noun_count(static_cast<std::int64_t>(failed.size()), "run"),
                              join_strings(failed, "; ")));
  }
  return out;
}

std::optional<double> speed_vs_fat_tree(const CompareRun& run) {
  if (!run.relative_iteration_time || !(*run.relative_iteration_time > 0)) return std::nullopt;
  return 1 / *run.relative_iteration_time;
}

std::string all_to_all_cell(const CompareRun& run) {
  if (run.all_to_all.empty()) return "-";
  // The fastest of several tried: marked, the others' times are in results.json.
  return run.all_to_all_trials.size() > 1 ? run.all_to_all + "*" : run.all_to_all;
}

std::vector<std::string> slowdown_causes(const CompareRun& a, const CompareRun& b) {
  std::vector<std::string> causes;
  if (a.reconfiguration && b.reconfiguration) {
    const auto& ca = *a.reconfiguration;
    const auto& cb = *b.reconfiguration;
    if (ca.count > cb.count) {
      causes.push_back(fmt::format("more reconfigurations ({} vs {})", with_commas(ca.count),
                                   with_commas(cb.count)));
    }
    if (ca.critical_held_s > cb.critical_held_s) {
      causes.push_back(fmt::format(
          "more of the all-to-alls' holds for circuits on the critical path ({} vs {}, {} vs {} "
          "holds)",
          seconds_text(ca.critical_held_s), seconds_text(cb.critical_held_s),
          with_commas(ca.critical_holds), with_commas(cb.critical_holds)));
    }
    if (ca.planner != cb.planner || ca.policy != cb.policy) {
      causes.push_back(fmt::format("another plan ({} {} vs {} {})", ca.policy, ca.planner,
                                   cb.policy, cb.planner));
    }
  }
  if (!a.all_to_all.empty() && !b.all_to_all.empty() && a.all_to_all != b.all_to_all)
    causes.push_back(fmt::format("another all-to-all ({} vs {})", a.all_to_all, b.all_to_all));
  if (a.exposed_communication_s > b.exposed_communication_s) {
    causes.push_back(fmt::format("more time waiting for communication per GPU ({} vs {})",
                                 seconds_text(a.exposed_communication_s),
                                 seconds_text(b.exposed_communication_s)));
  }
  return causes;
}

std::vector<Surprise> surprises(const CompareResult& r) {
  // The finished runs of each model and fabric by link speed.
  std::map<std::pair<std::string, std::string>, std::map<double, const CompareRun*>> by;
  for (const CompareRun& run : r.runs) {
    if (finished(run)) by[{run.model, run.fabric}][run.link_gbps] = &run;
  }
  std::vector<Surprise> out;
  for (const auto& [key, runs] : by) {
    const CompareRun* slower_link = nullptr;
    for (const auto& [link, run] : runs) {
      if (slower_link != nullptr &&
          run->iteration_time_s > slower_link->iteration_time_s * (1 + kSurpriseThreshold)) {
        const CompareRun& a = *run;          // the faster link's run
        const CompareRun& b = *slower_link;  // the slower link's
        Surprise x{a.model,
                   a.fabric,
                   a.link_gbps,
                   b.link_gbps,
                   a.iteration_time_s / b.iteration_time_s - 1,
                   slowdown_causes(a, b)};
        out.push_back(std::move(x));
      }
      slower_link = run;
    }
  }
  return out;
}

std::string surprise_text(const Surprise& x) {
  std::string text = fmt::format(
      "{} on {}: at {} the iteration is {:.1f}% slower than at {}, though the links are faster",
      x.model, x.fabric, link_text(x.link_gbps), 100 * x.slower_by, link_text(x.than_link_gbps));
  if (x.causes.empty()) {
    return text +
           "; the figures a comparison keeps show no cause (simulate --trace on both runs "
           "shows where the time goes).";
  }
  return text + fmt::format("; what the runs show: {}.", join_strings(x.causes, "; "));
}

std::vector<std::string> time_breakdown_text(const CompareRun& run) {
  if (!run.reconfiguration || !finished(run)) return {};
  const study::ReconfigurationSummary& c = *run.reconfiguration;
  const double t = run.iteration_time_s;
  const double iterations = std::max(1, run.iterations);
  const std::string over =
      run.iterations > 1 ? fmt::format(" over its {} iterations", run.iterations) : "";
  const std::string regions =
      c.regions > 0 ? noun_count(c.regions, "region") : std::string("regions");
  std::vector<std::string> out;
  if (finite_positive(run.compute_s) && std::isfinite(run.exposed_communication_s)) {
    const double idle = std::max(0.0, t - run.compute_s - run.exposed_communication_s);
    out.push_back(fmt::format(
        "{} at {} on {}: of the {} iteration, a GPU computes for {}, waits for communication "
        "for {} (holds for circuits included) and is otherwise idle for {} (pipeline bubbles: "
        "waiting for other GPUs' work); "
        "means over the job's {} GPUs.",
        run.model, link_text(run.link_gbps), run.fabric, seconds_text(t),
        seconds_text(run.compute_s), seconds_text(run.exposed_communication_s), seconds_text(idle),
        with_commas(run.gpus)));
  } else {
    out.push_back(fmt::format("{} at {} on {}, {} per iteration:", run.model,
                              link_text(run.link_gbps), run.fabric, seconds_text(t)));
  }
  out.push_back(fmt::format("{}{}: circuits down for {} summed over the {}.",
                            noun_count(c.count, "reconfiguration"), over, seconds_text(c.time_s),
                            regions));
  if (c.holds == 0) {
    out.push_back(fmt::format("No all-to-all waited for circuits{}.", over));
    return out;
  }
  const std::string of_all =
      c.all_to_alls > 0 ? fmt::format(" of {}", with_commas(c.all_to_alls)) : "";
  std::string holds = fmt::format(
      "All-to-alls held for circuits: {}{}{}, {} summed over those holds ({} each on average); "
      "the {}, and the EP groups within one, wait at the same time, so the sum is not part of "
      "the iteration. On the critical path: {}",
      with_commas(c.holds), of_all, over, seconds_text(c.held_time_s),
      milliseconds_text(c.held_time_s / static_cast<double>(c.holds)), regions,
      noun_count(c.critical_holds, "hold"));
  const double critical = c.critical_held_s / iterations;
  holds +=
      fmt::format(", {}{} of the {} iteration ({:.1f}%).", seconds_text(critical),
                  run.iterations > 1 ? " per iteration" : "", seconds_text(t), 100 * critical / t);
  out.push_back(holds);
  return out;
}

nlohmann::json compare_json(const CompareResult& r, bool timing) {
  nlohmann::json runs = nlohmann::json::array();
  for (const CompareRun& run : r.runs) {
    nlohmann::json j = {
        {"model", run.model},
        {"link_gbps", run.link_gbps},
        {"fabric", run.fabric},
        {"fabric_spec", run.fabric_spec},
        {"all_to_all", run.all_to_all},
        {"gpus", run.gpus},
        {"iterations", run.iterations},
        {"iteration_time_s", run.iteration_time_s},
        {"relative_iteration_time", optional_number(run.relative_iteration_time)},
        {"speed_vs_fat_tree", optional_number(speed_vs_fat_tree(run))},
        {"compute_s", run.compute_s},
        {"exposed_communication_s", run.exposed_communication_s},
        {"tokens_per_s", run.tokens_per_s},
        {"tokens_per_s_per_gpu", run.tokens_per_s_per_gpu},
        {"model_tflops_per_gpu", run.model_tflops_per_gpu},
        {"mfu", run.mfu},
        {"busiest_expert_over_mean", optional_number(run.busiest_expert_over_mean)},
        {"cost_usd", {{"built", run.cost_built.total()}, {"paper", run.cost_paper.total()}}},
        {"cost_paper_usd_by_component", study::cost_components_json(run.cost_paper)},
        {"cost_built_usd_by_component", study::cost_components_json(run.cost_built)},
        {"perf_per_dollar_vs_fat_tree", optional_number(run.perf_per_dollar_vs_fat_tree)},
    };
    if (run.reconfiguration) {
      const study::ReconfigurationSummary& c = *run.reconfiguration;
      nlohmann::json& k = j["reconfiguration"] = study::reconfiguration_json(c);
      k["holds"] = c.holds;
      k["all_to_alls"] = c.all_to_alls;
      k["regions"] = c.regions;
      k["critical_holds"] = c.critical_holds;
      k["critical_held_s"] = c.critical_held_s;
    }
    if (!run.all_to_all_trials.empty()) {
      nlohmann::json& tried = j["all_to_all_trials"] = nlohmann::json::array();
      for (const study::AllToAllTrial& t : run.all_to_all_trials) {
        nlohmann::json one = {{"algorithm", t.algorithm}};
        if (t.error.empty()) {
          one["iteration_time_s"] = t.iteration_time_s;
        } else {
          one["error"] = t.error;
        }
        tried.push_back(std::move(one));
      }
    }
    if (!run.spread.empty()) {
      nlohmann::json& spread = j["spread"] = nlohmann::json::array();
      for (const study::SpreadRun& x : run.spread) {
        nlohmann::json one = {{"seed", x.seed}, {"skew", x.skew}};
        if (x.error.empty()) {
          one["iteration_time_s"] = x.iteration_time_s;
        } else {
          one["error"] = x.error;
        }
        spread.push_back(std::move(one));
      }
    }
    if (!run.shortcuts.empty()) j["shortcuts"] = study::shortcuts_json(run.shortcuts);
    if (!run.framework_warnings.empty()) j["framework_warnings"] = run.framework_warnings;
    if (!run.error.empty()) j["error"] = run.error;
    if (timing) j["wall_time_s"] = run.wall_time_s;
    runs.push_back(std::move(j));
  }
  nlohmann::json verdicts = nlohmann::json::array();
  const auto range_json = [](const study::RatioRange& x) {
    return nlohmann::json{{"value", x.value}, {"low", x.low}, {"high", x.high}};
  };
  for (const study::Verdict& v :
       study::verdicts(r.runs, study::counted_convention(r.cost_convention))) {
    verdicts.push_back({{"model", v.model},
                        {"link_gbps", v.link_gbps},
                        {"fabric", v.fabric},
                        {"baseline", v.baseline},
                        {"baseline_all_to_all", v.baseline_all_to_all},
                        {"speed", range_json(v.speed)},
                        {"perf_per_dollar", v.perf_per_dollar ? range_json(*v.perf_per_dollar)
                                                              : nlohmann::json(nullptr)},
                        {"pairs", v.pairs}});
  }
  nlohmann::json odd = nlohmann::json::array();
  for (const Surprise& x : surprises(r)) {
    odd.push_back({{"model", x.model},
                   {"fabric", x.fabric},
                   {"link_gbps", x.link_gbps},
                   {"than_link_gbps", x.than_link_gbps},
                   {"slower_by", x.slower_by},
                   {"causes", x.causes}});
  }
  nlohmann::json spans = nlohmann::json::array();
  for (const study::TimelineSpan& s : r.timeline) {
    spans.push_back({{"start_s", s.start_s},
                     {"end_s", s.end_s},
                     {"kind", s.reconfiguration ? "reconfiguration" : "all-to-all"}});
  }
  nlohmann::json models = nlohmann::json::array();
  for (const config::TrainingJob& m : r.models) {
    models.push_back({{"model", m.model},
                      {"tp", m.tp},
                      {"pp", m.pp},
                      {"ep", m.ep},
                      {"dp", m.dp ? nlohmann::json(*m.dp) : nlohmann::json(nullptr)},
                      {"micro_batch", m.micro_batch},
                      {"global_batch", m.global_batch},
                      {"seq", m.seq},
                      {"convention", m.convention},
                      {"job", config::job_text(m)}});
  }
  return {{"schema_version", kCompareSchema},
          {"provenance", provenance_json()},
          {"description", r.description},
          {"cluster",
           {{"servers", r.servers},
            {"gpus_per_server", r.gpus_per_server},
            {"nics_per_server", r.nics_per_server},
            {"gpu", r.gpu}}},
          {"models", std::move(models)},
          {"seed", r.seed},
          {"calibration", r.calibration},
          {"assumptions", study::to_string(r.assumptions)},
          {"baselines", study::to_string(r.baselines)},
          {"spread",
           {{"seeds", r.spread_seeds},
            {"skew_band", r.spread_skew_band},
            {"skew_band_factors", {study::kSkewBandLow, study::kSkewBandHigh}}}},
          {"cost_convention", fabric::to_string(study::counted_convention(r.cost_convention))},
          {"paper_checks", r.assumptions == study::Assumptions::Paper
                               ? paper_checks_json(paper_checks(r))
                               : nlohmann::json::array()},
          {"backend", r.backend},
          {"completion_batching", r.completion_batching},
          {"runs", std::move(runs)},
          {"verdicts", std::move(verdicts)},
          {"surprises", std::move(odd)},
          {"timeline", {{"run", r.timeline_run}, {"spans", std::move(spans)}}}};
}

void write_compare_csv(const CompareResult& r, std::ostream& out) {
  out << provenance_csv_comment();
  out << "model,link_gbps,fabric,all_to_all,gpus,iteration_time_s,relative_iteration_time,speed_vs_"
         "fat_tree,tokens_"
         "per_s,"
         "tokens_per_s_per_gpu,model_tflops_per_gpu,mfu,"
         "cost_built_usd,cost_paper_usd,perf_per_dollar_vs_fat_tree,cost_convention,compute_s,"
         "exposed_communication_s,reconfigurations,reconfiguration_held_s,held_all_to_alls,"
         "critical_held_s,error\n";
  const auto number = [](double x) { return fmt::format("{}", x); };
  const auto optional = [&](const std::optional<double>& x) { return x ? number(*x) : ""; };
  const char* convention = fabric::to_string(study::counted_convention(r.cost_convention));
  for (const CompareRun& run : r.runs) {
    const auto& c = run.reconfiguration;
    out << csv_field(run.model) << ',' << number(run.link_gbps) << ',' << csv_field(run.fabric)
        << ',' << csv_field(run.all_to_all) << ',' << run.gpus << ','
        << number(run.iteration_time_s) << ',' << optional(run.relative_iteration_time) << ','
        << optional(speed_vs_fat_tree(run)) << ',' << number(run.tokens_per_s) << ','
        << number(run.tokens_per_s_per_gpu) << ',' << number(run.model_tflops_per_gpu) << ','
        << number(run.mfu) << ',' << number(run.cost_built.total()) << ','
        << number(run.cost_paper.total()) << ',' << optional(run.perf_per_dollar_vs_fat_tree) << ','
        << convention << ',' << number(run.compute_s) << ',' << number(run.exposed_communication_s)
        << ',' << (c ? std::to_string(c->count) : "") << ',' << (c ? number(c->held_time_s) : "")
        << ',' << (c ? std::to_string(c->holds) : "") << ','
        << (c ? number(c->critical_held_s) : "") << ',' << csv_field(run.error) << '\n';
  }
}

std::string compare_text(const CompareResult& r) {
  const fabric::CostConvention convention = study::counted_convention(r.cost_convention);
  const char* convention_name = study::cost_convention_label(convention);
  std::string out = wrapped(printable(compare_set_text(r)), 100, "", "  ") + "\n";

  Table t(
      {"model", "link", "fabric", "all-to-all", "iteration", "speed vs fat-tree", "tokens/s", "MFU",
       fmt::format("cost ({})", convention_name), "perf/$ vs fat-tree", "reconfigurations"},
      {Table::Align::Left, Table::Align::Right, Table::Align::Left, Table::Align::Left,
       Table::Align::Right, Table::Align::Right, Table::Align::Right, Table::Align::Right,
       Table::Align::Right, Table::Align::Right, Table::Align::Right});
  const auto optional_ratio = [](const std::optional<double>& x) {
    return x && std::isfinite(*x) ? ratio(*x) : std::string("-");
  };
  const auto finite_or = [](double x, auto format) {
    return std::isfinite(x) ? format(x) : std::string("n/a");
  };
  for (const CompareRun& run : r.runs) {
    if (!run.error.empty()) {
      t.add_row({run.model, link_text(run.link_gbps), run.fabric, all_to_all_cell(run), "failed",
                 "-", "-", "-", "-", "-", "-"});
      continue;
    }
    t.add_row({run.model, link_text(run.link_gbps), run.fabric, all_to_all_cell(run),
               finite_or(run.iteration_time_s, [](double x) { return fmt::format("{:.3f}s", x); }),
               optional_ratio(speed_vs_fat_tree(run)),
               finite_or(run.tokens_per_s, [](double x) { return whole_number(x); }),
               run.mfu > 0 ? fmt::format("{:.1f}%", 100 * run.mfu) : std::string("-"),
               finite_or(run.cost(convention).total(), [](double x) { return dollars(x); }),
               optional_ratio(run.perf_per_dollar_vs_fat_tree),
               run.reconfiguration ? with_commas(run.reconfiguration->count) : "-"});
  }
  out += t.render();

  std::string verdict;
  for (const std::string& sentence : compare_headline(r))
    verdict += wrapped(printable(sentence), 100, "", "  ");
  if (!verdict.empty()) out += "\n" + verdict;
  // A faster link that made an iteration slower, with what the runs show of why.
  std::string odd;
  for (const Surprise& x : surprises(r))
    odd += wrapped(printable(surprise_text(x)), 100, "", "  ");
  if (!odd.empty()) out += "\nsurprises:\n" + odd;

  // Each fabric that reconfigures (mFabric) against each other fabric, per link speed, over the
  // models.
  std::map<double, std::map<std::string, std::map<std::string, const CompareRun*>>> by;
  for (const CompareRun& run : r.runs) {
    if (finished(run)) by[run.link_gbps][run.fabric][run.model] = &run;
  }
  std::string per_link;
  for (const auto& [link, fabrics] : by) {
    for (const auto& [reference, own] : fabrics) {
      if (!study::is_reconfigurable_run(*own.begin()->second)) continue;
      per_link += versus_text(reference, own, fabrics, link, convention_name, convention);
    }
  }
  out += per_link;

  std::string breakdown;
  for (const CompareRun& run : r.runs) {
    const std::vector<std::string> sentences = time_breakdown_text(run);
    for (std::size_t i = 0; i < sentences.size(); ++i)
      breakdown += wrapped(printable(sentences[i]), 100, i == 0 ? "  " : "    ", "    ");
  }
  if (!breakdown.empty()) out += "\nwhere mFabric's time goes:\n" + breakdown;

  std::string failures;
  for (const CompareRun& run : r.runs) {
    if (!run.error.empty()) {
      // Names and messages hold user text (file names, --fabrics specs): printable() keeps
      // control characters off the terminal.
      failures +=
          fmt::format("failed: {} {} {}: {}\n", printable(run.model), link_text(run.link_gbps),
                      printable(run.fabric), printable(run.error));
    }
  }
  if (!failures.empty()) out += "\n" + failures;
  if (r.assumptions == study::Assumptions::Paper) out += paper_checks_text(paper_checks(r));
  return out;
}

void check_compare_outputs(const std::string& dir) {
  check_output_set(dir, std::vector<std::string>(std::begin(kCompareOutputFiles),
                                                 std::end(kCompareOutputFiles)));
  require_gnuplot(kCompareOutputFiles[2]);
}

void write_compare_outputs(const study::CompareResult& r, const std::string& dir) {
  const std::string html = compare_html(r);
  write_output_set(
      dir, {
               {kCompareOutputFiles[0],
                [&](std::ostream& out) { out << json_text(compare_json(r, false)) << "\n"; }},
               {kCompareOutputFiles[1], [&](std::ostream& out) { write_compare_csv(r, out); }},
               {kCompareOutputFiles[2], [&](std::ostream& out) { out << html; }},
               {kCompareOutputFiles[3], [&](std::ostream& out) { out << r.journal_records; }},
           });
}

}  // namespace mfabric::report
