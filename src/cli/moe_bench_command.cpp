// mfabric moe-bench: MoE layers on MPI ranks through the 5-step proxy all-to-all-v with real
// buffers, every token checked, against MPI_Alltoallv of the same routing (docs/runtime.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/controller_auth.h"
#include "control/planner.h"
#include "control/policy_names.h"
#include "core/error.h"
#include "core/input_files.h"
#include "core/json_text.h"
#include "core/units.h"
#include "mpi/world.h"
#include "report/format.h"
#include "report/table.h"
#include "runtime/moe_bench.h"
#ifdef MFABRIC_HAVE_GRPC
#include "controller/controller_rpc_client.h"
#endif

namespace mfabric::cli {

namespace {

struct MoeBenchCommandOptions {
  runtime::MoeBenchOptions bench;
  std::string hidden = "1KiB";
  std::string policy = runtime::policy_name(runtime::CircuitPolicy::Block);
  std::string link = "400G";
  std::string switch_time = "0s";
  // --controller: the region controller's address, the region, its credentials (as the
  // controller's own options) and how long one call may take.
  std::string controller;
  std::string region = "rack0";
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  std::string controller_timeout = "60s";
  bool json = false;
};

#ifdef MFABRIC_HAVE_GRPC

// runtime's CircuitSource over the controller's client: each request is a SubmitDemand of the
// next layer's demand (answered once the OCS holds the circuits), current() a GetCircuits. Only
// rank 0 has one; runtime::BroadcastCircuitSource gives its answers to every rank.
class ControllerCircuitSource final : public runtime::CircuitSource {
 public:
  ControllerCircuitSource(std::unique_ptr<controller::ControllerClient> client, std::string region)
      : client_(std::move(client)), region_(std::move(region)) {}

  runtime::CircuitsInForce request(const control::ServerDemand& demand) override {
    return in_force(client_->submit_demand(region_, next_layer_++, 0, demand));
  }
  runtime::CircuitsInForce current() override { return in_force(client_->circuits(region_)); }

 private:
  static runtime::CircuitsInForce in_force(controller::RegionCircuits answer) {
    runtime::CircuitsInForce out;
    out.generation = static_cast<std::uint64_t>(answer.generation);
    out.circuits = std::move(answer.circuits);
    return out;
  }

  std::unique_ptr<controller::ControllerClient> client_;
  std::string region_;
  int next_layer_ = 0;
};

std::unique_ptr<runtime::CircuitSource> controller_source(const MoeBenchCommandOptions& o) {
  controller::ControllerAuth auth = controller_auth(o.token_file, o.tls_cert, o.tls_key, o.tls_ca);
  const Time timeout =
      with_context("", "--controller-timeout", [&] { return parse_time(o.controller_timeout); });
  if (timeout.ps() <= 0) throw Error("", "--controller-timeout", "expected a positive time");
  return std::make_unique<ControllerCircuitSource>(
      std::make_unique<controller::ControllerClient>(o.controller, std::move(auth), timeout),
      o.region);
}

#else

std::unique_ptr<runtime::CircuitSource> controller_source(const MoeBenchCommandOptions&) {
  throw Error("", "--controller",
              "this mfabric was built without gRPC (grpc++ was not found at build time): install "
              "libgrpc++-dev protobuf-compiler-grpc (scripts/install-deps.sh) and rebuild");
}

#endif

struct Totals {
  double seconds = 0, alltoallv_seconds = 0, wait_seconds = 0;
  std::int64_t bytes_circuit = 0, bytes_eps = 0, bytes_nvswitch = 0, bytes_routed = 0;
  std::int64_t tokens_verified = 0;
  int reconfigurations = 0, waits = 0;
};

Totals totals_of(const runtime::MoeBenchResult& r) {
  Totals t;
  for (const runtime::MoeLayerResult& l : r.layers) {
    t.seconds += l.seconds;
    t.alltoallv_seconds += l.alltoallv_seconds;
    t.wait_seconds += l.wait_seconds;
    t.bytes_circuit += l.bytes_circuit;
    t.bytes_eps += l.bytes_eps;
    t.bytes_nvswitch += l.bytes_nvswitch;
    t.bytes_routed += l.bytes_routed;
    t.tokens_verified += l.tokens_verified;
    t.reconfigurations += l.reconfigured ? 1 : 0;
    t.waits += l.waited ? 1 : 0;
  }
  return t;
}

double rate(std::int64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0;
}

void print_json(const MoeBenchCommandOptions& o, const runtime::MoeBenchResult& r) {
  const Totals t = totals_of(r);
  nlohmann::json layers = nlohmann::json::array();
  for (const runtime::MoeLayerResult& l : r.layers) {
    layers.push_back({{"layer", l.layer},
                      {"seconds", l.seconds},
                      {"alltoallv_seconds", l.alltoallv_seconds},
                      {"bytes_circuit", l.bytes_circuit},
                      {"bytes_eps", l.bytes_eps},
                      {"bytes_nvswitch", l.bytes_nvswitch},
                      {"bytes_routed", l.bytes_routed},
                      {"generation", l.generation},
                      {"circuits", l.circuits},
                      {"reconfigured", l.reconfigured},
                      {"waited", l.waited},
                      {"wait_seconds", l.wait_seconds},
                      {"tokens_verified", l.tokens_verified}});
  }
  const nlohmann::json out = {
      {"ranks", r.ranks},
      {"servers", r.layout.servers},
      {"alpha", r.layout.alpha},
      {"tokens", o.bench.tokens},
      {"top_k", o.bench.top_k},
      {"hidden_bytes", o.bench.hidden},
      {"seed", o.bench.seed},
      {"policy", runtime::policy_name(o.bench.policy)},
      {"circuits", o.bench.circuits},
      {"planner", o.bench.planner},
      {"switch_seconds", o.bench.switch_time.seconds()},
      {"layers", layers},
      {"totals",
       {{"seconds", t.seconds},
        {"alltoallv_seconds", t.alltoallv_seconds},
        {"bytes_per_second", rate(t.bytes_routed, t.seconds)},
        {"alltoallv_bytes_per_second", rate(t.bytes_routed, t.alltoallv_seconds)},
        {"bytes_circuit", t.bytes_circuit},
        {"bytes_eps", t.bytes_eps},
        {"bytes_nvswitch", t.bytes_nvswitch},
        {"bytes_routed", t.bytes_routed},
        {"reconfigurations", t.reconfigurations},
        {"waits", t.waits},
        {"wait_seconds", t.wait_seconds},
        {"tokens_verified", t.tokens_verified},
        {"equal_to_alltoallv", true}}}};
  std::cout << json_text(out) << "\n";
}

void print_text(const MoeBenchCommandOptions& o, const runtime::MoeBenchResult& r) {
  const Totals t = totals_of(r);
  std::cout << fmt::format(
      "moe-bench: {} ranks, {} servers of {} (OCS NICs {} each), {} layers, {} tokens x top-{} "
      "of {} B per rank, policy {}, circuits {}{}\n\n",
      r.ranks, r.layout.servers, r.layout.gpus_per_server(), r.layout.alpha, r.layers.size(),
      o.bench.tokens, o.bench.top_k, o.bench.hidden, runtime::policy_name(o.bench.policy),
      o.bench.circuits,
      o.bench.circuits == "local"        ? " (" + o.bench.planner + " planner)"
      : o.bench.circuits == "controller" ? " (" + o.controller + ", region " + o.region + ")"
                                         : "");
  using Align = report::Table::Align;
  report::Table table({"layer", "time", "MPI_Alltoallv", "over circuits", "over EPS",
                       "over NVSwitch", "generation", "circuits", "reconfigured", "wait"},
                      {Align::Right, Align::Right, Align::Right, Align::Right, Align::Right,
                       Align::Right, Align::Right, Align::Right, Align::Left, Align::Right});
  for (const runtime::MoeLayerResult& l : r.layers) {
    table.add_row({std::to_string(l.layer), seconds_text(l.seconds),
                   seconds_text(l.alltoallv_seconds),
                   report::traffic_bytes(static_cast<double>(l.bytes_circuit)),
                   report::traffic_bytes(static_cast<double>(l.bytes_eps)),
                   report::traffic_bytes(static_cast<double>(l.bytes_nvswitch)),
                   std::to_string(l.generation), std::to_string(l.circuits),
                   l.reconfigured ? "yes" : "no", l.waited ? seconds_text(l.wait_seconds) : "-"});
  }
  std::cout << table.render() << "\n";
  std::cout << fmt::format("total: {} ({}/s) vs MPI_Alltoallv {} ({}/s) for {} routed both ways\n",
                           seconds_text(t.seconds),
                           report::traffic_bytes(rate(t.bytes_routed, t.seconds)),
                           seconds_text(t.alltoallv_seconds),
                           report::traffic_bytes(rate(t.bytes_routed, t.alltoallv_seconds)),
                           report::traffic_bytes(static_cast<double>(t.bytes_routed)));
  std::cout << fmt::format("between servers: {} over circuits, {} over the EPS\n",
                           report::traffic_bytes(static_cast<double>(t.bytes_circuit)),
                           report::traffic_bytes(static_cast<double>(t.bytes_eps)));
  std::cout << fmt::format("reconfigurations: {}, waits: {} ({})\n", t.reconfigurations, t.waits,
                           seconds_text(t.wait_seconds));
  std::cout << fmt::format(
      "tokens verified: {} (each at its expert and back at its source); received bytes equal "
      "MPI_Alltoallv's in every layer, dispatch and combine\n",
      t.tokens_verified);
}

int run_moe_bench(MoeBenchCommandOptions o) {
  mpi::World world = runtime::moe_bench_world();
  try {
    o.bench.hidden = with_context("", "--hidden", [&] { return parse_bytes(o.hidden).count(); });
    o.bench.policy = with_option_names([&] { return runtime::circuit_policy_from(o.policy); });
    o.bench.link = with_context("", "--link", [&] { return parse_rate(o.link); });
    o.bench.switch_time =
        with_context("", "--switch-time", [&] { return parse_time(o.switch_time); });
    if (!(o.bench.link.bps() > 0)) throw Error("", "--link", "expected a positive link rate");
    try {
      control::make_planner(o.bench.planner);
    } catch (const Error& e) {
      throw Error("", "--planner", e.message());
    }
    // Rank 0 alone talks to the controller; a failure to set its client up (a bad token file)
    // is shared, so that no rank goes on to wait for rank 0 in the first layer.
    std::unique_ptr<runtime::CircuitSource> controller;
    if (!o.controller.empty()) {
      o.bench.circuits = "controller";
      std::string error;
      if (world.rank() == 0) {
        try {
          controller = controller_source(o);
        } catch (const Error& e) {
          error = e.what();
        }
      }
      error = world.first_error(error);
      if (!error.empty()) throw Error(error.substr(error.find(": ") + 2));
      o.bench.first_rank_source = controller.get();
    }
    const runtime::MoeBenchResult result = runtime::run_moe_bench(o.bench, world);
    if (world.rank() != 0) return 0;
    if (o.json)
      print_json(o, result);
    else
      print_text(o, result);
    return 0;
  } catch (const Error&) {
    // Every rank meets the same error (bad input, or the first rank's failed check, shared);
    // rank 0 says it, once, and its exit code fails the job. The others end quietly with 0:
    // a non-zero exit elsewhere makes mpirun abort the job, possibly before rank 0 has said it.
    if (world.rank() != 0) return 0;
    throw;
  }
}

}  // namespace

Command register_moe_bench(CLI::App& command) {
  auto o = std::make_shared<MoeBenchCommandOptions>();
  CLI::App* app = &command;
  auto& b = o->bench;
  app->add_option("--servers", b.servers,
                  "Servers the ranks are grouped into (ranks / servers each)")
      ->capture_default_str();
  app->add_option("--alpha", b.alpha,
                  "OCS NICs per server (the last of its ranks' NICs); 0: half the ranks")
      ->capture_default_str();
  app->add_option("--layers", b.layers, "MoE layers")->capture_default_str();
  app->add_option("--tokens", b.tokens, "Tokens per rank and layer (each to top-k experts)")
      ->capture_default_str();
  app->add_option("--top-k", b.top_k, "Experts per token")->capture_default_str();
  app->add_option("--hidden", o->hidden, "Bytes of one token's payload (at least 24)")
      ->capture_default_str();
  app->add_option("--seed", b.seed, "Seed of the routing and the payloads")->capture_default_str();
  app->add_option("--policy", o->policy,
                  fmt::format("{} (wait for this layer's circuits) or {} (run on the previous "
                              "layer's, plan after)",
                              control::kBlockPolicy, control::kReusePreviousPolicy))
      ->capture_default_str();
  app->add_option("--circuits", b.circuits,
                  "Where circuits come from: local (a planner in each process, standing in for "
                  "the controller) or none (EPS only)")
      ->capture_default_str();
  app->add_option(
         "--planner", b.planner,
         fmt::format("Planner of --circuits local: {}", fmt::join(control::planner_names(), ", ")))
      ->capture_default_str();
  app->add_option("--link", o->link, "NIC link rate (the planner weighs circuits against the EPS)")
      ->capture_default_str();
  app->add_option("--switch-time", o->switch_time,
                  "OCS switching time: with --circuits local, a change of circuits is in force "
                  "only after it (block: the layer waits for it)")
      ->capture_default_str();
  app->add_option("--controller", o->controller,
                  "Ask the region controller at HOST:PORT for the circuits (rank 0 asks, every "
                  "rank uses its answer); replaces --circuits");
  app->add_option("--region", o->region, "The controller's region of these servers")
      ->capture_default_str();
  app->add_option("--token-file", o->token_file,
                  "A file whose first line is the controller's bearer token");
  app->add_option("--tls-cert", o->tls_cert, "This client's certificate for the controller (PEM)");
  app->add_option("--tls-key", o->tls_key, "This client's private key (PEM)");
  app->add_option("--tls-ca", o->tls_ca, "The CA that signed the controller's certificate (PEM)");
  app->add_option("--controller-timeout", o->controller_timeout,
                  "How long one call to the controller may take")
      ->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON");
  return Command{app, [o] { return run_moe_bench(*o); }};
}

}  // namespace mfabric::cli
