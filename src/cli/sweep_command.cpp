// mfabric sweep: one experiment over a grid and a list of points (docs/sweep.md), on threads,
// and on MPI ranks under mpirun.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "core/error.h"
#include "core/json_text.h"
#include "report/sweep_report.h"
#include "study/mpi_world.h"
#include "study/sweep.h"
#include "study/sweep_driver.h"

namespace mfabric::cli {
namespace {

struct SweepCliOptions {
  std::string sweep;
  std::string out;
  int jobs = 0;
  bool json = false;
};

int run_sweep_command(const SweepCliOptions& o) {
  study::MpiWorld world;
  try {
    const study::SweepSpec spec = study::load_sweep(o.sweep);
    if (o.jobs < 0) throw Error("", "--jobs", fmt::format("must be 0 or more, got {}", o.jobs));
    // Rank 0 checks and creates DIR; the others wait for its answer.
    std::string prepare_error;
    if (!o.out.empty() && world.rank() == 0) {
      try {
        report::prepare_sweep_outputs(o.out);
      } catch (const Error& e) {
        prepare_error = e.what();
      }
    }
    if (!world.all(prepare_error.empty())) {
      throw Error(prepare_error.empty() ? "rank 0 could not prepare --out" : prepare_error);
    }
    study::SweepOptions options;
    options.jobs = o.jobs;
    if (!o.out.empty()) options.journal = (std::filesystem::path(o.out) / "points.jsonl").string();
    ProgressLine progress(world.size() > 1
                              ? fmt::format("sweep (rank {} of {})", world.rank(), world.size())
                              : std::string("sweep"),
                          "points");
    const study::SweepResult result = study::run_sweep(
        spec, options, world, [&progress](int done, int total) { progress(done, total); });
    if (world.rank() != 0) return 0;
    if (!result.journal_error.empty()) {
      std::cerr << "mfabric: warning: " << result.journal_error
                << " (the results are complete; resuming this sweep would run those points "
                   "again)\n";
    }
    if (!o.out.empty()) report::write_sweep_outputs(spec, result, o.out);
    if (o.json) {
      std::cout << json_text(report::sweep_json(spec, result)) << "\n";
    } else {
      std::cout << report::sweep_text(spec, result);
      if (!o.out.empty()) {
        std::cout << fmt::format(
            "\nwrote {0}/results.json, {0}/results.csv, {0}/report.html, {0}/points.jsonl\n",
            o.out);
      }
    }
    for (const study::SweepRun& r : result.runs) {
      if (r.figures.error.empty()) return 0;
    }
    throw Error(
        "", "",
        fmt::format("every point failed; the first: {}", result.runs.front().figures.error));
  } catch (const Error&) {
    // Every rank reads the same input and fails the same way: rank 0 says it once.
    if (world.rank() == 0) throw;
    return 1;
  }
}

}  // namespace

Command register_sweep(CLI::App& root) {
  auto o = std::make_shared<SweepCliOptions>();
  CLI::App* app = root.add_subcommand(
      "sweep",
      "Run one experiment over a grid of field values (alpha, reconfiguration delay, link speed, "
      "servers, model, ...): a point per combination, on threads, and on MPI ranks under "
      "mpirun (docs/sweep.md)");
  app->add_option("sweep", o->sweep, "Sweep YAML (docs/sweep.md)")->required();
  app->add_option("--out", o->out,
                  "Write results.json, results.csv, report.html (plots: needs gnuplot) and "
                  "points.jsonl here; a rerun with the same DIR skips the points already done");
  app->add_option("--jobs", o->jobs,
                  "Points in parallel per process (default 0: the cores, shared among the MPI "
                  "ranks of this machine)");
  app->add_flag("--json", o->json, "Print the results as JSON");
  return Command{app, [o] { return run_sweep_command(*o); }};
}

}  // namespace mfabric::cli
