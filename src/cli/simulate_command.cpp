// mfabric simulate: run an experiment (docs/experiment.md) and report iteration time and
// communication; optionally write results.json, links.csv, collectives.csv and trace.json.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/output_text.h"
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
};

// Progress on stderr for runs longer than a couple of seconds; silent when stderr is not a
// terminal (CI logs, pipes).
class Progress {
 public:
  Progress() : enabled_(::isatty(STDERR_FILENO) != 0), start_(Clock::now()) {}
  void operator()(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 2.0 || now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    shown_ = true;
    std::cerr << fmt::format("\rsimulating: {:5.1f}% of {} tasks, {:.1f}s",
                             100.0 * static_cast<double>(done) / static_cast<double>(total), total,
                             elapsed)
              << std::flush;
  }
  ~Progress() {
    if (shown_) std::cerr << "\r" << std::string(60, ' ') << "\r" << std::flush;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_;
  Clock::time_point last_;
};

int run_simulate(const SimulateOptions& o) {
  // Before loading: the experiment's size checks use it.
  std::optional<Bytes> max_memory;
  if (!o.max_memory.empty()) {
    max_memory = with_context("", "--max-memory", [&] { return parse_bytes(o.max_memory); });
  }
  sim::Experiment e = sim::load_experiment(o.experiment, max_memory);
  if (!o.fabric.empty()) {
    e.fabric = with_context("", "--fabric", [&] { return Spec::parse(o.fabric); });
  }
  // A --out DIR that cannot take the outputs fails now, not after a long run.
  if (!o.out.empty()) report::check_simulation_outputs(o.out);
  if (o.iterations) sim::set_iterations(e, *o.iterations, "--iterations");
  Progress progress;
  sim::SimulationOptions options;
  options.record_spans = !o.out.empty();
  options.record_flows = o.flows;
  options.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
  const sim::Simulation run = sim::simulate(std::move(e), options);
  const report::SimulationReport rep = report::report_of(run);
  if (!o.out.empty()) report::write_simulation_outputs(rep, o.out);
  if (o.json) {
    std::cout << json_text(report::results_json(rep)) << "\n";
  } else {
    std::cout << report::results_text(rep);
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
                  "Refuse jobs whose estimated memory is above this (default 8GiB; overrides "
                  "simulation.max_memory)");
  app->add_option(
      "--out", o->out,
      "Write results.json, links.csv, collectives.csv, trace.json (Perfetto) and flows.csv here");
  app->add_flag("--json", o->json, "Print the results as JSON");
  app->add_flag("--flows", o->flows,
                "With --out: also write flows.csv, every network transfer's start and end "
                "(per-flow completion times; one row per transfer)");
  return Command{app, [o] { return run_simulate(*o); }};
}

}  // namespace mfabric::cli
