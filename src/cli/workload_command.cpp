// mfabric workload: the MoE training job as a task graph (or an imported Chakra trace), with its
// traffic mix and compute times.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"
#include "core/yaml_fields.h"
#include "report/workload_report.h"
#include "workload/calibration.h"
#include "workload/chakra.h"
#include "workload/megatron_checks.h"
#include "workload/training.h"

namespace mfabric::cli {
namespace {

struct WorkloadOptions {
  std::string model;
  std::string chakra;
  std::string control_deps = "relaxed";
  std::string comm_groups;
  std::string max_rank_bytes;
  std::optional<int> gpus;
  // The job the options describe (degrees, batch, schedule, precision, ...), as an experiment's
  // workload: the model's recipe fills it in place (apply_recipe_options).
  config::TrainingJob job;
  std::string gpu = "h800";
  int gpus_per_server = 8;
  int iterations = 1;
  std::uint64_t seed = 1;
  std::string routing;
  std::string replay;
  std::string calibration;
  std::string max_memory;
  bool json = false;
  bool no_recipe = false;
};

int run_chakra(const WorkloadOptions& o) {
  workload::ChakraOptions options;
  options.gpu = workload::find_gpu(o.gpu);
  options.control_deps = with_context("", "--control-deps",
                                      [&] { return workload::parse_control_deps(o.control_deps); });
  options.comm_groups = o.comm_groups;
  options.limits.max_memory = max_memory_option(o.max_memory, "--max-memory").count();
  if (!o.max_rank_bytes.empty()) {
    options.limits.max_rank_bytes =
        with_context("", "--max-rank-bytes", [&] { return parse_bytes(o.max_rank_bytes); }).count();
  }
  workload::ChakraSummary summary;
  workload::read_chakra(o.chakra, options, &summary);
  if (o.json) {
    std::cout << json_text(report::chakra_json(summary)) << "\n";
  } else {
    std::cout << report::chakra_text(o.chakra, summary);
  }
  return 0;
}

}  // namespace

workload::TrainingSpec training_spec_from(const std::string& model, std::optional<int> gpus,
                                          const workload::ParallelismSpec& degrees,
                                          std::optional<int> dp, int micro_batch, int global_batch,
                                          int seq, const std::string& gpu, int gpus_per_server) {
  workload::TrainingSpec spec;
  spec.model = with_context("", "--model", [&] { return workload::load_model(model); });
  spec.gpu = with_context("", "--gpu", [&] { return workload::find_gpu(gpu); });
  if (gpus && *gpus < 1)
    throw Error("", "--gpus", fmt::format("must be at least 1, got {}", *gpus));
  if (!gpus && !dp) {
    throw Error("", "--gpus",
                "give the number of GPUs (--gpus N, or --dp) so that the job size "
                "is known");
  }
  spec.parallelism = with_option_names([&] {
    return workload::resolve_parallelism(degrees, dp, gpus.value_or(0), spec.model,
                                         gpus_per_server);
  });
  spec.gpus_per_server = gpus_per_server;
  spec.micro_batch = micro_batch;
  spec.global_batch = global_batch;
  spec.seq = seq;
  // A virtual pipeline runs the interleaved schedule (the caller may name another).
  if (degrees.vp > 1) spec.schedule = workload::PipelineSchedule::Interleaved;
  // Validate the layout and the batch split now, naming command-line options.
  with_option_names([&] { return spec.micro_batches(); });
  return spec;
}

namespace {

// The model's recipe fills what the command line leaves out, as in an experiment file
// (config::apply_recipe; an option stands for the workload field of its name), and when it gives
// the degrees, also the GPUs and GPU it was published for unless --gpus, --dp or --gpu is given.
// Not with --no-recipe.
void apply_recipe_options(const CLI::App& app, WorkloadOptions& o) {
  if (o.no_recipe) return;
  const auto option = [&](const char* field) {
    std::string name = std::string("--") + field;
    std::replace(name.begin(), name.end(), '_', '-');
    // A field with no option of its own (pipeline, overlap) is never given here.
    const CLI::Option* given = app.get_option_no_throw(name);
    return given != nullptr && given->count() > 0;
  };
  o.job.model = o.model;
  const std::optional<workload::Recipe> r =
      config::apply_recipe(o.job, [&](const char* field) { return option(field); });
  if (!r) return;
  if (!option("gpus") && !option("dp") && r->gpus > 0) o.gpus = r->gpus;
  if (!option("gpu") && !r->gpu.empty()) o.gpu = r->gpu;
}

int run_model(const WorkloadOptions& o) {
  std::optional<workload::ComputeReplay> replay_storage;
  config::TrainingJob job = o.job;
  // --vp without --schedule runs the interleaved schedule.
  if (job.vp > 1 && job.schedule == "1f1b") job.schedule = "interleaved";
  const workload::ParallelismSpec degrees =
      with_context("", "--convention", [&] { return config::job_parallelism(job); });
  workload::TrainingSpec spec =
      training_spec_from(o.model, o.gpus, degrees, job.dp, job.micro_batch, job.global_batch,
                         job.seq, o.gpu, o.gpus_per_server);
  with_option_names([&] {
    config::apply_job_settings(job, spec);
    return spec.micro_batches();
  });
  with_option_names([&] { return spec.micro_batches(); });
  spec.iterations = checked_iterations(o.iterations, "--iterations");
  with_option_names([&] {
    workload::check_job_size(spec, max_memory_option(o.max_memory, "--max-memory"), "max_memory");
    return 0;
  });
  {
    // Without --calibration, the job's GPU's own (workload::default_calibration).
    const workload::Calibration c = o.calibration.empty()
                                        ? workload::default_calibration(spec.gpu.name)
                                        : with_context("", "--calibration", [&] {
                                            return workload::load_calibration(o.calibration);
                                          });
    workload::calibrate(spec, c);
    if (o.replay.empty() && !c.replay.empty()) {
      replay_storage = workload::ComputeReplay::load(c.replay);
      spec.replay = &*replay_storage;
    }
  }
  if (!o.replay.empty()) {
    replay_storage = workload::ComputeReplay::load(o.replay);
    spec.replay = &*replay_storage;
  }
  workload::SyntheticRouting synthetic;
  synthetic.balance = job.synthetic.balance;
  const workload::RoutingTrace trace = o.routing.empty()
                                           ? workload::synthetic_trace_for(spec, synthetic, o.seed)
                                           : workload::read_routing_trace(o.routing);
  const workload::TaskGraph graph = workload::build_training_graph(spec, trace);
  const workload::WorkloadSummary summary = workload::summarize(spec, graph);
  // The routing's skew, said as simulate says it: the job's compute rests on it.
  const config::RoutingSummary routing{o.routing, synthetic.balance,
                                       workload::expert_load_skew(trace)};
  // On stderr, as simulate warns, so that --json's stdout stays JSON alone.
  const std::vector<std::string> refusals = workload::megatron_refusals(spec);
  for (const std::string& refusal : refusals)
    std::cerr << "mfabric: warning: " << refusal << "\n";
  if (o.json) {
    nlohmann::json j = report::workload_json(spec, summary, o.seed);
    j["expert_routing"] = report::expert_routing_json(routing);
    if (!refusals.empty()) j["framework_warnings"] = refusals;
    j["recipe"] = job.recipe_of.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.recipe_of);
    std::cout << json_text(j) << "\n";
  } else {
    const std::string recipe =
        job.recipe_of.empty()
            ? std::string()
            : fmt::format("job: {}'s recipe (data/models, recipe.source)\n", job.recipe_of);
    std::cout << recipe << report::workload_text(spec, summary)
              << "expert routing: " << routing.text() << "\n";
  }
  return 0;
}

}  // namespace

Command register_workload(CLI::App& command) {
  auto o = std::make_shared<WorkloadOptions>();
  CLI::App* app = &command;
  auto* model = app->add_option("--model", o->model,
                                "Model name from the zoo (see 'mfabric models') or a "
                                "model YAML file");
  auto* chakra = app->add_option("--chakra", o->chakra,
                                 "Read Chakra execution traces PREFIX.<rank>.et instead of "
                                 "building a model's graph");
  model->excludes(chakra);
  app->add_option("--control-deps", o->control_deps,
                  "With --chakra: strict, relaxed (drop control dependencies on missing nodes or "
                  "closing cycles, counted) or ignore")
      ->needs(chakra)
      ->capture_default_str();
  app->add_option("--comm-groups", o->comm_groups,
                  "With --chakra: ASTRA-sim communicator-group JSON {\"0\": [0, 1], ...} naming "
                  "the ranks of each numeric pg_name")
      ->needs(chakra);
  app->add_option("--max-rank-bytes", o->max_rank_bytes,
                  "With --chakra: most decoded bytes read from one rank file (default: 1GiB)")
      ->needs(chakra);
  app->add_option("--gpus", o->gpus,
                  "GPUs in the job (= TP x CP x DP x PP, or TP x PP x EP x DP under the paper's "
                  "convention)");
  app->add_option("--convention", o->job.convention,
                  "How the degrees count GPUs: megatron (experts folded onto the dense layers' "
                  "GPUs) or paper (each EP rank a data replica); docs/workload.md")
      ->capture_default_str();
  app->add_option("--tp", o->job.tp, "Tensor-parallel degree (inside a server)")
      ->capture_default_str();
  app->add_option("--pp", o->job.pp, "Pipeline stages")->capture_default_str();
  app->add_option("--ep", o->job.ep, "Expert-parallel degree (EP ranks per EP group)")
      ->capture_default_str();
  app->add_option("--etp", o->job.etp,
                  "Expert tensor-parallel degree (megatron convention; default 1; the paper's "
                  "is TP)");
  app->add_option("--cp", o->job.cp, "Context-parallel degree (megatron convention)")
      ->capture_default_str();
  app->add_option("--precision", o->job.precision,
                  "GEMM precision: bf16 or fp8 (FP8 GEMMs at their measured speed, FP8 "
                  "all-to-all to the experts; docs/workload.md)")
      ->capture_default_str();
  app->add_option("--dispatcher", o->job.dispatcher,
                  "How tokens reach the experts: alltoall (a copy per expert) or deepep (a copy "
                  "per node, forwarded over NVLink)")
      ->capture_default_str();
  app->add_option("--recompute", o->job.recompute,
                  "Activation recomputation: none, selective (norms, expert activations, MLA "
                  "up-projections; not timed) or full (each layer's forward again in its "
                  "backward, communication included)")
      ->capture_default_str();
  app->add_flag("--distributed-optimizer", o->job.distributed_optimizer,
                "Megatron-LM's distributed optimizer (ZeRO-1): gradients reduce-scattered and "
                "parameters all-gathered over DP, the optimizer state sharded");
  app->add_option("--vp", o->job.vp,
                  "Virtual pipeline: model chunks a stage (runs the interleaved schedule)")
      ->capture_default_str();
  app->add_option("--dp", o->job.dp,
                  "Data-parallel degree (default: GPUs / (TP x CP x PP), or GPUs / (TP x PP x EP) "
                  "under the paper's convention)");
  app->add_option("--micro-batch", o->job.micro_batch, "Sequences per micro-batch")
      ->capture_default_str();
  app->add_option("--global-batch", o->job.global_batch,
                  "Sequences per iteration, split over DP replicas")
      ->capture_default_str();
  app->add_option("--seq", o->job.seq, "Tokens per sequence")->capture_default_str();
  app->add_option("--gpu", o->gpu, "GPU type: a100, h100, h800, h200, b200")->capture_default_str();
  app->add_option("--gpus-per-server", o->gpus_per_server, "GPUs per server (NVSwitch domain)")
      ->capture_default_str();
  app->add_option("--schedule", o->job.schedule,
                  "Pipeline schedule: 1f1b, gpipe, interleaved (the default with --vp above 1) or "
                  "dualpipe")
      ->capture_default_str();
  app->add_option("--iterations", o->iterations, "Training iterations in the graph (1 to 10000)")
      ->capture_default_str();
  app->add_option("--seed", o->seed, "Seed of the synthetic expert routing")->capture_default_str();
  app->add_option("--routing", o->routing,
                  "Recorded expert-routing trace (JSON or text, docs/formats.md) instead of the "
                  "synthetic generator");
  app->add_option("--replay", o->replay,
                  "CSV of measured compute durations (op,layer,phase,duration) replacing the "
                  "compute model's");
  app->add_option("--calibration", o->calibration,
                  fmt::format("Compute calibration: {} (default: the GPU's measured calibration "
                              "where one is shipped, else "
                              "roofline), or a calibration YAML file "
                              "(docs/calibration.md); --replay wins over its measured durations",
                              join(workload::calibration_names())))
      ->excludes("--chakra");
  app->add_option("--max-memory", o->max_memory,
                  "Refuse jobs whose estimated memory is above this (default: 8GiB)");
  app->add_flag("--json", o->json, "Print JSON");
  app->add_flag("--no-recipe", o->no_recipe,
                "Do not fill what the options leave out from the model's recipe");
  return Command{app, [o, app] {
                   if (!o->chakra.empty()) return run_chakra(*o);
                   if (o->model.empty()) {
                     throw Error("", "--model", "give --model NAME (or --chakra PREFIX)");
                   }
                   WorkloadOptions job = *o;
                   apply_recipe_options(*app, job);
                   return run_model(job);
                 }};
}

}  // namespace mfabric::cli
