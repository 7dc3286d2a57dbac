// mfabric simulate: run an experiment (docs/experiment.md) and report iteration time and
// communication; with --out, write results.json, the CSVs, link utilisation over time
// (utilisation.csv, report.html) and, when asked, trace.json and flows.csv (docs/cli.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "config/experiment.h"
#include "core/error.h"
#include "core/output_text.h"
#include "fabric/builders.h"
#include "report/format.h"
#include "report/gnuplot.h"
#include "report/simulation_report.h"
#include "report/trace_filter.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"

namespace mfabric::cli {
namespace {

struct SimulateOptions {
  std::string experiment;
  std::string fabric;
  std::optional<int> iterations;
  std::string max_memory;
  bool ignore_gpu_memory = false;
  ShortcutOptions shortcuts;
  std::string out;
  bool json = false;
  bool flows = false;
  bool quiet = false;
  std::string vs;
  std::string bin;
  bool links_over_time = false;
  bool trace = false;
  std::string trace_gpus;
  std::optional<int> trace_stage;
};

// --bin: a positive time.
Time time_bin(const std::string& text) {
  return with_context("", "--bin", [&] {
    const Time bin = parse_time(text);
    if (bin.ps() <= 0) {
      throw Error(
          fmt::format("expected a time bin above zero, such as 5ms, got {}", quote_input(text)));
    }
    return bin;
  });
}

// --trace-gpus and --trace-stage, checked against the experiment before the run.
report::TraceFilter trace_filter(const SimulateOptions& o, const config::Experiment& e) {
  report::TraceFilter filter;
  if (!o.trace_gpus.empty()) {
    filter.gpus = with_context("", "--trace-gpus", [&] {
      std::vector<report::GpuRange> gpus = report::parse_gpu_list(o.trace_gpus);
      report::check_traced_gpus(gpus, e);
      return gpus;
    });
  }
  if (o.trace_stage) {
    with_context("", "--trace-stage", [&] { report::check_traced_stage(*o.trace_stage, e); });
    filter.stage = o.trace_stage;
  }
  return filter;
}

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
  config::Experiment e = sim::load_experiment(o.experiment, max_memory);
  if (o.ignore_gpu_memory) e.ignore_gpu_memory = true;
  o.shortcuts.apply(e);
  if (!o.fabric.empty()) {
    e.fabric = with_context("", "--fabric", [&] { return Spec::parse(o.fabric); });
    config::fit_regions_to_job(e);
  }
  std::optional<config::Experiment> reference;
  if (!o.vs.empty()) {
    reference = e;
    reference->fabric = with_context("", "--vs", [&] { return Spec::parse(o.vs); });
    config::fit_regions_to_job(*reference);
    with_context("", "--vs", [&] {
      return fabric::build_fabric(reference->fabric, reference->cluster).tiers();
    });
  }
  const std::optional<std::string> mismatch = config::region_mismatch(e);
  // A --out DIR that cannot take the outputs, or a bad option for them, fails now, not after a
  // long run.
  if (!o.out.empty()) report::check_simulation_outputs(o.out);
  net::TimelineOptions timeline;
  if (!o.bin.empty()) timeline.bin = time_bin(o.bin);
  report::SimulationOutputs outputs;
  outputs.trace = o.trace || !o.trace_gpus.empty() || o.trace_stage;
  outputs.trace_filter = trace_filter(o, e);
  outputs.flows = o.flows;
  outputs.link_utilisation = o.links_over_time;
  outputs.report = report::find_on_path("gnuplot").has_value();
  if (o.iterations) config::set_iterations(e, *o.iterations, "--iterations");
  // Progress for runs longer than a couple of seconds, every half second at most.
  ProgressLine progress("simulate", o.quiet);
  std::chrono::steady_clock::time_point last_shown;
  sim::SimulationOptions options;
  options.record_spans = !o.out.empty();
  options.record_flows = o.flows;
  if (!o.out.empty()) options.timeline = timeline;
  options.progress = [&](std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (progress.elapsed_s() < 2.0 || now - last_shown < std::chrono::milliseconds(500)) return;
    last_shown = now;
    progress.show(fmt::format("{:.1f}% of {} tasks, {} elapsed",
                              100.0 * static_cast<double>(done) / static_cast<double>(total), total,
                              ProgressLine::seconds(progress.elapsed_s())));
  };
  const sim::Simulation run = [&] {
    try {
      return sim::simulate(std::move(e), options);
    } catch (const net::TimelineTooFine& too_fine) {
      throw Error("", "--bin",
                  fmt::format("{}; give a coarser --bin, or leave it out for bins that widen to "
                              "fit",
                              too_fine.what()));
    }
  }();
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
  // On stderr, so that --json's stdout stays JSON alone.
  for (const std::string& refusal : run.framework_refusals)
    std::cerr << "mfabric: warning: " << refusal << "\n";
  if (const std::optional<std::string> idle = report::idle_warning(rep)) {
    std::cerr << "mfabric: warning: " << *idle << "\n";
  }
  std::vector<std::string> written;
  if (!o.out.empty()) {
    if (!outputs.report) {
      std::cerr << "mfabric: note: gnuplot not found: no report.html (install gnuplot, "
                   "scripts/install-deps.sh; utilisation.csv has its figures)\n";
    }
    written = report::write_simulation_outputs(rep, o.out, outputs);
  }
  if (o.json) {
    std::cout << json_text(report::results_json(rep)) << "\n";
  } else {
    std::cout << report::results_text(rep);
    if (against) {
      const Verdict self = verdict_of(run);
      const double self_s = self.iteration.seconds();
      const double reference_s = against->iteration.seconds();
      // Speed as every command words it: the reference's time over this run's.
      std::string line = fmt::format(
          "\nvs {}: speed {:.2f}x ({}: {} vs {})", printable(o.vs), reference_s / self_s,
          self_s > 0 ? report::faster_or_slower(reference_s / self_s) : std::string("n/a"),
          to_string(self.iteration), to_string(against->iteration));
      if (self.cost && against->cost && *self.cost > 0 && self_s > 0) {
        line += fmt::format(", network cost {:.2f}x, perf/$ {:.2f}x (paper formulas)",
                            *self.cost / *against->cost,
                            (reference_s * *against->cost) / (self_s * *self.cost));
      }
      std::cout << line << "\n";
    }
    if (!o.out.empty()) std::cout << "\n" << wrote_line(o.out, written) << "\n";
  }
  return 0;
}

}  // namespace

Command register_simulate(CLI::App& command) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* app = &command;
  app->add_option("experiment", o->experiment, "Experiment YAML file (docs/experiment.md)")
      ->required();
  app->add_option("--fabric", o->fabric, "Override the experiment's fabric, NAME[:key=value,...]");
  app->add_option("--iterations", o->iterations,
                  "Override the number of training iterations (1 to 10000)");
  app->add_option("--max-memory", o->max_memory,
                  "Refuse jobs whose estimated memory is above this (default: 8GiB; overrides "
                  "simulation.max_memory)");
  CLI::Option* out = app->add_option(
      "-o,--out", o->out,
      "Write results.json, links.csv, collectives.csv, utilisation.csv (link utilisation per "
      "time bin and link class) and report.html (its plot; needs gnuplot) here");
  app->add_flag("--ignore-gpu-memory", o->ignore_gpu_memory,
                "Run a training job whose GPU memory estimate is above the GPU's HBM (sets "
                "simulation.ignore_gpu_memory; --max-memory is the simulator's own memory)");
  o->shortcuts.add_to(*app, "run");
  app->add_flag("--json", o->json, "Print the results as JSON");
  app->add_option("--bin", o->bin,
                  "With --out: the time bin of utilisation.csv, e.g. 5ms (default: 1ms, doubled "
                  "until the run fits in 400 bins)")
      ->needs(out);
  app->add_flag("--links-over-time", o->links_over_time,
                "With --out: also write utilisation_links.csv, each link's utilisation per time "
                "bin (links that carried bytes, bins in which they did)")
      ->needs(out);
  app->add_flag("--trace", o->trace,
                "With --out: also write trace.json, every GPU's compute and communication for "
                "https://ui.perfetto.dev (about 90 MB at 1,024 GPUs)")
      ->needs(out);
  app->add_option("--trace-gpus", o->trace_gpus,
                  "With --out: trace.json with these GPUs only, numbers and ranges such as "
                  "0-7,64 (implies --trace)")
      ->needs(out);
  app->add_option("--trace-stage", o->trace_stage,
                  "With --out: trace.json with the GPUs of this pipeline stage only, 0 to "
                  "workload.pp - 1 (implies --trace; with --trace-gpus, the GPUs in both)")
      ->needs(out);
  app->add_flag("--flows", o->flows,
                "With --out: also write flows.csv, every network transfer's start and end "
                "(per-flow completion times; one row per transfer)")
      ->needs(out);
  app->add_option("--vs", o->vs,
                  "Run the same job on this fabric too (NAME[:key=value,...], e.g. fat-tree) and "
                  "print the ratios: iteration time, network cost, perf/$");
  app->add_flag("-q,--quiet", o->quiet, "No progress on stderr (notes, warnings and errors stay)");
  return Command{app, [o] { return run_simulate(*o); }};
}

}  // namespace mfabric::cli
