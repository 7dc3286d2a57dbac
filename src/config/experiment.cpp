#include "config/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "config/packet_settings.h"
#include "core/error.h"
#include "core/output_text.h"
#include "core/yaml_fields.h"
#include "fabric/builders.h"
#include "net/backends.h"
#include "net/flow/flow_backend.h"
#include "net/router.h"
#include "workload/chakra.h"
#include "workload/compute.h"
#include "workload/connection_matrix.h"

namespace mfabric::config {
namespace {

const std::vector<std::string> kTopFields = {"name",       "description", "seed",
                                             "cluster",    "fabric",      "workload",
                                             "simulation", "failures",    "calibration"};
const std::vector<std::string> kClusterFields = {
    "servers", "gpus_per_server", "nics_per_server", "numa_nodes",
    "link",    "link_latency",    "nvswitch",        "gpu"};
const std::vector<std::string> kWorkloadFields = {"model",
                                                  "tp",
                                                  "pp",
                                                  "ep",
                                                  "dp",
                                                  "etp",
                                                  "cp",
                                                  "vp",
                                                  "precision",
                                                  "distributed_optimizer",
                                                  "dispatcher",
                                                  "recompute",
                                                  "convention",
                                                  "pipeline",
                                                  "recipe",
                                                  "micro_batch",
                                                  "global_batch",
                                                  "seq",
                                                  "schedule",
                                                  "overlap",
                                                  "routing",
                                                  "collective",
                                                  "bytes",
                                                  "group",
                                                  "algorithm",
                                                  "chakra",
                                                  "chakra_control_deps",
                                                  "chakra_comm_groups",
                                                  "connection_matrix"};
const std::vector<std::string> kModelOnly = {
    "model",      "tp",       "pp",         "ep",       "dp",          "etp",
    "cp",         "vp",       "convention", "pipeline", "micro_batch", "global_batch",
    "seq",        "schedule", "overlap",    "routing",  "precision",   "distributed_optimizer",
    "dispatcher", "recompute"};
const std::vector<std::string> kMicroOnly = {"collective", "bytes", "group", "algorithm"};
const std::vector<std::string> kChakraOnly = {"chakra_control_deps", "chakra_comm_groups"};
const std::vector<std::string> kSyntheticFields = {"balance",
                                                   "skew_initial",
                                                   "skew_final",
                                                   "skew_decay_iterations",
                                                   "start_iteration",
                                                   "layer_skew_spread",
                                                   "iteration_jitter",
                                                   "source_concentration",
                                                   "source_weight",
                                                   "layer_correlation",
                                                   "transition_concentration"};
// The packet settings (packet_settings.h) follow; the transports' blocks come from their registry.
const std::vector<std::string> kSimulationFields = {
    "routing",    "spray_paths",         "backend",           "iterations",  "algorithms",
    "max_memory", "completion_batching", "ignore_gpu_memory", "extrapolate", "solver"};
const std::vector<std::string> kAlgorithmFields = {"all_reduce", "all_to_all", "all_gather",
                                                   "reduce_scatter"};

// A path in the experiment file is relative to the file's directory.
std::string relative_to(const std::string& source, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  const auto dir = std::filesystem::path(source).parent_path();
  return dir.empty() ? path : (dir / path).string();
}

workload::CollectiveKind parse_collective(const std::string& text, const Fields& f) {
  using workload::CollectiveKind;
  if (text == "all-reduce") return CollectiveKind::AllReduce;
  if (text == "all-to-all") return CollectiveKind::AllToAll;
  if (text == "all-gather") return CollectiveKind::AllGather;
  if (text == "reduce-scatter") return CollectiveKind::ReduceScatter;
  throw Error(f.source(), f.field("collective"),
              fmt::format("unknown collective '{}' (known: all-reduce, all-to-all, all-gather, "
                          "reduce-scatter)",
                          text));
}

void positive(const Fields& f, const std::string& key, int v) {
  if (v < 1) throw Error(f.source(), f.field(key), fmt::format("must be at least 1, got {}", v));
}

void parse_cluster(const YAML::Node& node, Experiment& e) {
  const Fields f(node, e.source, "cluster", kClusterFields);
  fabric::ClusterSpec& c = e.cluster;
  c.servers = f.optional_int("servers").value_or(c.servers);
  c.gpus_per_server = f.optional_int("gpus_per_server").value_or(c.gpus_per_server);
  c.nics_per_server = f.optional_int("nics_per_server").value_or(c.nics_per_server);
  c.numa_nodes = f.optional_int("numa_nodes").value_or(c.numa_nodes);
  c.link = f.optional_rate("link").value_or(c.link);
  c.link_latency = f.optional_time("link_latency").value_or(c.link_latency);
  c.nvswitch = f.optional_rate("nvswitch").value_or(c.nvswitch);
  e.gpu = f.optional_string("gpu").value_or(e.gpu);
  with_context(e.source, "cluster.gpu", [&] { return workload::find_gpu(e.gpu); });
  with_context(e.source, "cluster", [&] {
    c.validate();
    return 0;
  });
}

void parse_fabric(const YAML::Node& node, Experiment& e) {
  if (node.IsScalar()) {
    e.fabric = with_context(e.source, "fabric", [&] { return Spec::parse(node.Scalar()); });
    return;
  }
  if (!node.IsMap() || !node["kind"] || !node["kind"].IsScalar()) {
    throw Error(
        e.source, "fabric",
        "expected a fabric name such as 'fat-tree' or a map {kind: mfabric, alpha: 6, ...}");
  }
  std::map<std::string, std::string> params;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (key == "kind") continue;
    if (!entry.second.IsScalar()) {
      throw Error(e.source, "fabric." + key,
                  fmt::format("expected a value, got {}", describe(entry.second)));
    }
    params[key] = entry.second.Scalar();
  }
  e.fabric = Spec(node["kind"].Scalar(), params);
}

workload::SyntheticRouting parse_synthetic(const YAML::Node& node, const std::string& source) {
  workload::SyntheticRouting p;
  if (!node || node.IsNull()) return p;
  const Fields f(node, source, "workload.routing.synthetic", kSyntheticFields);
  if (const std::optional<std::string> balance = f.optional_string("balance")) {
    if (*balance == "forced") {
      p.balance = workload::RoutingBalance::Forced;
    } else if (*balance != "skewed") {
      throw Error(source, f.field("balance"),
                  fmt::format("expected 'skewed' or 'forced', got {}", quote_input(*balance)));
    }
  }
  if (p.balance == workload::RoutingBalance::Forced) {
    // Forced balance has no popularity to shape: a skew field beside it is a mistake.
    for (const std::string& key : kSyntheticFields) {
      if (key != "balance" && f.has(key)) {
        throw Error(source, f.field(key),
                    "has no effect with 'balance: forced' (every expert "
                    "gets the same tokens); remove one of the two");
      }
    }
  }
  p.skew_initial = f.optional_double("skew_initial").value_or(p.skew_initial);
  p.skew_final = f.optional_double("skew_final").value_or(p.skew_final);
  p.skew_decay_iterations =
      f.optional_double("skew_decay_iterations").value_or(p.skew_decay_iterations);
  p.start_iteration = f.optional_int("start_iteration").value_or(p.start_iteration);
  p.layer_skew_spread = f.optional_double("layer_skew_spread").value_or(p.layer_skew_spread);
  p.iteration_jitter = f.optional_double("iteration_jitter").value_or(p.iteration_jitter);
  p.source_concentration =
      f.optional_double("source_concentration").value_or(p.source_concentration);
  p.source_weight = f.optional_double("source_weight").value_or(p.source_weight);
  p.layer_correlation = f.optional_double("layer_correlation").value_or(p.layer_correlation);
  p.transition_concentration =
      f.optional_double("transition_concentration").value_or(p.transition_concentration);
  return p;
}

}  // namespace

std::string job_text(const TrainingJob& w) {
  std::string degrees;
  if (w.convention == "paper") {
    degrees = fmt::format("TP {}, PP {}, EP {}", w.tp, w.pp, w.ep);
  } else {
    degrees = fmt::format(
        "TP {}{}, PP {}{}, EP {}, ETP {}", w.tp, w.cp > 1 ? fmt::format(", CP {}", w.cp) : "", w.pp,
        w.vp > 1 ? fmt::format(", VP {}", w.vp) : "", w.ep, w.etp > 0 ? w.etp : 1);
  }
  std::string text = fmt::format("{}, micro-batch {} x {} tokens, global batch {}", degrees,
                                 w.micro_batch, w.seq, w.global_batch);
  if (w.schedule != "1f1b" && !(w.schedule == "interleaved" && w.vp > 1)) {
    text += ", " + w.schedule;
  }
  if (w.precision != "bf16") text += ", " + w.precision;
  if (w.recompute != "none") text += ", " + w.recompute + " recomputation";
  if (w.dispatcher != "alltoall") text += ", " + w.dispatcher;
  if (w.papers_job) return "the paper's job: " + text;
  const std::string convention = fmt::format(", {} convention", w.convention);
  if (!w.recipe_of.empty()) {
    return "its recipe's job: " + text + (w.convention == "paper" ? convention : "");
  }
  return text + convention;
}

int job_max_nodes(const TrainingJob& w, const workload::ParallelismSpec& p, int gpus_per_server) {
  if (!w.max_nodes_from_recipe) return w.max_nodes;
  const int group_nodes = std::max(1, p.ep_group_gpus() / std::max(1, gpus_per_server));
  return std::min(w.max_nodes, group_nodes);
}

void apply_job_settings(const TrainingJob& w, workload::TrainingSpec& spec) {
  spec.schedule =
      with_context("", "schedule", [&] { return workload::parse_schedule(w.schedule); });
  spec.precision =
      with_context("", "precision", [&] { return workload::parse_precision(w.precision); });
  spec.distributed_optimizer = w.distributed_optimizer;
  spec.dispatcher =
      with_context("", "dispatcher", [&] { return workload::parse_dispatcher(w.dispatcher); });
  spec.recompute =
      with_context("", "recompute", [&] { return workload::parse_recompute(w.recompute); });
  spec.max_nodes_per_token = job_max_nodes(w, spec.parallelism, spec.gpus_per_server);
  spec.overlap = w.overlap;
  // DualPipe overlaps a forward of one direction with a backward of the other.
  if (spec.schedule == workload::PipelineSchedule::DualPipe) spec.overlap.ep_comm = true;
}

std::optional<workload::Recipe> apply_recipe(TrainingJob& w,
                                             const std::function<bool(const char*)>& given) {
  if (given("convention") && w.convention == "paper") return std::nullopt;
  workload::ModelSpec model;
  try {
    model = workload::load_model(w.model);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!model.recipe) return std::nullopt;
  const workload::Recipe& r = *model.recipe;
  if (given("convention") && w.convention != r.convention) return std::nullopt;
  const auto take = [&](const char* key, auto& field, const auto& value) {
    if (!given(key)) field = value;
  };
  take("micro_batch", w.micro_batch, r.micro_batch);
  take("global_batch", w.global_batch, r.global_batch);
  take("seq", w.seq, r.seq);
  take("precision", w.precision, r.precision);
  take("distributed_optimizer", w.distributed_optimizer, r.distributed_optimizer);
  take("dispatcher", w.dispatcher, r.dispatcher);
  take("recompute", w.recompute, r.recompute);
  if (!given("routing")) {
    w.max_nodes = r.max_nodes_per_token;
    w.max_nodes_from_recipe = w.max_nodes > 0;
  }
  if (!given("routing") && r.routing_balance == "forced") {
    w.synthetic.balance = workload::RoutingBalance::Forced;
  }
  for (const char* key : {"tp", "pp", "vp", "ep", "etp", "cp", "dp", "pipeline", "schedule"}) {
    if (given(key)) return std::nullopt;
  }
  w.recipe_of = model.name;
  w.convention = r.convention;
  w.tp = r.tp;
  w.pp = r.pp;
  w.vp = r.vp;
  w.ep = r.ep;
  w.etp = r.convention == "paper" ? 0 : r.etp;
  w.cp = r.cp;
  w.split.first = r.first_stage_layers;
  w.split.last = r.last_stage_layers;
  w.split.embedding = r.embedding_in_split;
  w.split.loss = r.loss_in_split;
  w.schedule = w.vp > 1 && r.schedule == "1f1b" ? "interleaved" : r.schedule;

  return r;
}

namespace {

void parse_workload(const YAML::Node& node, Experiment& e) {
  const Fields f(node, e.source, "workload", kWorkloadFields);
  const int kinds = (f.has("model") ? 1 : 0) + (f.has("collective") ? 1 : 0) +
                    (f.has("chakra") ? 1 : 0) + (f.has("connection_matrix") ? 1 : 0);
  if (kinds != 1) {
    throw Error(e.source, "workload",
                "expected exactly one of 'model' (a training job), 'collective' (a "
                "microbenchmark), 'chakra' (a trace prefix) or 'connection_matrix' (an htsim "
                "traffic file)");
  }
  auto reject = [&](const std::vector<std::string>& keys, const char* kind) {
    for (const std::string& k : keys) {
      if (f.has(k)) {
        throw Error(e.source, f.field(k), fmt::format("does not apply to a {} workload", kind));
      }
    }
  };
  if (f.has("connection_matrix")) {
    reject(kModelOnly, "connection_matrix");
    reject(kMicroOnly, "connection_matrix");
    reject(kChakraOnly, "connection_matrix");
    e.connection_matrix = relative_to(e.source, *f.optional_string("connection_matrix"));
    return;
  }
  if (f.has("chakra")) {
    reject(kModelOnly, "chakra");
    reject(kMicroOnly, "chakra");
    e.chakra = relative_to(e.source, *f.optional_string("chakra"));
    if (const auto policy = f.optional_string("chakra_control_deps")) {
      e.chakra_control_deps = with_context(e.source, f.field("chakra_control_deps"),
                                           [&] { return workload::parse_control_deps(*policy); });
    }
    e.chakra_comm_groups =
        relative_to(e.source, f.optional_string("chakra_comm_groups").value_or(""));
    return;
  }
  if (f.has("collective")) {
    reject(kModelOnly, "collective");
    reject(kChakraOnly, "collective");
    MicroBenchmark m;
    m.collective = parse_collective(*f.optional_string("collective"), f);
    m.bytes = f.optional_bytes("bytes").value_or(m.bytes);
    if (m.bytes.count() > workload::kMaxTransferBytes) {
      throw Error(e.source, f.field("bytes"),
                  fmt::format("must be at most {}, got {}",
                              to_string(Bytes(workload::kMaxTransferBytes)), to_string(m.bytes)));
    }
    m.group = f.optional_string("group").value_or(m.group);
    if (m.group != "all" && m.group != "per-server" && m.group != "per-rail") {
      throw Error(e.source, f.field("group"),
                  fmt::format("unknown group '{}' (known: all, per-server, per-rail)", m.group));
    }
    m.algorithm = f.optional_string("algorithm").value_or("");
    e.micro = m;
    return;
  }
  reject(kMicroOnly, "model");
  reject(kChakraOnly, "model");
  TrainingJob w;
  w.model = *f.optional_string("model");
  {
    // A model file (not a zoo name) is relative to the experiment file, like every other path.
    const std::string ext = std::filesystem::path(w.model).extension().string();
    if (ext == ".yaml" || ext == ".yml" || w.model.find('/') != std::string::npos) {
      w.model = relative_to(e.source, w.model);
    }
  }
  w.tp = f.optional_int("tp").value_or(1);
  w.pp = f.optional_int("pp").value_or(1);
  w.ep = f.optional_int("ep").value_or(1);
  w.dp = f.optional_int("dp");
  w.etp = f.optional_int("etp").value_or(0);
  w.cp = f.optional_int("cp").value_or(1);
  w.vp = f.optional_int("vp").value_or(1);
  w.precision = f.optional_string("precision").value_or(w.precision);
  w.distributed_optimizer = f.optional_bool("distributed_optimizer").value_or(false);
  w.dispatcher = f.optional_string("dispatcher").value_or(w.dispatcher);
  w.recompute = f.optional_string("recompute").value_or(w.recompute);
  with_context(e.source, f.field("recompute"),
               [&] { return workload::parse_recompute(w.recompute); });
  with_context(e.source, f.field("dispatcher"),
               [&] { return workload::parse_dispatcher(w.dispatcher); });
  with_context(e.source, f.field("precision"),
               [&] { return workload::parse_precision(w.precision); });
  w.convention = f.optional_string("convention").value_or(w.convention);
  with_context(e.source, f.field("convention"),
               [&] { return workload::parse_convention(w.convention); });
  if (f.has("pipeline")) {
    const Fields pl(f.get("pipeline"), e.source, "workload.pipeline",
                    {"first", "last", "embedding", "loss"});
    for (const char* k : {"first", "last"}) {
      if (pl.has(k)) positive(pl, k, *pl.optional_int(k));
    }
    w.split.first = pl.optional_int("first").value_or(0);
    w.split.last = pl.optional_int("last").value_or(0);
    w.split.embedding = pl.optional_bool("embedding").value_or(false);
    w.split.loss = pl.optional_bool("loss").value_or(false);
  }
  w.micro_batch = f.optional_int("micro_batch").value_or(w.micro_batch);
  w.global_batch = f.optional_int("global_batch").value_or(w.global_batch);
  w.seq = f.optional_int("seq").value_or(w.seq);
  // A virtual pipeline runs the interleaved schedule unless the file says otherwise (and then
  // the job is refused, naming the field).
  w.schedule = f.optional_string("schedule").value_or(w.vp > 1 ? "interleaved" : w.schedule);
  for (const char* k :
       {"tp", "pp", "ep", "etp", "cp", "vp", "micro_batch", "global_batch", "seq"}) {
    if (f.has(k)) positive(f, k, *f.optional_int(k));
  }
  if (w.dp) positive(f, "dp", *w.dp);
  with_context(e.source, f.field("schedule"), [&] { return workload::parse_schedule(w.schedule); });
  if (f.has("overlap")) {
    const Fields o(f.get("overlap"), e.source, "workload.overlap",
                   {"grad_reduce", "ep_comm", "tp_comm"});
    w.overlap.grad_reduce = o.optional_bool("grad_reduce").value_or(false);
    w.overlap.ep_comm = o.optional_bool("ep_comm").value_or(false);
    w.overlap.tp_comm = o.optional_bool("tp_comm").value_or(false);
  }
  if (f.has("routing")) {
    const Fields r(f.get("routing"), e.source, "workload.routing",
                   {"synthetic", "trace", "max_nodes"});
    if (r.has("max_nodes")) {
      w.max_nodes = *r.optional_int("max_nodes");
      positive(r, "max_nodes", w.max_nodes);
    }
    if (r.has("synthetic") == r.has("trace")) {
      throw Error(e.source, "workload.routing",
                  "expected exactly one of 'synthetic: {...}' or 'trace: FILE'");
    }
    if (r.has("trace")) w.routing_trace = relative_to(e.source, *r.optional_string("trace"));
    if (r.has("synthetic")) w.synthetic = parse_synthetic(r.get("synthetic"), e.source);
  }
  if (f.optional_bool("recipe").value_or(true)) {
    apply_recipe(w, [&](const char* key) { return f.has(key); });
  }
  e.model = w;
}

// Per-flow ECMP or packet spraying, in both backends.
void parse_routing(const Fields& f, Experiment& e) {
  e.routing = f.optional_string("routing").value_or(e.routing);
  if (e.routing != "ecmp" && e.routing != "spray") {
    throw Error(e.source, f.field("routing"),
                fmt::format("'ecmp' or 'spray', got '{}'", e.routing));
  }
  if (f.has("spray_paths") && e.routing != "spray") {
    throw Error(e.source, f.field("spray_paths"), "needs 'routing: spray'");
  }
  e.spray_paths =
      e.routing == "spray" ? f.optional_int("spray_paths").value_or(kDefaultSprayPaths) : 1;
  if (e.spray_paths < 2 || e.spray_paths > net::kMaxSprayPaths) {
    if (e.routing == "spray") {
      throw Error(e.source, f.field("spray_paths"),
                  fmt::format("2 to {} paths, got {}", net::kMaxSprayPaths, e.spray_paths));
    }
  }
}

void parse_simulation(const YAML::Node& node, Experiment& e) {
  std::vector<std::string> known = kSimulationFields;
  for (std::string& key : packet_setting_fields())
    known.push_back(std::move(key));
  const Fields f(node, e.source, "simulation", std::move(known));
  e.backend = f.optional_string("backend").value_or(e.backend);
  with_context(e.source, f.field("backend"), [&] { return &net::backends().at(e.backend); });
  if (f.has("iterations")) {
    with_context(e.source, "", [&] {
      set_iterations(e, *f.optional_int("iterations"), f.field("iterations"));
      return 0;
    });
  }
  if (f.has("max_memory")) e.max_memory = *f.optional_bytes("max_memory");
  e.ignore_gpu_memory = f.optional_bool("ignore_gpu_memory").value_or(e.ignore_gpu_memory);
  if (f.has("extrapolate")) e.extrapolate = f.optional_bool("extrapolate");
  if (f.has("solver")) {
    e.solver = *f.optional_string("solver");
    if (e.solver != "exact" && e.solver != "fast" && e.solver != "coflow" && e.solver != "auto") {
      throw Error(
          e.source, f.field("solver"),
          fmt::format("expected exact, fast, coflow or auto, got '{}'", printable(e.solver)));
    }
  }
  if (f.has("completion_batching")) {
    set_completion_batching(e, *f.optional_double("completion_batching"),
                            f.field("completion_batching"));
  }
  parse_packet_options(f, e);
  parse_routing(f, e);
  if (f.has("algorithms")) {
    const Fields a(f.get("algorithms"), e.source, "simulation.algorithms", kAlgorithmFields);
    e.algorithms.all_reduce = a.optional_string("all_reduce").value_or(e.algorithms.all_reduce);
    e.algorithms.all_to_all = a.optional_string("all_to_all").value_or(e.algorithms.all_to_all);
    e.algorithms.all_gather = a.optional_string("all_gather").value_or(e.algorithms.all_gather);
    e.algorithms.reduce_scatter =
        a.optional_string("reduce_scatter").value_or(e.algorithms.reduce_scatter);
    with_context(e.source, "simulation.algorithms", [&] {
      collective::Lowerer check(e.algorithms);
      return 0;
    });
  }
}

// The calibration of an experiment whose GPU is `gpu`: its `calibration:` field, else the GPU's
// default (workload::default_calibration). The replay path as written.
workload::Calibration calibration_of(const Fields& f, const std::string& source,
                                     const std::string& gpu) {
  if (!f.has("calibration")) return workload::default_calibration(gpu);
  return workload::parse_calibration(f.get("calibration"), source, "calibration", gpu);
}

}  // namespace

std::string experiment_calibration_name(const std::string& yaml_text, const std::string& source) {
  const YAML::Node root = parse_yaml(yaml_text, source);
  const Fields f(root, source, "", kTopFields);
  std::string gpu = Experiment{}.gpu;
  if (f.has("cluster") && f.get("cluster").IsMap() && f.get("cluster")["gpu"] &&
      f.get("cluster")["gpu"].IsScalar()) {
    gpu = f.get("cluster")["gpu"].Scalar();
  }
  return calibration_of(f, source, gpu).name;
}

void check_network_size(const Experiment& e) {
  const double bytes = kNetworkBytesPerTopologyByte *
                       static_cast<double>(fabric::estimate_topology_bytes(e.cluster));
  if (bytes > static_cast<double>(e.max_memory.count())) {
    throw Error(e.source, "simulation.max_memory",
                fmt::format("simulating the cluster's {} servers x ({} GPUs + {} NICs) needs "
                            "about {} for the network alone (its topology, routes and channels), "
                            "more than the limit of {}; use fewer servers, GPUs or NICs, or raise "
                            "simulation.max_memory (or --max-memory)",
                            e.cluster.servers, e.cluster.gpus_per_server, e.cluster.nics_per_server,
                            to_string(Bytes(static_cast<std::int64_t>(std::min(bytes, 9e18)))),
                            to_string(e.max_memory)));
  }
}

Experiment read_experiment(const std::string& yaml_text, const std::string& source,
                           std::optional<Bytes> max_memory, const FabricCheck& check) {
  Experiment e;
  e.source = source;
  const YAML::Node root = parse_yaml(yaml_text, source);
  const Fields f(root, source, "", kTopFields);
  // Not used by the simulation, but text: a map or a list here is a mistake (an indentation
  // slip that swallowed the fields below it), not a name.
  (void)f.optional_string("name");
  (void)f.optional_string("description");
  e.seed = f.optional_uint64("seed").value_or(e.seed);
  if (f.has("cluster")) parse_cluster(f.get("cluster"), e);
  if (f.has("fabric")) parse_fabric(f.get("fabric"), e);
  if (!f.has("workload")) throw Error(source, "workload", "is required");
  parse_workload(f.get("workload"), e);
  if (f.has("simulation")) parse_simulation(f.get("simulation"), e);
  if (max_memory) e.max_memory = *max_memory;
  if (f.has("failures")) e.failures = parse_failures(f.get("failures"), source, e.cluster);
  e.calibration = calibration_of(f, source, e.gpu);
  if (f.has("calibration")) {
    // An experiment's own replay path is relative to the experiment file (a named calibration
    // file's, to that file: load_calibration resolved it).
    if (f.get("calibration").IsMap() && f.get("calibration")["compute"] &&
        f.get("calibration")["compute"]["replay"]) {
      e.calibration.replay = relative_to(source, e.calibration.replay);
    }
    if (!e.calibration.replay.empty()) {
      if (!e.model) {
        throw Error(source, "calibration.compute.replay",
                    "measured durations apply to a model workload (workload.model), not to a "
                    "micro-benchmark, a Chakra trace or a connection matrix");
      }
      // Read now: a bad measurement file fails (naming its line) before anything is built.
      (void)workload::ComputeReplay::load(e.calibration.replay);
    }
  }
  fit_regions_to_job(e);
  check_network_size(e);
  // Fail on a bad fabric (or failures it does not have) now rather than after the workload is
  // built.
  const fabric::Topology topology = with_context(source, "fabric", [&] {
    return fabric::build_fabric(e.fabric, e.cluster, e.max_memory.count());
  });
  check_failures(e.failures, topology, source);
  check_packet_limits(e, topology);
  // What the layer above checks of the fabric (the simulator: its controller's planner, policy
  // and switching rule), before any run.
  if (check) {
    with_context(source, "", [&] {
      check(topology);
      return 0;
    });
  }
  return e;
}

void set_completion_batching(Experiment& e, double fraction, const std::string& field) {
  net::check_completion_batching(fraction, e.source, field);
  e.completion_batching = fraction;
}

void set_iterations(Experiment& e, int iterations, const std::string& field) {
  if (iterations < 1 || iterations > kMaxIterations) {
    throw Error("", field,
                fmt::format("must be between 1 and {}, got {}", kMaxIterations, iterations));
  }
  e.iterations = iterations;
}

workload::ParallelismSpec job_parallelism(const TrainingJob& job) {
  workload::ParallelismSpec p;
  p.tp = job.tp;
  p.pp = job.pp;
  p.ep = job.ep;
  p.etp = job.etp;
  p.cp = job.cp;
  p.vp = job.vp;
  p.convention = workload::parse_convention(job.convention);
  p.split = job.split;
  return p;
}

int ep_group_servers(const TrainingJob& job, const fabric::ClusterSpec& cluster) {
  workload::ParallelismSpec p = job_parallelism(job);
  p.tp = std::max(1, p.tp);
  p.ep = std::max(1, p.ep);
  const int gpus = p.ep_group_gpus();
  const int per_server = std::max(1, cluster.gpus_per_server);
  return std::max(1, std::min(cluster.servers, (gpus + per_server - 1) / per_server));
}

int ep_group_servers(const Experiment& e) {
  return e.model ? ep_group_servers(*e.model, e.cluster) : 0;
}

bool fit_regions_to_job(Experiment& e) {
  if (!e.model) return false;
  const int servers = ep_group_servers(e);
  if (servers < 1 || e.cluster.servers % servers != 0) return false;
  bool changed = false;
  e.fabric = fabric::with_region(e.fabric, servers, &changed);
  return changed;
}

std::optional<std::string> region_mismatch(const Experiment& e) {
  if (!e.model) return std::nullopt;
  const std::optional<int> regions = fabric::region_servers(e.fabric, e.cluster.servers);
  if (!regions) return std::nullopt;
  const int group = ep_group_servers(e);
  const int region = *regions;
  if (group < 1 || region == group) return std::nullopt;
  // A region smaller than an EP group is refused when the job is built (its all-to-alls would
  // span regions): only a larger one gets here.
  if (region < group) return std::nullopt;
  const std::string& param = fabric::find_fabric_kind(e.fabric.name())->traits.region_param;
  return fmt::format(
      "{} {}={} holds {} EP groups of {} server{}: their all-to-alls compete for one "
      "region's circuits; {}={} gives each EP group its own",
      e.fabric.name(), param, region, static_cast<double>(region) / group, group,
      group == 1 ? "" : "s", param, group);
}

Experiment read_experiment_file(const std::string& path, std::optional<Bytes> max_memory,
                                const FabricCheck& check) {
  return read_experiment(
      read_yaml_file(path, "experiment file", "a YAML experiment (docs/experiment.md)"), path,
      max_memory, check);
}

}  // namespace mfabric::config
