#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "config/workload_builder.h"
#include "core/error.h"
#include "fabric/builders.h"
#include "fabric/fabric_kinds.h"
#include "net/backends.h"
#include "sim/fabric_controllers.h"
#include "sim/failure_injector.h"
#include "sim/steady_state.h"
#include "workload/megatron_checks.h"

namespace mfabric::sim {

collective::AlgorithmChoice algorithms_of(const config::Experiment& e) {
  collective::AlgorithmChoice algorithms = e.algorithms;
  if (!e.micro || e.micro->algorithm.empty()) return algorithms;
  switch (e.micro->collective) {
    case workload::CollectiveKind::AllReduce:
      algorithms.all_reduce = e.micro->algorithm;
      break;
    case workload::CollectiveKind::AllToAll:
      algorithms.all_to_all = e.micro->algorithm;
      break;
    case workload::CollectiveKind::AllGather:
      algorithms.all_gather = e.micro->algorithm;
      break;
    default:
      algorithms.reduce_scatter = e.micro->algorithm;
      break;
  }
  return algorithms;
}

namespace {

// One run of the experiment as it is.
// `plan`: the run is that of an extrapolation (null: the job as it is).
Simulation simulate_once(config::Experiment experiment, const SimulationOptions& options,
                         const SteadyStatePlan* plan, bool fast_solver, bool coflows) {
  const config::Experiment& e = experiment;
  EngineOptions engine;
  // An unknown algorithm name fails before anything is built.
  engine.algorithms = with_context(e.source, "workload.algorithm", [&] {
    const collective::AlgorithmChoice algorithms = algorithms_of(e);
    collective::Lowerer check(algorithms);
    return algorithms;
  });
  engine.record_spans = options.record_spans;
  engine.record_flows = options.record_flows;
  engine.timeline = options.timeline;
  engine.progress = options.progress;
  engine.micro_batch_figures = plan != nullptr;
  engine.flow_salt = flow_salt_of_seed(e.seed);
  engine.collective_costs = e.calibration.collectives;
  engine.coflows = coflows && e.routing != "spray";
  std::string coflows_declined;
  if (e.solver == "coflow" && e.backend != "flow") {
    coflows_declined =
        fmt::format("the {} backend moves every transfer on its own; it ran as it is", e.backend);
  } else if (coflows && !engine.coflows) {
    coflows_declined =
        "packet spraying (routing: spray) moves every transfer over its paths on "
        "its own; the exact solver ran";
  }
  fabric::Topology topology = with_context(e.source, "fabric", [&] {
    return fabric::build_fabric(e.fabric, e.cluster, e.max_memory.count());
  });
  // The fabric may differ from the one the experiment was loaded with (simulate --fabric).
  config::check_packet_limits(e, topology);
  std::string fast_solver_declined;
  if (const fabric::FabricTraits& traits = fabric::traits_of(topology); traits.host_forwarding) {
    const std::string fabric = traits.label.empty() ? e.fabric.name() : traits.label;
    if (fast_solver) {
      fast_solver = false;
      fast_solver_declined = fmt::format(
          "{} forwards transfers through hosts, where the fast solver was measured {:.1f}% off; "
          "the exact solver ran",
          fabric, kFastSolverHostForwardingError * 100);
    }
    if (engine.coflows) {
      engine.coflows = false;
      coflows_declined = fmt::format(
          "{} forwards transfers through hosts, where coflows were measured {:.1f}% off; the "
          "exact solver ran",
          fabric, kCoflowHostForwardingError * 100);
    }
  }
  std::optional<config::RoutingSummary> routing;
  workload::TaskGraph graph = config::build_workload(
      e, &routing,
      options.record_spans ? workload::TaskSpans::Recorded : workload::TaskSpans::NotRecorded);
  if (plan) engine.flow_hash_shifts = full_job_flow_hash_shifts(graph, *plan);
  // Spares take the ranks of failed GPUs and servers before the run (sim/spares.h).
  std::vector<SpareMove> spares;
  std::vector<std::int32_t> spare_gpus;
  if (!e.failures.empty()) {
    config::check_failures(e.failures, topology, e.source);
    SparePlacement placement = place_spares(e.failures, topology, graph.gpus(), e.source);
    if (!placement.moves.empty()) {
      graph.move_gpus(placement.gpu_of,
                      topology.cluster().servers * topology.cluster().gpus_per_server);
    }
    spares = std::move(placement.moves);
    for (const SpareMove& m : spares)
      spare_gpus.push_back(m.to_gpu);
  }
  RunResult result;
  ControlReport report;
  {
    // The backend and the controller refer to the topology: they are gone before it moves.
    net::BackendOptions backend_options;
    backend_options.completion_batching =
        fast_solver ? std::max(e.completion_batching, config::kFastCompletionBatching)
                    : e.completion_batching;
    backend_options.packet = e.packet;
    backend_options.packet.seed = e.seed;
    backend_options.spray_paths = e.spray_paths;
    const std::unique_ptr<net::Backend> backend = with_context(e.source, "simulation.backend", [&] {
      return net::make_backend(e.backend, topology, backend_options);
    });
    // The controller the fabric's kind names (sim/fabric_controllers.h): mFabric's region
    // controllers, or TopoOpt's topology planned from the whole job before training and
    // connected at time 0; none for a fabric nothing controls.
    const std::unique_ptr<FabricControl> controller = with_context(e.source, "", [&] {
      return make_fabric_control(ControlSetup{graph, topology, spare_gpus});
    });
    engine.controller = controller.get();
    std::unique_ptr<FailureInjector> failures;
    if (!e.failures.empty()) {
      failures =
          std::make_unique<FailureInjector>(e.failures, topology, engine.controller,
                                            controller ? controller->region_control() : nullptr);
      engine.controller = failures.get();
      engine.failed_nodes = &failures->failed_nodes();
    }
    // Errors of the run (a failure the fabric cannot survive, no route, a transfer too large
    // for a flow) are the experiment's: they name its file.
    result = with_context(e.source, "", [&] { return run(graph, topology, *backend, engine); });
    if (controller) controller->report(report);
  }
  return Simulation{std::move(experiment),
                    std::move(topology),
                    std::move(graph),
                    std::move(result),
                    std::move(report.control),
                    std::move(report.topoopt),
                    std::move(spares),
                    std::move(routing),
                    {},
                    fast_solver,
                    std::move(fast_solver_declined),
                    engine.coflows,
                    std::move(coflows_declined),
                    {}};
}

}  // namespace

bool uses_fast_solver(const config::Experiment& e) {
  return e.backend == "flow" && e.solver == "fast";
}

bool uses_coflows(const config::Experiment& e, const workload::TrainingSpec* spec) {
  if (e.backend != "flow") return false;
  if (e.solver == "coflow") return true;
  // auto: a workload without a training job has no size estimate, and keeps the exact solver.
  return e.solver == "auto" && spec != nullptr &&
         workload::estimate_job_size(*spec).tasks >= config::kCoflowsFromTasks;
}

std::vector<Shortcut> shortcuts(const Simulation& s) {
  std::vector<Shortcut> out;
  if (s.result.extrapolation) {
    out.push_back({"extrapolate", true, s.result.extrapolation->bound,
                   extrapolation_text(*s.result.extrapolation)});
  } else if (!s.extrapolation_declined.empty()) {
    out.push_back({"extrapolate", false, 0, s.extrapolation_declined});
  }
  if (!s.fast_solver_declined.empty()) {
    out.push_back({"fast-solver", false, 0, s.fast_solver_declined});
  }
  if (!s.coflows_declined.empty()) out.push_back({"coflows", false, 0, s.coflows_declined});
  if (s.coflows) {
    out.push_back({"coflows", true, kCoflowError,
                   "each collective step's transfers moved as one coflow, finishing together "
                   "(exact: each transfer at its own max-min rate)"});
  }
  if (s.fast_solver) {
    out.push_back(
        {"fast-solver", true, kFastSolverError,
         fmt::format("large all-to-alls' rates re-solved within {:g} of a transfer's age "
                     "(completion batching {:g}; exact: {:g})",
                     config::kFastCompletionBatching,
                     std::max(s.experiment.completion_batching, config::kFastCompletionBatching),
                     s.experiment.completion_batching)});
  }
  return out;
}

namespace {

// A training job's run: extrapolated where it can be (simulation.extrapolate), else in full.
Simulation simulate_training(config::Experiment experiment, const workload::TrainingSpec& spec,
                             const SimulationOptions& options) {
  const bool fast = uses_fast_solver(experiment);
  const bool coflows = uses_coflows(experiment, &spec);
  if (experiment.extrapolate == false) {
    return simulate_once(std::move(experiment), options, nullptr, fast, coflows);
  }
  int samples = kSteadySamples;
  ExtrapolationChoice choice = choose_extrapolation(experiment, spec, samples);
  if (!choice.plan) {
    Simulation s = simulate_once(std::move(experiment), options, nullptr, fast, coflows);
    s.extrapolation_declined = std::move(choice.why_not);
    return s;
  }
  std::string declined;
  for (int tries = 1;; ++tries) {
    const SteadyStatePlan& plan = *choice.plan;
    Simulation s =
        simulate_once(with_micro_batches(experiment, plan), options, &plan, fast, coflows);
    const std::optional<Extrapolation> x = measure_steady_state(s.result, plan);
    if (x && x->bound <= kExtrapolationBound) {
      Extrapolation done = *x;
      done.tries = tries;
      extrapolate(s.result, done);
      if (s.control) extrapolate(*s.control, s.result, done);
      s.experiment = std::move(experiment);
      return s;
    }
    declined =
        x ? fmt::format(
                "the steady period's estimated error {:.2f}% with {} of {} micro-batches "
                "is above {:.0f}%",
                x->bound * 100, plan.simulated, plan.micro_batches, kExtrapolationBound * 100)
          : fmt::format("{} of {} micro-batches showed no steady phase", plan.simulated,
                        plan.micro_batches);
    // The bound falls as 1 / sqrt(repeats): ask for as many as it needs, at least twice as many.
    const double needed =
        x ? samples * (x->bound / kExtrapolationBound) * (x->bound / kExtrapolationBound) * 1.2
          : 0.0;
    samples = std::max(2 * samples, static_cast<int>(std::min(needed, 1e6)));
    // As many steady ends as half the micro-batches: a plan would simulate more than half.
    if (tries >= kExtrapolationTries ||
        2 * static_cast<long long>(samples) * plan.lag >= plan.micro_batches) {
      break;
    }
    const SteadyStatePlan next =
        steady_state_plan(spec.schedule, spec.parallelism.pp, spec.parallelism.vp,
                          spec.overlap.ep_comm, plan.micro_batches, samples);
    if (2 * next.simulated > next.micro_batches) break;
    choice.plan = next;
  }
  Simulation s = simulate_once(std::move(experiment), options, nullptr, fast, coflows);
  s.extrapolation_declined = declined + "; all micro-batches simulated";
  return s;
}

}  // namespace

Simulation simulate(config::Experiment experiment, const SimulationOptions& options) {
  if (!experiment.model) {
    const bool fast = uses_fast_solver(experiment);
    const bool coflows = uses_coflows(experiment, nullptr);
    return simulate_once(std::move(experiment), options, nullptr, fast, coflows);
  }
  const workload::TrainingSpec spec = config::training_spec(experiment);
  Simulation s = simulate_training(std::move(experiment), spec, options);
  s.framework_refusals = workload::megatron_refusals(spec);
  return s;
}

}  // namespace mfabric::sim
