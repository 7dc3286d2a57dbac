#include "study/sweep_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include "core/error.h"
#include "core/json_input.h"
#include "core/json_text.h"
#include "study/parallel.h"
#include "study/sweep_journal.h"

namespace mfabric::study {

mpi::World sweep_world() {
  return mpi::World(
      {"run the sweep without mpirun, or install libopenmpi-dev "
       "(scripts/install-deps.sh) and rebuild",
       [](std::int64_t) {
         return Error("", "mpirun", "a rank's results are over 2 GiB; split the sweep");
       }});
}

std::vector<std::vector<std::size_t>> split_over_ranks(const std::vector<std::size_t>& points,
                                                       const std::vector<double>& costs,
                                                       int ranks) {
  if (ranks < 1) throw Error("", "ranks", fmt::format("must be at least 1, got {}", ranks));
  if (costs.size() != points.size()) {
    throw Error("", "costs", fmt::format("expected {} costs, got {}", points.size(), costs.size()));
  }
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(ranks));
  std::vector<double> load(out.size(), 0);
  for (std::size_t i : order) {
    const auto r =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[r].push_back(points[i]);
    load[r] += std::max(0.0, costs[i]);
  }
  for (auto& list : out)
    std::sort(list.begin(), list.end());
  return out;
}

namespace {

// What SweepOptions::start is told: the sweep's points, those resumed, and this rank's threads
// and rough estimate for its points (of these costs).
RunsStart runs_start(const SweepSpec& spec, std::size_t resumed, int jobs,
                     const std::vector<double>& my_costs) {
  RunsStart start;
  start.runs = static_cast<int>(spec.points.size());
  start.resumed = static_cast<int>(resumed);
  start.threads =
      std::max(1, std::min({jobs, machine_threads(),
                            static_cast<int>(std::max<std::size_t>(1, my_costs.size()))}));
  double cost = 0;
  double largest = 0;
  for (const double c : my_costs) {
    cost += c;
    largest = std::max(largest, c);
  }
  start.estimated_s = std::max(cost / start.threads, largest) * kSecondsPerCostUnit;
  return start;
}

}  // namespace

SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options, mpi::World& world,
                      const std::function<void(int, int)>& progress) {
  const std::vector<double> cost_of = check_points(spec);
  SweepResult result;
  result.ranks = world.size();

  // Every rank reads the journal (they must agree on what is left to run); rank 0 then cuts a
  // torn last line off, before any rank appends (after the collective below). If any rank
  // cannot read it, none runs.
  JournalContents journal_contents;
  std::optional<Error> read_error;
  if (!options.journal.empty()) {
    try {
      journal_contents = read_journal(options.journal, spec);
      if (world.rank() == 0 && journal_contents.torn_line > 0) {
        drop_torn_line(options.journal, journal_contents);
        result.notes.push_back(fmt::format(
            "{}: line {} was cut short (the sweep was stopped while writing it): dropped, its "
            "point runs again",
            options.journal, journal_contents.torn_line));
      }
    } catch (const Error& e) {
      read_error = e;
    }
  }
  if (!world.all(!read_error)) {
    if (read_error) throw *read_error;
    throw Error("", "--out", "another rank could not read the sweep's journal");
  }
  std::map<std::size_t, SweepRun>& resumed = journal_contents.points;
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

  // Opened at the first record: a sweep whose every point fails writes nothing.
  std::unique_ptr<SweepJournal> journal;
  if (!options.journal.empty()) journal = std::make_unique<SweepJournal>(options.journal);

  const int jobs =
      options.jobs > 0 ? options.jobs : std::max(1, machine_threads() / mpi::local_ranks());
  if (options.start) options.start(runs_start(spec, result.resumed, jobs, my_costs));
  int done = 0;
  const int total = static_cast<int>(mine.size());
  if (progress) progress(0, total);
  ParallelRun parallel;
  std::vector<SweepRun> runs = run_points(
      spec, mine, my_costs, jobs,
      [&](const SweepRun& run) {
        // A failed point is not journaled (it would run again anyway): it reaches the results
        // only, so that a sweep whose every point fails leaves DIR as it was.
        if (journal && result.journal_error.empty() && run.figures.error.empty()) {
          try {
            journal->append(spec, run);
          } catch (const Error& e) {
            // The results still reach the output; only resuming loses this point.
            result.journal_error = e.what();
          }
        }
        if (progress) progress(++done, total);
      },
      &parallel);
  result.threads = parallel.threads;
  if (!parallel.failure.empty()) {
    result.notes.push_back(
        fmt::format("could not start more than {} of {} threads ({}): the points ran on {}",
                    parallel.threads, parallel.planned, parallel.failure, parallel.threads));
  }

  // Each rank's points as JSON lines to rank 0, which puts every point in its place.
  std::string text;
  for (const SweepRun& run : runs)
    text += json_text(sweep_run_json(spec, run), -1) + "\n";
  const std::vector<std::string> gathered = world.gather(text);
  if (world.rank() != 0) return result;
  std::vector<std::optional<SweepRun>> all(spec.points.size());
  for (auto& [k, run] : resumed) {
    // A journal of an earlier version may lack the per-GPU figures: they follow from the point.
    if (run.figures.error.empty()) fill_gpu_throughput(run.figures, point_experiment(spec, k));
    all[k] = std::move(run);
  }
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const std::string source = fmt::format("rank {}'s results", r);
    std::size_t from = 0;
    while (from < gathered[r].size()) {
      const std::size_t end = gathered[r].find('\n', from);
      const std::string line = gathered[r].substr(from, end - from);
      from = end == std::string::npos ? gathered[r].size() : end + 1;
      const JsonDocument document = parse_json_input(line, source, "");
      SweepRun run = sweep_run_from_json(document.root(), source, "");
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
