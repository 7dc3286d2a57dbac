// The shortcuts' command-line options (commands.h, ShortcutOptions; docs/shortcuts.md).
#include <fmt/format.h>

#include "cli/commands.h"

namespace mfabric::cli {

void ShortcutOptions::add_to(CLI::App& app, const char* runs) {
  app.add_option("--solver", solver,
                 fmt::format("The flow backend's rate solver of every {}: exact, fast or auto (the "
                             "default; sets simulation.solver, docs/shortcuts.md)",
                             runs))
      ->check(CLI::IsMember({"exact", "fast", "auto"}));
  app.add_flag("--exact", exact,
               fmt::format("No shortcut in any {}: every micro-batch simulated, with the exact "
                           "solver (sets simulation.extrapolate: false and simulation.solver: "
                           "exact; docs/shortcuts.md)",
                           runs));
}

void ShortcutOptions::apply(config::Experiment& e) const {
  if (!solver.empty()) e.solver = solver;
  if (exact) {
    e.extrapolate = false;
    e.solver = "exact";
  }
}

void ShortcutOptions::apply(study::SweepSpec& spec) const {
  if (!solver.empty()) study::set_solver(spec, solver);
  if (exact) study::run_exact(spec);
}

}  // namespace mfabric::cli
