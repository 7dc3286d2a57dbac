// The shortcuts' command-line options (commands.h, ShortcutOptions; docs/shortcuts.md).
#include <fmt/format.h>

#include "cli/commands.h"

namespace mfabric::cli {

void ShortcutOptions::add_to(CLI::App& app, const char* runs) {
  app.add_option(
         "--solver", solver,
         fmt::format("The flow backend's rate solver of every {}: exact, fast, coflow or auto (the "
                     "default; sets simulation.solver, docs/shortcuts.md)",
                     runs))
      ->check(CLI::IsMember({"exact", "fast", "coflow", "auto"}));
  CLI::Option* extrapolation =
      app.add_option("--extrapolate", extrapolate,
                     fmt::format("Steady-state extrapolation of the pipeline in every {}: true "
                                 "(wherever the schedule allows), false, or auto (the default: "
                                 "where it simulates at most half the micro-batches; sets "
                                 "simulation.extrapolate, docs/shortcuts.md)",
                                 runs))
          ->check(CLI::IsMember({"true", "false", "auto"}));
  app.add_flag("--exact", exact,
               fmt::format("No shortcut in any {}: every micro-batch simulated, with the exact "
                           "solver (sets simulation.extrapolate: false and simulation.solver: "
                           "exact; docs/shortcuts.md)",
                           runs))
      ->excludes(extrapolation);
}

void ShortcutOptions::apply(config::Experiment& e) const {
  if (!solver.empty()) e.solver = solver;
  if (extrapolate == "auto") e.extrapolate.reset();
  if (extrapolate == "true" || extrapolate == "false") e.extrapolate = extrapolate == "true";
  if (exact) {
    e.extrapolate = false;
    e.solver = "exact";
  }
}

void ShortcutOptions::apply(study::SweepSpec& spec) const {
  if (!solver.empty()) study::set_solver(spec, solver);
  if (!extrapolate.empty()) study::set_extrapolate(spec, extrapolate);
  if (exact) study::run_exact(spec);
}

}  // namespace mfabric::cli
