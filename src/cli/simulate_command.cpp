// mfabric simulate: run an experiment (docs/experiment.md) and report iteration time and
// communication; optionally write results.json, links.csv, collectives.csv and trace.json.
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "core/error.h"
#include "core/output_text.h"
#include "fabric/builders.h"
#include "report/simulation_report.h"
#include "sim/experiment.h"
#include "sim/simulation.h"

namespace mfabric::cli {
namespace {

struct SimulateOptions {
  std::string experiment;
  std::string fabric;
  std::optional<int> iterations;
  std::string max_memory;
  std::string out;
  bool json = false;
  bool flows = false;
  bool quiet = false;
  std::string vs;
};

// The iteration time and network cost (paper formulas) of a run, for --vs.
struct Verdict {
  Time iteration;
  std::optional<double> cost;
};
Verdict verdict_of(const sim::Simulation& s) {
  return {s.result.mean_iteration_time(), report::paper_network_cost(s.topology)};
}

int run_simulate(const SimulateOptions& o) {
  // Before loading: the experiment's size checks use it.
  std::optional<Bytes> max_memory;
  if (!o.max_memory.empty()) {
    max_memory = with_context("", "--max-memory", [&] { return parse_bytes(o.max_memory); });
  }
  sim::Experiment e = sim::load_experiment(o.experiment, max_memory);
  if (!o.fabric.empty()) {
    e.fabric = with_context("", "--fabric", [&] { return Spec::parse(o.fabric); });
    sim::fit_regions_to_job(e);
  }
  std::optional<sim::Experiment> reference;
  if (!o.vs.empty()) {
    reference = e;
    reference->fabric = with_context("", "--vs", [&] { return Spec::parse(o.vs); });
    sim::fit_regions_to_job(*reference);
    with_context("", "--vs", [&] {
      return fabric::build_fabric(reference->fabric, reference->cluster).tiers();
    });
  }
  const std::optional<std::string> mismatch = sim::region_mismatch(e);
  // A --out DIR that cannot take the outputs fails now, not after a long run.
  if (!o.out.empty()) report::check_simulation_outputs(o.out);
  if (o.iterations) sim::set_iterations(e, *o.iterations, "--iterations");
  // Progress for runs longer than a couple of seconds, every half second at most.
  ProgressLine progress("simulate", o.quiet);
  std::chrono::steady_clock::time_point last_shown;
  sim::SimulationOptions options;
  options.record_spans = !o.out.empty();
  options.record_flows = o.flows;
  options.progress = [&](std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (progress.elapsed_s() < 2.0 || now - last_shown < std::chrono::milliseconds(500)) return;
    last_shown = now;
    progress.show(fmt::format("{:.1f}% of {} tasks, {} elapsed",
                              100.0 * static_cast<double>(done) / static_cast<double>(total), total,
                              ProgressLine::seconds(progress.elapsed_s())));
  };
  const sim::Simulation run = sim::simulate(std::move(e), options);
  std::optional<Verdict> against;
  if (reference) {
    sim::SimulationOptions plain;
    plain.progress = options.progress;
    against = verdict_of(sim::simulate(*reference, plain));
  }
  progress.finish();
  if (mismatch && run.control) {
    std::cerr << fmt::format("mfabric: warning: {} ({} conflicts this run)\n", printable(*mismatch),
                             run.control->conflicts);
  }
  const report::SimulationReport rep = report::report_of(run);
  if (!o.out.empty()) report::write_simulation_outputs(rep, o.out);
  if (o.json) {
    std::cout << json_text(report::results_json(rep)) << "\n";
  } else {
    std::cout << report::results_text(rep);
    if (against) {
      const Verdict self = verdict_of(run);
      const double self_s = self.iteration.seconds();
      const double reference_s = against->iteration.seconds();
      std::string line = fmt::format("\nvs {}: iteration time {:.2f}x ({} vs {})", printable(o.vs),
                                     self_s / reference_s, to_string(self.iteration),
                                     to_string(against->iteration));
      if (self.cost && against->cost && *self.cost > 0 && self_s > 0) {
        line += fmt::format(", network cost {:.2f}x, perf/$ {:.2f}x (paper formulas)",
                            *self.cost / *against->cost,
                            (reference_s * *against->cost) / (self_s * *self.cost));
      }
      std::cout << line << "\n";
    }
    if (!o.out.empty()) {
      std::cout << fmt::format(
          "\nwrote {0}/results.json, {0}/links.csv, {0}/collectives.csv, {0}/trace.json, "
          "{0}/flows.csv\n",
          printable(o.out));
    }
  }
  return 0;
}

}  // namespace

Command register_simulate(CLI::App& root) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* app = root.add_subcommand(
      "simulate", "Run an experiment file: a workload on a fabric with a network backend");
  app->add_option("experiment", o->experiment, "Experiment YAML file (docs/experiment.md)")
      ->required();
  app->add_option("--fabric", o->fabric, "Override the experiment's fabric, NAME[:key=value,...]");
  app->add_option("--iterations", o->iterations,
                  "Override the number of training iterations (1 to 10000)");
  app->add_option("--max-memory", o->max_memory,
                  "Refuse jobs whose estimated memory is above this (default: 8GiB; overrides "
                  "simulation.max_memory)");
  app->add_option(
      "-o,--out", o->out,
      "Write results.json, links.csv, collectives.csv, trace.json (Perfetto) and flows.csv here");
  app->add_flag("--json", o->json, "Print the results as JSON");
  app->add_flag("--flows", o->flows,
                "With --out: also write flows.csv, every network transfer's start and end "
                "(per-flow completion times; one row per transfer)");
  app->add_option("--vs", o->vs,
                  "Run the same job on this fabric too (NAME[:key=value,...], e.g. fat-tree) and "
                  "print the ratios: iteration time, network cost, perf/$");
  app->add_flag("-q,--quiet", o->quiet, "No progress on stderr (notes, warnings and errors stay)");
  return Command{app, [o] { return run_simulate(*o); }};
}

}  // namespace mfabric::cli
