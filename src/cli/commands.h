// Each `mfabric <command>` registers its options on the CLI11 app and returns how to run it.
// Commands print their result on stdout and throw mfabric::Error on bad input; main() turns the
// error into one line on stderr and a non-zero exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "core/error.h"
#include "core/registry.h"
#include "fabric/topology.h"
#include "study/sweep.h"
#include "workload/training.h"

namespace mfabric::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Each registers its options on `command`, the subcommand main() made with the name and
// description of its registry line (command_registry.cpp), and returns how to run it.
Command register_cost(CLI::App& command);
Command register_topology(CLI::App& command);
Command register_fabrics(CLI::App& command);
Command register_workload(CLI::App& command);
Command register_trace(CLI::App& command);
Command register_models(CLI::App& command);
Command register_simulate(CLI::App& command);
Command register_plan(CLI::App& command);
Command register_predict(CLI::App& command);
Command register_compare(CLI::App& command);
Command register_sweep(CLI::App& command);
Command register_ocs_emulator(CLI::App& command);
Command register_controller(CLI::App& command);
Command register_moe_bench(CLI::App& command);
Command register_plugins(CLI::App& command);
Command register_kernel(CLI::App& command);

// The commands by name, in the order help lists them (command_registry.cpp).
using CommandRegistry = Registry<Command (*)(CLI::App&)>;
CommandRegistry& commands();

// The training job the options describe, validated (ranges as in experiment files); errors name
// the options. `degrees` holds every degree but DP, which comes from gpus or --dp.
workload::TrainingSpec training_spec_from(const std::string& model, std::optional<int> gpus,
                                          const workload::ParallelismSpec& degrees,
                                          std::optional<int> dp, int micro_batch, int global_batch,
                                          int seq, const std::string& gpu, int gpus_per_server);

// Options that describe the cluster, shared by every command that builds a fabric.
struct ClusterOptions {
  int servers = 128;
  int gpus_per_server = 8;
  int nics_per_server = 8;
  std::string link = "400G";
  std::string link_latency = "1us";
  std::string nvswitch = "900GB/s";
  std::optional<int> radix;
  std::string max_memory;  // --max-memory: the topology's estimated memory limit

  void add_to(CLI::App& app);
  // Parses and validates; errors name the option ("--link: ...").
  fabric::ClusterSpec to_spec() const;
};

// The shortcuts' options (docs/shortcuts.md), shared by simulate, compare and sweep: --solver,
// --extrapolate and --exact (every shortcut off).
struct ShortcutOptions {
  std::string solver;       // empty: the experiment's
  std::string extrapolate;  // true, false or auto; empty: the experiment's
  bool exact = false;

  // `runs`: what the options apply to, for the help ("run", "point").
  void add_to(CLI::App& app, const char* runs);
  // Sets simulation.solver and simulation.extrapolate in an experiment, or in the experiment
  // every sweep point starts from (a point that sets them keeps its own).
  void apply(config::Experiment& e) const;
  void apply(study::SweepSpec& spec) const;
};

// "wrote DIR/a, DIR/b" for the files of an output set, DIR as typed but without trailing
// slashes ("out/" gives "out/results.json", not "out//results.json").
std::string wrote_line(const std::string& dir, const std::vector<std::string>& files);

// The values of a list option, given repeated (--fabric a --fabric b), comma-separated
// (--fabrics a,b) or both, in order. A key=value after a comma continues the fabric spec before
// it ("mfabric:alpha=6,region=4,fat-tree" is two fabrics). An empty item is an mfabric::Error
// naming `option`.
std::vector<std::string> list_values(const std::vector<std::string>& given,
                                     const std::string& option);

// Builds the fabric named by `text`; "--radix" applies to fabrics that take a radix and do not
// name one themselves. A topology estimated above `max_memory` is refused before it is built.
fabric::Topology build_named_fabric(const std::string& text, const fabric::ClusterSpec& cluster,
                                    std::optional<int> radix, Bytes max_memory);

// Runs fn(); an mfabric::Error naming a YAML-style field ("gpus_per_server") is re-thrown naming
// the command-line option instead ("--gpus-per-server"), since that is what the user typed.
template <class F>
auto with_option_names(F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    if (e.field().empty()) throw;
    std::string option = "--" + e.field();
    for (char& ch : option)
      ch = ch == '_' ? '-' : ch;
    throw Error("", option, e.message());
  }
}

// Training iterations from an option, in the range experiment files accept (1 to
// workload::kMaxIterations); mfabric::Error naming `option` otherwise.
int checked_iterations(int iterations, const std::string& option);
// A --max-memory option's value ("16GiB"), or workload::kDefaultMaxJobMemory when empty.
Bytes max_memory_option(const std::string& text, const std::string& option);

// What `mfabric trace --out` and `mfabric predict` generate: a synthetic expert-routing trace
// of a one-stage, TP 1 job with `ep` ranks (docs/routing.md).
struct SyntheticTraceOptions {
  std::string model;
  int ep = 0;
  int iterations = 1;
  int micro_batches = 1;
  int micro_batch = 8;
  int seq = 4096;
  std::uint64_t seed = 1;
  std::string generator;   // --generator key=value,...
  std::string max_memory;  // --max-memory
};
struct SyntheticTrace {
  workload::TrainingSpec spec;
  workload::SyntheticRouting params;
  workload::RoutingTrace trace;
};
// Checks the options (errors name them) and the trace's memory against --max-memory, then
// generates it.
SyntheticTrace synthetic_trace_from(const SyntheticTraceOptions& o);

// The synthetic routing generator's parameters from a --generator option ("key=value,...",
// docs/routing.md), range-checked; empty = the defaults. mfabric::Error naming the key (callers
// add "--generator").
workload::SyntheticRouting generator_params(const std::string& text);

// "12.35 ms": seconds in the unit that keeps the number readable, 4 significant digits.
std::string seconds_text(double s);

// Expands "all" into the default comparison set; keeps the order the user gave otherwise.
std::vector<std::string> expand_fabric_names(const std::vector<std::string>& names);

}  // namespace mfabric::cli
