// mfabric sweep: one experiment over a grid and a list of points (docs/sweep.md), on threads,
// and on MPI ranks under mpirun.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/interrupt_note.h"
#include "cli/progress.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/output_text.h"
#include "fabric/cost.h"
#include "mpi/world.h"
#include "report/sweep_report.h"
#include "study/compare.h"
#include "study/parallel.h"
#include "study/sweep.h"
#include "study/sweep_driver.h"

namespace mfabric::cli {
namespace {

struct SweepCliOptions {
  std::string sweep;
  std::string out;
  std::string assumptions;
  int jobs = 0;
  bool json = false;
  bool ignore_gpu_memory = false;
  ShortcutOptions shortcuts;
  bool quiet = false;
  std::string convention;
};

// Warnings and notes carry paths and messages with user text: printable() keeps control
// characters away from the terminal.
void print_notes(const std::vector<std::string>& notes) {
  for (const std::string& note : notes)
    std::cerr << "mfabric: note: " << printable(note) << "\n";
}

int run_sweep_command(const SweepCliOptions& o) {
  mpi::World world = study::sweep_world();
  try {
    // Every option is checked before anything runs.
    if (o.jobs < 0) throw Error("", "--jobs", fmt::format("must be 0 or more, got {}", o.jobs));
    study::SweepSpec spec = study::load_sweep(o.sweep);
    if (!o.assumptions.empty() &&
        study::parse_assumptions(o.assumptions, "--assumptions") == study::Assumptions::Paper) {
      study::apply_paper_assumptions(spec);
    }
    if (o.ignore_gpu_memory) study::ignore_gpu_memory(spec);
    o.shortcuts.apply(spec);
    if (!o.convention.empty()) {
      spec.cost_convention =
          with_context("", "--convention", [&] { return fabric::parse_convention(o.convention); });
      if (spec.cost_convention == fabric::CostConvention::Calculator) {
        throw Error("", "--convention",
                    "a sweep counts network cost as paper or built; the calculator convention is "
                    "not computed for its points (docs/cost-model.md)");
      }
    }
    // Every rank checks that DIR can take the set (each appends to its journal); rank 0, which
    // draws the report, that gnuplot is there.
    std::optional<Error> out_error;
    if (!o.out.empty()) {
      try {
        report::check_sweep_outputs(o.out, world.rank() == 0);
      } catch (const Error& e) {
        out_error = e;
      }
    }
    if (!world.all(!out_error)) {
      if (out_error) throw *out_error;
      throw Error("", "--out", "another rank cannot write the output directory");
    }
    std::vector<std::string> notes;
    if (o.jobs > study::machine_threads()) {
      notes.push_back(fmt::format(
          "--jobs {} is more than this machine's {} hardware threads: at most {} points run at "
          "a time",
          o.jobs, study::machine_threads(), study::machine_threads()));
    }
    study::SweepOptions options;
    options.jobs = o.jobs;
    if (!o.out.empty()) options.journal = (std::filesystem::path(o.out) / "points.jsonl").string();
    // The opening line, rank 0's (its share of the points under MPI).
    options.start = [&](const study::RunsStart& s) {
      if (world.rank() != 0 || o.quiet) return;
      std::string line = fmt::format("sweep: {} point{}", s.runs, s.runs == 1 ? "" : "s");
      if (s.resumed > 0) line += fmt::format(", {} already in {}", s.resumed, options.journal);
      const int left = s.runs - s.resumed;
      if (left > 0) {
        line +=
            fmt::format("; {} to run{} on {} thread{}, roughly {} (from the job sizes)", left,
                        world.size() > 1 ? fmt::format(" over {} ranks", world.size()) : "",
                        s.threads, s.threads == 1 ? "" : "s", ProgressLine::seconds(s.estimated_s));
      }
      std::cerr << printable(line) << "\n";
    };
    // Ctrl-C (or SIGTERM) says how many points finished and how to go on.
    std::unique_ptr<InterruptNote> stop_note;
    int resumed = 0;
    const auto opening = options.start;
    options.start = [&](const study::RunsStart& s) {
      resumed = s.resumed;
      stop_note = InterruptNote::for_journal("a sweep", "points", s.runs, options.journal);
      stop_note->set_count(s.resumed);
      opening(s);
    };
    ProgressLine progress(world.size() > 1
                              ? fmt::format("sweep (rank {} of {})", world.rank(), world.size())
                              : std::string("sweep"),
                          o.quiet);
    const study::SweepResult result =
        study::run_sweep(spec, options, world, [&](int done, int total) {
          if (stop_note) stop_note->set_count(resumed + done);
          progress.count(done, total, "points");
        });
    stop_note.reset();
    progress.finish();
    if (world.rank() != 0) return 0;
    // After the run, so that bad input stays one line.
    print_notes(notes);
    print_notes(result.notes);
    if (!result.journal_error.empty()) {
      std::cerr << "mfabric: warning: " << printable(result.journal_error)
                << " (the results are complete; resuming this sweep would run those points "
                   "again)\n";
    }
    const bool any_result =
        std::any_of(result.runs.begin(), result.runs.end(),
                    [](const study::SweepRun& r) { return r.figures.error.empty(); });
    // DIR is replaced only by a sweep with results: when every point failed, the previous set
    // (and its journal: failed points are not journaled) stays as it was.
    if (!o.out.empty() && any_result) report::write_sweep_outputs(spec, result, o.out);
    if (o.json) {
      std::cout << json_text(report::sweep_json(spec, result)) << "\n";
    } else {
      std::cout << report::sweep_text(spec, result);
      if (!o.out.empty() && any_result) {
        std::cout << "\n"
                  << wrote_line(o.out,
                                {"results.json", "results.csv", "report.html", "points.jsonl"})
                  << "\n";
      }
    }
    if (any_result) return 0;
    throw Error("", "",
                fmt::format("every point failed{}; the first: {}",
                            o.out.empty() ? "" : fmt::format(" (nothing was written to {})", o.out),
                            result.runs.front().figures.error));
  } catch (const Error&) {
    // Every rank reads the same input and fails the same way: rank 0 says it once.
    if (world.rank() == 0) throw;
    return 1;
  }
}

}  // namespace

Command register_sweep(CLI::App& command) {
  auto o = std::make_shared<SweepCliOptions>();
  CLI::App* app = &command;
  app->add_option("sweep", o->sweep, "Sweep YAML (docs/sweep.md)")->required();
  app->add_option("-o,--out", o->out,
                  "Write results.json, results.csv, report.html (plots: needs gnuplot) and "
                  "points.jsonl here; a rerun with the same DIR skips the points already done");
  app->add_option("-j,--jobs", o->jobs,
                  "Points in parallel per process, at most the cores; 0: the cores, shared among "
                  "the MPI ranks of this machine (default: 0)");
  app->add_option("--assumptions", o->assumptions,
                  "default, or paper: the experiment takes the paper-measurement calibration as "
                  "its base and mFabric the paper's simulator's controller (paper-sim)");
  app->add_option("--convention", o->convention,
                  "How network cost is counted in the cost and perf/$ figures: paper (the "
                  "paper's formulas, the default) or built (what the built topology holds)");
  app->add_flag("--ignore-gpu-memory", o->ignore_gpu_memory,
                "Run points whose GPU memory estimate is above the GPU's HBM (sets "
                "simulation.ignore_gpu_memory in the experiment every point starts from)");
  o->shortcuts.add_to(*app, "point");
  app->add_flag("--json", o->json, "Print the results as JSON");
  app->add_flag("-q,--quiet", o->quiet, "No progress on stderr (notes, warnings and errors stay)");
  return Command{app, [o] { return run_sweep_command(*o); }};
}

}  // namespace mfabric::cli
