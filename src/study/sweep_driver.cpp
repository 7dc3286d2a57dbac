#include "study/sweep_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include "core/error.h"
#include "core/json_text.h"
#include "study/sweep_journal.h"

namespace mfabric::study {

SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options, MpiWorld& world,
                      const std::function<void(int, int)>& progress) {
  const std::vector<double> cost_of = check_points(spec);
  SweepResult result;
  result.ranks = world.size();
  std::map<std::size_t, SweepRun> resumed;
  if (!options.journal.empty()) resumed = read_journal(options.journal, spec);
  result.resumed = resumed.size();

  std::vector<std::size_t> remaining;
  std::vector<double> costs;
  for (std::size_t k = 0; k < spec.points.size(); ++k) {
    if (resumed.count(k) != 0) continue;
    remaining.push_back(k);
    costs.push_back(cost_of[k]);
  }
  const std::vector<std::size_t> mine =
      split_over_ranks(remaining, costs, world.size())[static_cast<std::size_t>(world.rank())];
  std::vector<double> my_costs;
  for (std::size_t k : mine)
    my_costs.push_back(cost_of[k]);

  // Every rank appends to the one journal; if any cannot open it, none runs.
  std::unique_ptr<SweepJournal> journal;
  std::string open_error;
  if (!options.journal.empty()) {
    try {
      journal = std::make_unique<SweepJournal>(options.journal);
    } catch (const Error& e) {
      open_error = e.what();
    }
  }
  if (!world.all(open_error.empty())) {
    throw Error(
        "", "--out",
        open_error.empty() ? "another rank could not open the sweep's journal" : open_error);
  }

  const int jobs =
      options.jobs > 0
          ? options.jobs
          : std::max(1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) /
                            local_ranks());
  int done = 0;
  const int total = static_cast<int>(mine.size());
  if (progress) progress(0, total);
  std::vector<SweepRun> runs = run_points(spec, mine, my_costs, jobs, [&](const SweepRun& run) {
    if (journal && result.journal_error.empty()) {
      try {
        journal->append(spec, run);
      } catch (const Error& e) {
        // The results still reach the output; only resuming loses this point.
        result.journal_error = e.what();
      }
    }
    if (progress) progress(++done, total);
  });

  // Each rank's points as JSON lines to rank 0, which puts every point in its place.
  std::string text;
  for (const SweepRun& run : runs)
    text += json_text(sweep_run_json(spec, run), -1) + "\n";
  const std::vector<std::string> gathered = world.gather(text);
  if (world.rank() != 0) return result;
  std::vector<std::optional<SweepRun>> all(spec.points.size());
  for (auto& [k, run] : resumed)
    all[k] = std::move(run);
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    std::size_t from = 0;
    while (from < gathered[r].size()) {
      const std::size_t end = gathered[r].find('\n', from);
      const std::string line = gathered[r].substr(from, end - from);
      from = end == std::string::npos ? gathered[r].size() : end + 1;
      SweepRun run =
          sweep_run_from_json(nlohmann::json::parse(line), fmt::format("rank {}'s results", r));
      if (run.index < all.size()) all[run.index] = std::move(run);
    }
  }
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (!all[k]) throw Error("", "mpirun", fmt::format("no rank returned point {}", k));
    result.runs.push_back(std::move(*all[k]));
  }
  return result;
}

}  // namespace mfabric::study
