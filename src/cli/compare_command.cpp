// mfabric compare: the same training jobs on several fabrics and link speeds (docs/cli.md,
// "mfabric compare"); with no experiment file, the paper's evaluation.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/interrupt_note.h"
#include "cli/progress.h"
#include "config/experiment.h"
#include "core/error.h"
#include "core/input_files.h"
#include "core/json_text.h"
#include "core/output_text.h"
#include "core/provenance.h"
#include "core/yaml_fields.h"
#include "fabric/cost.h"
#include "net/backends.h"
#include "report/compare_report.h"
#include "sim/load_experiment.h"
#include "study/compare.h"
#include "study/parallel.h"
#include "workload/calibration.h"
#include "workload/compute.h"

namespace mfabric::cli {
namespace {

// The GPU catalogue's names, for --gpu's help.
std::string gpu_list() {
  std::vector<std::string> names;
  for (const workload::GpuSpec& g : workload::gpu_catalogue())
    names.push_back(g.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

struct CompareOptions {
  std::string experiment;
  std::vector<std::string> models;
  std::vector<std::string> links;
  std::vector<std::string> fabrics;
  std::optional<int> servers;
  std::string backend;
  std::string calibration;
  std::string assumptions;
  std::string baselines;
  std::string spread;
  std::optional<int> seeds;
  std::string gpu;
  int jobs = 0;
  std::string out;
  bool json = false;
  bool ignore_gpu_memory = false;
  ShortcutOptions shortcuts;
  bool full = false;
  bool quiet = false;
  std::string convention;
};

// What the runs depend on beside their model, link and fabric, for the journal's fingerprints:
// the experiment file's text and every option that changes the base experiment.
std::string fingerprint_basis(const CompareOptions& o, const study::CompareSpec& spec) {
  // The build too: another mfabric may compute another result (a sweep's journal, long and
  // costly, is kept across builds; a comparison is quick to run again).
  std::string basis = "mfabric " + mfabric_version() + "\nexperiment: ";
  basis += o.experiment.empty() ? std::string("the paper's")
                                : read_text_file(o.experiment, "experiment file", "");
  basis += fmt::format("\nservers: {}\nbackend: {}\nassumptions: {}\ncalibration: {}",
                       spec.base.cluster.servers, spec.base.backend,
                       study::to_string(spec.assumptions), spec.base.calibration.name);
  if (!o.gpu.empty()) basis += "\ngpu: " + spec.base.gpu;
  // Settings that change results when set (absent at their defaults, so that the fingerprints of
  // runs without them stay what they were).
  if (spec.base.extrapolate) basis += fmt::format("\nextrapolate: {}", *spec.base.extrapolate);
  if (spec.base.solver != "auto") basis += "\nsolver: " + spec.base.solver;
  if (spec.base.ignore_gpu_memory) basis += "\nignore_gpu_memory: true";
  // A calibration file's values, not only its name.
  std::error_code ec;
  if (!o.calibration.empty() && std::filesystem::is_regular_file(o.calibration, ec))
    basis += "\n" + read_text_file(o.calibration, "calibration file", "");
  return basis;
}

study::CompareSpec spec_from(const CompareOptions& o) {
  if (o.full && !o.experiment.empty()) {
    throw Error("", "--full",
                "is the paper's full evaluation; with an experiment file, name the models and "
                "links with --models and --links");
  }
  study::CompareSpec spec = o.full ? study::paper_compare() : study::paper_compare_quick();
  if (!o.experiment.empty()) {
    spec.description = fmt::format("the job of {}", o.experiment);
    spec.spread = study::Spread{};  // the full spread: the quick subset's is the paper's only
    const config::Experiment e = sim::load_experiment(o.experiment);
    if (!e.model) {
      throw Error(o.experiment, "workload",
                  "compare needs a training job (workload.model); a collective or a Chakra trace "
                  "runs with 'mfabric simulate'");
    }
    spec.base = e;
    // The file's job; how it trains (routing, schedule, overlap) comes from spec.base, which is
    // the same file.
    spec.models = {*e.model};
    spec.links = {e.cluster.link};
  }
  if (!o.models.empty()) {
    spec.models.clear();
    for (const std::string& m : list_values(o.models, "--models"))
      spec.models.push_back(study::paper_setup(m, "--models"));
  }
  if (!o.links.empty()) {
    spec.links.clear();
    for (const std::string& l : list_values(o.links, "--links"))
      spec.links.push_back(with_context("", "--links", [&] { return parse_rate(l); }));
  }
  if (!o.fabrics.empty()) {
    spec.fabrics.clear();
    for (const std::string& f : list_values(o.fabrics, "--fabrics"))
      spec.fabrics.push_back(study::parse_fabric_choice(f, "--fabrics"));
  }
  if (o.servers) {
    if (*o.servers < 1) {
      throw Error("", "--servers", fmt::format("must be at least 1, got {}", *o.servers));
    }
    spec.base.cluster.servers = *o.servers;
    with_context("", "--servers", [&] {
      spec.base.cluster.validate();
      return 0;
    });
  }
  if (!o.backend.empty()) {
    // The file's packet settings were checked for the packet backend; under another one they
    // would be dropped without a word.
    if (!o.experiment.empty() && spec.base.backend == "packet" && o.backend != "packet") {
      std::cerr << fmt::format(
          "mfabric: note: --backend {}: the packet settings of {} (simulation.transport and the "
          "rest) are not used\n",
          printable(o.backend), printable(o.experiment));
    }
    spec.base.backend = o.backend;
  }
  if (!o.gpu.empty()) {
    // The cluster's GPUs, with their measured calibration where one is shipped (the paper's
    // setups count GPUs as before: 8 a server).
    spec.base.gpu = with_context("", "--gpu", [&] { return workload::find_gpu(o.gpu).name; });
    // As experiment files name it (cluster.gpu: h100).
    std::transform(spec.base.gpu.begin(), spec.base.gpu.end(), spec.base.gpu.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    spec.base.calibration = workload::default_calibration(spec.base.gpu);
  }
  if (!o.assumptions.empty()) {
    spec.assumptions = study::parse_assumptions(o.assumptions, "--assumptions");
    if (spec.assumptions == study::Assumptions::Paper) {
      spec.base.calibration = workload::load_calibration("paper-measurement");
      if (o.fabrics.empty()) spec.fabrics = study::fabrics_for(spec.assumptions);
    }
  }
  if (!o.baselines.empty()) spec.baselines = study::parse_baselines(o.baselines, "--baselines");
  if (!o.spread.empty()) spec.spread = study::parse_spread(o.spread, "--spread");
  if (o.seeds) {
    if (*o.seeds < 1 || *o.seeds > study::kMaxSpreadSeeds) {
      throw Error("", "--seeds",
                  fmt::format("must be 1 to {}, got {}", study::kMaxSpreadSeeds, *o.seeds));
    }
    spec.spread.seeds = *o.seeds;
  }
  if (!o.calibration.empty()) {
    spec.base.calibration = with_context("", "--calibration",
                                         [&] { return workload::load_calibration(o.calibration); });
  }
  if (o.jobs < 0) throw Error("", "--jobs", fmt::format("must be 0 or more, got {}", o.jobs));
  spec.jobs = o.jobs;
  if (o.ignore_gpu_memory) spec.base.ignore_gpu_memory = true;
  o.shortcuts.apply(spec.base);
  if (!o.convention.empty()) {
    spec.cost_convention =
        with_context("", "--convention", [&] { return fabric::parse_convention(o.convention); });
  }
  if (!o.models.empty() || !o.links.empty() || !o.fabrics.empty() || o.servers) {
    std::vector<std::string> changed;
    if (!o.models.empty()) changed.push_back(fmt::format("--models {}", fmt::join(o.models, ",")));
    if (!o.links.empty()) changed.push_back(fmt::format("--links {}", fmt::join(o.links, ",")));
    if (!o.fabrics.empty())
      changed.push_back(fmt::format("--fabrics {}", fmt::join(o.fabrics, ",")));
    if (o.servers) changed.push_back(fmt::format("--servers {}", *o.servers));
    spec.description = fmt::format(
        "{}, with {}", o.experiment.empty() ? std::string("the paper's setups") : spec.description,
        fmt::join(changed, " "));
  }
  if (!o.out.empty()) spec.journal = (std::filesystem::path(o.out) / "points.jsonl").string();
  spec.fingerprint_basis = fingerprint_basis(o, spec);
  return spec;
}

int run_compare(const CompareOptions& o) {
  // Every option is checked before any run: here, and in run_compare (models, links, fabrics,
  // backend) before it starts one.
  const study::CompareSpec spec = spec_from(o);
  // A --out DIR that cannot take the outputs fails now, not after the runs.
  if (!o.out.empty()) report::check_compare_outputs(o.out);
  ProgressLine progress("compare", o.quiet);
  // Ctrl-C (or SIGTERM) says how many runs finished and how to go on.
  std::unique_ptr<InterruptNote> stop_note;
  int resumed = 0;
  const auto on_start = [&](const study::RunsStart& s) {
    resumed = s.resumed;
    stop_note = InterruptNote::for_journal("a comparison", "runs", s.runs, spec.journal);
    stop_note->set_count(s.resumed);
    for (const std::string& why : s.skipped) {
      std::cerr << "mfabric: note: skipped " << printable(why) << "\n";
    }
    if (o.jobs > study::machine_threads()) {
      std::cerr << fmt::format(
          "mfabric: note: --jobs {} is more than this machine's {} hardware threads: at most {} "
          "runs run at a time\n",
          o.jobs, study::machine_threads(), study::machine_threads());
    }
    const int left = s.runs - s.resumed;
    std::string line = fmt::format("compare: {} run{}", s.runs, s.runs == 1 ? "" : "s");
    std::vector<std::string> of_them;
    if (s.trials > 0)
      of_them.push_back(
          fmt::format("{} the electrical baselines tried with each all-to-all", s.trials));
    if (s.spread > 0)
      of_them.push_back(fmt::format("{} the verdicts' runs at other seeds and skews", s.spread));
    if (!of_them.empty()) line += fmt::format(" (of them {})", fmt::join(of_them, "; "));
    if (s.resumed > 0) {
      line += fmt::format(", {} already in {}", s.resumed, printable(spec.journal));
    }
    if (left > 0) {
      line +=
          fmt::format("; {}{} on {} thread{}, roughly {} (from the job sizes)",
                      s.resumed > 0 ? fmt::format("{} to run", left) : std::string("running"), "",
                      s.threads, s.threads == 1 ? "" : "s", ProgressLine::seconds(s.estimated_s));
    }
    progress.say(line);
  };
  const study::CompareResult result = study::run_compare(
      spec,
      [&](int done, int total) {
        if (stop_note) stop_note->set_count(resumed + done);
        progress.count(done, total, "runs");
      },
      on_start);
  stop_note.reset();
  progress.finish();
  for (const std::string& note : result.notes)
    std::cerr << "mfabric: note: " << printable(note) << "\n";
  if (!result.journal_error.empty()) {
    std::cerr << "mfabric: warning: " << printable(result.journal_error)
              << " (the results are complete; resuming this comparison would run those runs "
                 "again)\n";
  }
  const bool any_result = std::any_of(result.runs.begin(), result.runs.end(),
                                      [](const study::CompareRun& r) { return r.error.empty(); });
  // DIR is replaced only by a comparison with results: when every run failed, the previous set
  // stays as it was.
  if (!o.out.empty() && any_result) report::write_compare_outputs(result, o.out);
  if (o.json) {
    std::cout << json_text(report::compare_json(result)) << "\n";
  } else {
    std::cout << report::compare_text(result);
    if (!o.out.empty() && any_result) {
      std::cout << "\n"
                << wrote_line(o.out, {"results.json", "results.csv", "report.html", "points.jsonl"})
                << "\n";
    }
  }
  if (any_result) return 0;
  throw Error("", "",
              fmt::format("every run failed{}; the first: {}",
                          o.out.empty() ? "" : fmt::format(" (nothing was written to {})", o.out),
                          result.runs.front().error));
}

// The labels of the paper's fabrics, for help.
std::vector<std::string> paper_fabric_labels() {
  std::vector<std::string> labels;
  for (const study::FabricChoice& f : study::paper_fabrics())
    labels.push_back(f.label);
  return labels;
}

}  // namespace

Command register_compare(CLI::App& command) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* app = &command;
  app->add_option("experiment", o->experiment,
                  "Experiment YAML (docs/experiment.md): its cluster, job and seed; default: the "
                  "paper's 128 servers, Mixtral 8x22B and 8x7B at 100G and 400G (--full: five "
                  "models, four link speeds)");
  app->add_option("--models,--model", o->models,
                  "Models to compare, with the paper's parallelism: mixtral-8x22b, mixtral-8x7b, "
                  "qwen-moe-32, deepseek-r1, llama-moe-6.7b (comma-separated)");
  app->add_option("--links,--link", o->links,
                  "Link speeds, e.g. 100G,400G (default: 100G,400G; --full: 100G,200G,400G,800G)");
  app->add_flag(
      "--full", o->full,
      "The paper's full evaluation: five models x four link speeds x five fabrics "
      "(100 results from 380 runs with the baselines' all-to-alls and the verdicts' spread; "
      "the 100 alone, --baselines as-given --spread none, about 14 minutes on 2 cores, "
      "under 2 with --solver coflow)");
  app->add_option("--fabrics,--fabric", o->fabrics,
                  fmt::format("Fabrics: {}, or any fabric spec NAME[:key=value,...] (default: the "
                              "first five)",
                              fmt::join(paper_fabric_labels(), ", ")));
  app->add_option("--servers", o->servers, "Servers in the cluster (default: 128)");
  app->add_option("--gpu", o->gpu,
                  fmt::format("The cluster's GPU, with its measured calibration where one is "
                              "shipped: {} (default: the experiment's; h800 for the paper's)",
                              gpu_list()));
  app->add_option("--backend", o->backend,
                  fmt::format("Network backend: {} (default: flow)",
                              fmt::join(net::backends().names(), " or ")));
  app->add_option("--assumptions", o->assumptions,
                  "default, or paper: the paper's evaluation as its authors computed it "
                  "(paper-measurement calibration, mFabric under paper-sim, direct all-to-alls "
                  "on the baselines and each again with the hierarchical all-to-all)");
  app->add_option("--baselines", o->baselines,
                  "strongest (the default): each electrical fabric (fat-tree, rail-optimized, "
                  "...) runs with each of the direct, PXN and hierarchical all-to-alls and keeps "
                  "the fastest, named in every output; as-given: with its own (direct on the "
                  "fat-tree, PXN on rail-optimized) or the one its label names (fat-tree+direct)");
  app->add_option("--spread", o->spread,
                  "full (the default): every run a verdict rests on (each mFabric run and the "
                  "fat-tree's) runs again at 2 more seeds and at a lower and a higher routing "
                  "skew (the synthetic Zipf exponents x0.5 and x1.5), and each verdict gives its "
                  "range; seeds: the seeds only; none: one run each (quick)");
  app->add_option("--seeds", o->seeds,
                  fmt::format("Seeds per verdict run with --spread full or seeds (1 to {}; "
                              "default: 3)",
                              study::kMaxSpreadSeeds));
  app->add_option(
      "--calibration", o->calibration,
      fmt::format(
          "Compute and collective calibration: {}, or a calibration YAML "
          "file (docs/calibration.md) (default: the GPU's measured calibration where one is "
          "shipped, h800-measured for the paper's H800; else roofline)",
          join(workload::calibration_names())));
  app->add_option("-j,--jobs", o->jobs,
                  "Runs in parallel, at most the cores; 0: one per core (default: 0)");
  app->add_option("-o,--out", o->out,
                  "Write results.json, results.csv, report.html (plots: needs gnuplot) and the "
                  "journal points.jsonl here; a rerun with the same DIR skips the runs already "
                  "done");
  app->add_option("--convention", o->convention,
                  "How network cost is counted in every cost and perf/$ figure: paper (the "
                  "paper's formulas, the default) or built (what the built topology holds); "
                  "docs/cost-model.md");
  app->add_flag("--ignore-gpu-memory", o->ignore_gpu_memory,
                "Run jobs whose GPU memory estimate is above the GPU's HBM (megatron "
                "convention; simulation.ignore_gpu_memory)");
  o->shortcuts.add_to(*app, "run");
  app->add_flag("--json", o->json, "Print the results as JSON");
  app->add_flag("-q,--quiet", o->quiet,
                "No opening line and no progress on stderr (notes, warnings and errors stay)");
  return Command{app, [o] { return run_compare(*o); }};
}

}  // namespace mfabric::cli
