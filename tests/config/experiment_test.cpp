#include "config/experiment.h"
#include "config/workload_builder.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "net/packet/transports/roce_dcqcn.h"

namespace mfabric::config {
namespace {

// The error's field, or "" when parsing succeeded.
std::string error_field(const std::string& yaml) {
  try {
    read_experiment(yaml, "exp.yaml");
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "exp.yaml") << e.what();
    return e.field();
  }
  return "";
}

TEST(Experiment, ParsesEverySection) {
  const Experiment e = read_experiment(R"(
name: test
seed: 42
cluster: {servers: 16, gpus_per_server: 8, nics_per_server: 8, link: 200G, link_latency: 500ns,
          nvswitch: 450GB/s, gpu: a100}
fabric: {kind: mfabric, alpha: 6, region: 4}
workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, micro_batch: 4, global_batch: 64, seq: 2048,
           schedule: gpipe, routing: {synthetic: {skew_initial: 1.5, layer_correlation: 0.5}}}
simulation: {backend: flow, iterations: 3, algorithms: {all_reduce: ring}}
)",
                                       "exp.yaml");
  EXPECT_EQ(e.seed, 42u);
  EXPECT_EQ(e.cluster.servers, 16);
  EXPECT_DOUBLE_EQ(e.cluster.link.gbps(), 200);
  EXPECT_EQ(e.cluster.link_latency, Time::nanoseconds(500));
  EXPECT_EQ(e.gpu, "a100");
  EXPECT_EQ(e.fabric.to_string(), "mfabric:alpha=6,region=4");
  ASSERT_TRUE(e.model.has_value());
  EXPECT_EQ(e.model->tp, 4);
  EXPECT_EQ(e.model->schedule, "gpipe");
  EXPECT_DOUBLE_EQ(e.model->synthetic.skew_initial, 1.5);
  EXPECT_DOUBLE_EQ(e.model->synthetic.layer_correlation, 0.5);
  EXPECT_EQ(e.iterations, 3);
  EXPECT_EQ(e.algorithms.all_reduce, "ring");
  const workload::TaskGraph g = build_workload(e);
  EXPECT_EQ(g.gpus(), 128);
}

// A job that names no calibration takes its GPU's measured one where one is shipped, else the
// roofline; a calibration map without `base` starts from that same default.
TEST(Experiment, TheDefaultCalibrationIsTheGpusMeasuredOne) {
  const std::string job =
      "workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 1, ep: 8}\n";
  const Experiment h800 = read_experiment(job, "t.yaml");
  EXPECT_EQ(h800.calibration.name, "h800-measured");
  EXPECT_TRUE(h800.calibration.kernels);
  EXPECT_EQ(read_experiment("cluster: {gpu: h200}\n" + job, "t.yaml").calibration.name,
            "h200-measured");
  EXPECT_EQ(read_experiment("cluster: {gpu: b200}\n" + job, "t.yaml").calibration.name, "roofline");
  EXPECT_EQ(read_experiment(job + "calibration: roofline\n", "t.yaml").calibration.name,
            "roofline");
  const Experiment unbased =
      read_experiment(job + "calibration: {collectives: {efficiency: 0.8}}\n", "t.yaml");
  EXPECT_EQ(unbased.calibration.name, "h800-measured+");
  EXPECT_TRUE(unbased.calibration.kernels);
  EXPECT_EQ(unbased.calibration.collectives.all_to_all.efficiency, 0.8);
  EXPECT_EQ(read_experiment(
                "cluster: {gpu: b200}\n" + job + "calibration: {collectives: {efficiency: 0.8}}\n",
                "t.yaml")
                .calibration.name,
            "roofline+");
}

TEST(Experiment, ForcedBalanceRouting) {
  const Experiment e = read_experiment(
      "workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 1, ep: 8, routing: "
      "{synthetic: {balance: "
      "forced}}}\n",
      "t.yaml");
  ASSERT_TRUE(e.model);
  EXPECT_EQ(e.model->synthetic.balance, workload::RoutingBalance::Forced);
}

TEST(Experiment, FabricAsTextAndMicroBenchmarks) {
  const Experiment e = read_experiment(R"(
cluster: {servers: 4}
fabric: "fat-tree:oversubscription=3"
workload: {collective: all-to-all, bytes: 64MiB, group: per-rail}
simulation: {iterations: 2}
)",
                                       "exp.yaml");
  EXPECT_EQ(e.fabric.to_string(), "fat-tree:oversubscription=3");
  ASSERT_TRUE(e.micro.has_value());
  const workload::TaskGraph g = build_workload(e);
  // 8 rails x 2 iterations; the second iteration waits for all of the first.
  EXPECT_EQ(g.size(), 16u);
  EXPECT_EQ(g.deps(8).size(), 8u);
  EXPECT_EQ(g.group(g.task(0).group()).size(), 4u);
}

TEST(ExperimentErrors, NameTheField) {
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nclustr: {servers: 4}\n"), "clustr");
  EXPECT_EQ(error_field("cluster: {servers: 4, link: 400}\nworkload: {model: mixtral-8x7b}\n"),
            "cluster.link");
  EXPECT_EQ(error_field("cluster: {servers: 0}\nworkload: {model: mixtral-8x7b}\n"),
            "cluster.servers");
  EXPECT_EQ(error_field("cluster: {gpu: v100}\nworkload: {model: mixtral-8x7b}\n"), "cluster.gpu");
  EXPECT_EQ(error_field("cluster: {servers: 4}\n"), "workload");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, collective: all-reduce}\n"), "workload");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, bytes: 1GiB}\n"), "workload.bytes");
  EXPECT_EQ(error_field("workload: {collective: all-reduce, bytes: 1024}\n"), "workload.bytes");
  EXPECT_EQ(error_field("workload: {collective: scatter}\n"), "workload.collective");
  EXPECT_EQ(error_field("workload: {collective: all-reduce, group: odd}\n"), "workload.group");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, convention: paper, tp: 0}\n"),
            "workload.tp");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, schedule: zigzag}\n"),
            "workload.schedule");
  EXPECT_EQ(error_field("workload: {model: m, routing: {trace: a, synthetic: {}}}\n"),
            "workload.routing");
  EXPECT_EQ(error_field("workload: {model: m, routing: {synthetic: {skew: 1}}}\n"),
            "workload.routing.synthetic.skew");
  EXPECT_EQ(error_field("workload: {model: m, routing: {synthetic: {balance: even}}}\n"),
            "workload.routing.synthetic.balance");
  // A skew field beside forced balance would do nothing: refused, naming it.
  EXPECT_EQ(error_field("workload: {model: m, routing: {synthetic: {balance: forced, "
                        "skew_initial: 2}}}\n"),
            "workload.routing.synthetic.skew_initial");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {backend: fluid}\n"),
            "simulation.backend");
  // Packet settings: named, checked, and refused without the packet backend.
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {transport: dctcp}\n"),
            "simulation.transport");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, transport: tcp}\n"),
            "simulation.transport");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, mtu: 10B}\n"),
            "simulation.mtu");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, dctcp: {g: 2}}\n"),
            "simulation.dctcp.g");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, dcqcn: {rate_timer: 0s}}\n"),
            "simulation.dcqcn.rate_timer");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, dcqcn: {variant: mellanox}}\n"),
            "simulation.dcqcn.variant");
  // A DCQCN variant brings its counters; a field given with it overrides them.
  const Experiment roce = read_experiment(
      "workload: {model: mixtral-8x7b}\nsimulation: {backend: packet, transport: roce-dcqcn, "
      "dcqcn: {variant: ns3-rdma, rate_timer: 70us}}\n",
      "t.yaml");
  ASSERT_NE(roce.packet.transport.get<net::RoceDcqcnSettings>(), nullptr);
  const net::DcqcnOptions ns3 = roce.packet.transport.get<net::RoceDcqcnSettings>()->dcqcn;
  EXPECT_EQ(ns3.variant, net::DcqcnVariant::Ns3Rdma);
  EXPECT_EQ(ns3.byte_counter, Bytes(300000));
  EXPECT_EQ(ns3.rate_timer, Time::microseconds(70));
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, irn: {rto: 1ms}}\n"),
            "simulation.irn.rto");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, pfc_xoff: 100kB, pfc_xon: 200kB}\n"),
            "simulation.pfc_xon");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {backend: packet, ecn_threshold: 100kB, ecn_max: 50kB}\n"),
            "simulation.ecn_max");
  // Routing: ecmp or spray, in both backends; spray_paths only with spray.
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {routing: valiant}\n"),
            "simulation.routing");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {spray_paths: 8}\n"),
            "simulation.spray_paths");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {routing: spray, spray_paths: 1}\n"),
            "simulation.spray_paths");
  EXPECT_EQ(
      read_experiment("workload: {model: mixtral-8x7b}\nsimulation: {routing: spray}\n", "t.yaml")
          .spray_paths,
      kDefaultSprayPaths);
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {iterations: 0}\n"),
            "simulation.iterations");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\n"
                        "simulation: {algorithms: {all_to_all: ring}}\n"),
            "simulation.algorithms.all_to_all");
  EXPECT_EQ(error_field("fabric: {kind: mfabric, alpha: 9}\nworkload: {model: mixtral-8x7b}\n"),
            "fabric.alpha");
  EXPECT_EQ(error_field("fabric: [1, 2]\nworkload: {model: mixtral-8x7b}\n"), "fabric");
  EXPECT_EQ(error_field("seed: -3\nworkload: {model: mixtral-8x7b}\n"), "seed");
}

TEST(ExperimentErrors, MalformedYamlAndMissingFile) {
  try {
    read_experiment("workload: {model: [\n", "exp.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "exp.yaml");
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos);
  }
  try {
    read_experiment_file("/nonexistent/exp.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), "/nonexistent/exp.yaml");
  }
}

TEST(ExperimentErrors, BadJobShapesNameTheWorkload) {
  const Experiment e = read_experiment(
      "cluster: {servers: 4}\nworkload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 1, ep: "
      "8, dp: 4}\n",
      "exp.yaml");
  try {
    build_workload(e);
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.field(), "workload.dp");
  }
}

// workload.convention, etp, cp and pipeline: read, carried into the built job, errors named.
TEST(Experiment, MegatronConventionAndPipelineSplit) {
  const Experiment e = read_experiment(
      "cluster: {servers: 16}\n"
      "workload: {model: mixtral-8x7b, convention: megatron, tp: 2, pp: 4, ep: 8, etp: 1,\n"
      "           micro_batch: 1, global_batch: 64, seq: 1024,\n"
      "           pipeline: {first: 7, last: 7}}\n",
      "exp.yaml");
  ASSERT_TRUE(e.model);
  EXPECT_EQ(e.model->convention, "megatron");
  EXPECT_EQ(e.model->split.first, 7);
  // One EP group of 8 GPUs is one server: the region mFabric would give it.
  EXPECT_EQ(ep_group_servers(e), 1);
  const workload::ParallelismSpec p = job_parallelism(*e.model);
  EXPECT_EQ(p.convention, workload::ParallelConvention::Megatron);
  EXPECT_EQ(p.expert_tp(), 1);
  const workload::TaskGraph g = build_workload(e);
  EXPECT_EQ(g.job_gpus(), 128);
  // The same degrees under the paper's convention span 2 x 4 x 8 GPUs per replica, its EP group
  // 16 GPUs: two servers.
  const Experiment paper = read_experiment(
      "cluster: {servers: 16}\nworkload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 4, "
      "ep: 8}\n",
      "exp.yaml");
  EXPECT_EQ(ep_group_servers(paper), 2);
}

// A job that names only its model runs the model's recipe (data/models/*.yaml, `recipe`).
TEST(Experiment, AModelAloneRunsItsRecipe) {
  const Experiment e =
      read_experiment("cluster: {servers: 16}\nworkload: {model: mixtral-8x22b}\n", "exp.yaml");
  ASSERT_TRUE(e.model);
  const TrainingJob& w = *e.model;
  EXPECT_EQ(w.recipe_of, "mixtral-8x22b");
  EXPECT_EQ(w.convention, "megatron");
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.pp, 8);
  EXPECT_EQ(w.ep, 8);
  EXPECT_EQ(w.etp, 1);
  EXPECT_EQ(w.micro_batch, 1);
  EXPECT_EQ(w.global_batch, 256);
  EXPECT_EQ(w.synthetic.balance, workload::RoutingBalance::Forced);
  // Its own degrees win, as a whole; the batch it does not give still comes from the recipe.
  const Experiment own = read_experiment(
      "cluster: {servers: 16}\nworkload: {model: mixtral-8x22b, tp: 4, pp: 4, ep: 8}\n",
      "exp.yaml");
  EXPECT_EQ(own.model->recipe_of, "");
  EXPECT_EQ(own.model->tp, 4);
  EXPECT_EQ(own.model->vp, 1);
  EXPECT_EQ(own.model->global_batch, 256);
  // The paper's convention, or recipe: false, keeps the old defaults.
  for (const char* text : {"workload: {model: mixtral-8x22b, convention: paper}\n",
                           "workload: {model: mixtral-8x22b, recipe: false}\n"}) {
    const Experiment none = read_experiment(text, "exp.yaml");
    EXPECT_EQ(none.model->recipe_of, "") << text;
    EXPECT_EQ(none.model->tp, 1) << text;
    EXPECT_EQ(none.model->global_batch, 128) << text;
  }
  // Interleaved recipes bring their virtual pipeline and its schedule, and the split.
  const Experiment qwen =
      read_experiment("cluster: {servers: 32}\nworkload: {model: qwen3-235b-a22b}\n", "exp.yaml");
  EXPECT_EQ(qwen.model->vp, 4);
  EXPECT_EQ(qwen.model->schedule, "interleaved");
  EXPECT_TRUE(qwen.model->split.embedding && qwen.model->split.loss);
  // Its EP 32 of ETP 1 GPUs: 4 servers a region (not built here: 4.9M tasks).
  EXPECT_EQ(ep_group_servers(qwen), 4);
  // The paper's own models: their recipe is the paper's job, in the paper's convention.
  const Experiment paper =
      read_experiment("cluster: {servers: 128}\nworkload: {model: qwen-moe}\n", "exp.yaml");
  EXPECT_EQ(paper.model->convention, "paper");
  EXPECT_EQ(paper.model->ep, 16);
}

// DeepSeek-V3's recipe as its report runs it: FP8, DualPipe, DeepEP, node-limited routing.
TEST(Experiment, DeepSeekV3sRecipeRunsAsReported) {
  const Experiment e =
      read_experiment("cluster: {servers: 256}\nworkload: {model: deepseek-v3}\n", "exp.yaml");
  const TrainingJob& w = *e.model;
  EXPECT_EQ(w.recipe_of, "deepseek-v3");
  EXPECT_EQ(w.precision, "fp8");
  EXPECT_EQ(w.schedule, "dualpipe");
  // Its DeepEP dispatcher and node-limited routing are simulated.
  EXPECT_EQ(w.dispatcher, "deepep");
  EXPECT_EQ(w.max_nodes, 4);
  // It recomputes the norms, MLA's up-projections and the SwiGLU outputs (report, 3.3.2-3.3.3).
  EXPECT_EQ(w.recompute, "selective");
}

// The recipe's node limit (DeepSeek-V3's 4 nodes a token) is no limit on a job whose EP group
// spans fewer nodes; the same limit given in the file is refused there, naming its field.
TEST(Experiment, ARecipesNodeLimitIsCappedAtTheEpGroupsNodes) {
  const std::string cluster = "cluster: {servers: 4}\nsimulation: {ignore_gpu_memory: true}\n";
  const std::string job =
      "workload: {model: deepseek-v3, tp: 1, pp: 4, ep: 8, micro_batch: 1, global_batch: 8, "
      "seq: 64";
  const Experiment e = read_experiment(cluster + job + "}\n", "exp.yaml");
  EXPECT_EQ(e.model->max_nodes, 4);
  EXPECT_TRUE(e.model->max_nodes_from_recipe);
  EXPECT_EQ(job_max_nodes(*e.model, job_parallelism(*e.model), 8), 1);
  EXPECT_GT(build_workload(e).size(), 0u);
  const Experiment own =
      read_experiment(cluster + job + ", routing: {synthetic: {}, max_nodes: 4}}\n", "exp.yaml");
  EXPECT_FALSE(own.model->max_nodes_from_recipe);
  try {
    build_workload(own);
    FAIL() << "expected a refusal";
  } catch (const Error& err) {
    EXPECT_EQ(err.field(), "workload.routing.max_nodes");
  }
}

// A job whose GPU memory estimate is above the GPU's HBM is refused naming the workload, unless
// simulation.ignore_gpu_memory says to run it; the paper's convention (its simulator has no
// memory model) runs its jobs as published. Mixtral 8x7B on PP 1, EP 8 over 16 H100: each GPU
// holds the dense layers and one expert of each layer, 7.25B parameters: 14.5 GB of weights, 29.0
// of fp32 gradients and 35.0 of optimizer states sharded over expert-DP 2 only where the
// distributed optimizer is on (it is not: 87 GB with 1 micro-batch of 1,024 tokens kept).
TEST(ExperimentErrors, AJobOverTheGpusMemoryIsRefusedUnlessIgnored) {
  const std::string job =
      "workload: {model: mixtral-8x7b, convention: megatron, tp: 1, pp: 1, ep: 8, "
      "micro_batch: 1, global_batch: 16, seq: 1024}\n";
  try {
    build_workload(read_experiment("cluster: {servers: 2, gpu: h100}\n" + job, "exp.yaml"));
    FAIL() << "expected a refusal";
  } catch (const Error& err) {
    EXPECT_EQ(err.source(), "exp.yaml");
    EXPECT_EQ(err.field(), "workload");
    EXPECT_NE(std::string(err.what()).find("does not fit the GPU's memory"), std::string::npos)
        << err.what();
  }
  EXPECT_GT(build_workload(read_experiment("cluster: {servers: 2, gpu: h100}\n" + job +
                                               "simulation: {ignore_gpu_memory: true}\n",
                                           "exp.yaml"))
                .size(),
            0u);
  EXPECT_GT(build_workload(read_experiment("cluster: {servers: 2, gpu: h100}\n"
                                           "workload: {model: mixtral-8x7b, convention: paper, "
                                           "tp: 1, pp: 1, ep: 8, micro_batch: 1, global_batch: 16, "
                                           "seq: 256}\n",
                                           "exp.yaml"))
                .size(),
            0u);
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, recompute: partial}\n"),
            "workload.recompute");
  EXPECT_EQ(
      error_field("workload: {model: mixtral-8x7b}\nsimulation: {ignore_gpu_memory: maybe}\n"),
      "simulation.ignore_gpu_memory");
}

TEST(ExperimentErrors, ConventionFieldsNameTheirField) {
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, convention: nemo}\n"),
            "workload.convention");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, etp: 0}\n"), "workload.etp");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, cp: -1}\n"), "workload.cp");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, pipeline: {middle: 3}}\n"),
            "workload.pipeline.middle");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b, pipeline: {first: 0}}\n"),
            "workload.pipeline.first");
  // An uneven split that does not add up is refused when the job is built.
  const Experiment e = read_experiment(
      "cluster: {servers: 16}\n"
      "workload: {model: mixtral-8x7b, convention: megatron, tp: 2, pp: 4, ep: 8,\n"
      "           pipeline: {first: 7, last: 6}}\n",
      "exp.yaml");
  try {
    build_workload(e);
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.field(), "workload.pipeline");
    EXPECT_NE(std::string(err.what()).find("split evenly"), std::string::npos) << err.what();
  }
}

TEST(Experiment, ModelFilePathsAreRelativeToTheExperimentFile) {
  const Experiment e =
      read_experiment("workload: {model: models/mine.yaml}\n", "studies/a/exp.yaml");
  EXPECT_EQ(e.model->model, "studies/a/models/mine.yaml");
  // A zoo name is not a path.
  EXPECT_EQ(read_experiment("workload: {model: mixtral-8x7b}\n", "studies/a/exp.yaml").model->model,
            "mixtral-8x7b");
  EXPECT_EQ(read_experiment("workload: {model: /abs/m.yaml}\n", "a/exp.yaml").model->model,
            "/abs/m.yaml");
}

TEST(ExperimentErrors, RangesMatchTheCommandLine) {
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {iterations: 10001}\n"),
            "simulation.iterations");
  EXPECT_EQ(error_field("workload: {model: mixtral-8x7b}\nsimulation: {max_memory: 8}\n"),
            "simulation.max_memory");
  for (const char* bad : {"-0.01", "0.5", ".nan"}) {
    EXPECT_EQ(error_field(std::string("workload: {model: mixtral-8x7b}\n"
                                      "simulation: {completion_batching: ") +
                          bad + "}\n"),
              "simulation.completion_batching")
        << bad;
  }
  EXPECT_EQ(read_experiment("workload: {model: mixtral-8x7b}\nsimulation: "
                            "{completion_batching: 0}\n",
                            "exp.yaml")
                .completion_batching,
            0.0);
  EXPECT_EQ(error_field("cluster: {link: 1bps}\nworkload: {model: mixtral-8x7b}\n"),
            "cluster.link");
  EXPECT_EQ(error_field("cluster: {servers: 70000}\nworkload: {model: mixtral-8x7b}\n"),
            "cluster.servers");
  EXPECT_EQ(error_field("workload: {collective: all-reduce, bytes: 2000TiB}\n"), "workload.bytes");
  Experiment e = read_experiment("workload: {model: mixtral-8x7b}\n", "exp.yaml");
  EXPECT_THROW(set_iterations(e, 0, "--iterations"), Error);
  set_iterations(e, 10000, "--iterations");
  EXPECT_EQ(e.iterations, 10000);
}

TEST(ExperimentErrors, JobAboveTheMemoryLimitIsRefusedBeforeItIsBuilt) {
  const Experiment e = read_experiment(
      "cluster: {servers: 16}\nworkload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 4, "
      "ep: 8}\n"
      "simulation: {max_memory: 1MiB}\n",
      "exp.yaml");
  try {
    build_workload(e);
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.field(), "simulation.max_memory") << err.what();
    EXPECT_NE(err.message().find("estimated"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace mfabric::config
