// The mFabric control plane in whole simulations: circuits change during training and nothing
// is lost (docs/control-plane.md).
#include "sim/mfabric_control.h"
#include "sim/load_experiment.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/error.h"
#include "report/simulation_report.h"
#include "sim/simulation.h"

namespace mfabric::sim {
namespace {

// 8 servers, 2 regions of 4: each region holds the EP group (EP 8 x TP 4 = 32 GPUs) of one
// pipeline stage.
std::string experiment(const std::string& fabric) {
  return "cluster: {servers: 8, link: 400G}\nfabric: " + fabric +
         "\nworkload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: "
         "8, micro_batch: 2, "
         "seq: 256}\n";
}

Simulation run(const std::string& fabric, const std::string& extra = "") {
  return simulate(parse_experiment(experiment(fabric) + extra, "t.yaml"));
}

// The alpha-2 job of several tests, simulated once (each run costs seconds under the sanitizers).
const Simulation& alpha2_run() {
  static const Simulation s = run("{kind: mfabric, region: 4, alpha: 2}");
  return s;
}

TEST(MfabricControl, CircuitsChangeOnThePacketBackendAndNothingIsLost) {
  // The same control plane over packets (64 KiB ones and a short sequence, to keep the test
  // short): circuits torn down under flows drain, the flows wait and resume, and every byte
  // arrives. The run is bound by reconfigurations and compute: the flow backend's iteration time
  // within 1%.
  const std::string yaml =
      "cluster: {servers: 8, link: 400G}\nfabric: {kind: mfabric, region: 4, alpha: 2}\n"
      "workload: {model: mixtral-8x7b, convention: paper, tp: 4, pp: 2, ep: 8, global_batch: 4, "
      "micro_batch: 2, "
      "seq: 16}\n";
  const Simulation packet =
      simulate(parse_experiment(yaml + "simulation: {backend: packet, mtu: 64KiB}\n", "t.yaml"));
  const Simulation flow = simulate(parse_experiment(yaml, "t.yaml"));
  ASSERT_TRUE(packet.control.has_value());
  EXPECT_GT(packet.control->reconfigurations, 2);
  EXPECT_GT(packet.control->circuits_torn_down, 0);
  const net::TransferTotals& t = packet.result.transfers;
  EXPECT_EQ(t.delivered, t.started);
  EXPECT_EQ(t.bytes_delivered, t.bytes_sent);
  EXPECT_EQ(t.bytes_sent, flow.result.transfers.bytes_sent);
  ASSERT_TRUE(packet.result.packets.has_value());
  EXPECT_GT(packet.result.packets->packets_sent, 0);
  EXPECT_NEAR(packet.result.mean_iteration_time().seconds(),
              flow.result.mean_iteration_time().seconds(),
              0.01 * flow.result.mean_iteration_time().seconds());
}

TEST(MfabricControl, CircuitsChangeDuringTrainingAndNothingIsLost) {
  // alpha 2 in regions of 4 servers: 3 peers, 2 ports, so the plans differ with the demand.
  const Simulation& s = alpha2_run();
  ASSERT_TRUE(s.control.has_value());
  const ControlStats& c = *s.control;
  // Every region, layer, micro-batch and direction asks for a plan at least once (2 regions x
  // 16 layers x 4 micro-batches x 2); each is a reconfiguration or a plan already in force.
  EXPECT_GE(c.reconfigurations + c.unchanged, 2 * 16 * 4 * 2);
  EXPECT_GT(c.reconfigurations, 2);
  EXPECT_GT(c.circuits_torn_down, 0);
  EXPECT_EQ(c.spans.size(), static_cast<std::size_t>(c.reconfigurations));
  for (const ReconfigurationSpan& span : c.spans)
    EXPECT_EQ(span.end - span.start, Time::milliseconds(25));
  EXPECT_EQ(c.reconfiguration_time, Time::milliseconds(25) * c.reconfigurations);
  EXPECT_GT(c.held, 0);
  const net::TransferTotals& t = s.result.transfers;
  EXPECT_GT(t.started, 0);
  EXPECT_EQ(t.delivered, t.started);
  EXPECT_EQ(t.bytes_delivered, t.bytes_sent);
}

TEST(MfabricControl, ProxyAndDirectAllToAllBothDeliverEverything) {
  // The default (auto) is the 5-step proxy algorithm on mFabric; direct sends GPU to GPU.
  const Simulation& proxy = alpha2_run();
  const Simulation direct = run("{kind: mfabric, region: 4, alpha: 2}",
                                "simulation: {algorithms: {all_to_all: direct}}\n");
  for (const Simulation* s : {&proxy, &direct}) {
    const net::TransferTotals& t = s->result.transfers;
    EXPECT_EQ(t.delivered, t.started);
    EXPECT_EQ(t.bytes_delivered, t.bytes_sent);
    EXPECT_GT(s->control->reconfigurations, 2);
  }
  // The proxy algorithm relays through proxy GPUs: the gathers and scatters are transfers of
  // their own, so it sends more bytes (over the NVSwitch) than the direct one.
  EXPECT_GT(proxy.result.transfers.bytes_sent, direct.result.transfers.bytes_sent);
  EXPECT_GT(proxy.result.transfers.started, direct.result.transfers.started);
}

TEST(MfabricControl, APlanThatSwitchesNothingCostsNothing) {
  // alpha 6 in regions of 4 servers: every plan is 2 circuits to each of the 3 peers, so only
  // the first plan of each region switches anything.
  const Simulation s = run("{kind: mfabric, region: 4}");
  EXPECT_EQ(s.control->reconfigurations, 2);
  EXPECT_EQ(s.control->circuits_torn_down, 0);
  EXPECT_GE(s.control->unchanged, 2 * 16 * 4 * 2 - 2);
}

TEST(MfabricControl, AnIdealOcsHoldsNothingLonger) {
  const Simulation& slow = alpha2_run();  // 25 ms, the default delay
  const Simulation ideal = run("{kind: mfabric, region: 4, alpha: 2, reconfiguration: 0s}");
  EXPECT_EQ(ideal.control->held_time, Time::zero());
  EXPECT_GT(slow.control->held_time, Time::zero());
  EXPECT_LT(ideal.result.mean_iteration_time(), slow.result.mean_iteration_time());
  EXPECT_EQ(ideal.result.transfers.bytes_delivered, ideal.result.transfers.bytes_sent);
}

TEST(MfabricControl, WhenFasterKeepsCircuitsThatASwitchWouldNotBeat) {
  // The job of CircuitsChangeDuringTraining: each all-to-all of a region is small (well under
  // 25 ms on any plan), so after each region's first plan no switch saves its delay: every later
  // new plan is kept, nothing is torn down, and the iteration is faster than switching always.
  const Simulation& always = alpha2_run();
  const Simulation faster = run("{kind: mfabric, region: 4, alpha: 2, switching: when-faster}");
  const ControlStats& c = *faster.control;
  EXPECT_EQ(c.switching, "when-faster");
  EXPECT_EQ(always.control->switching, "always");
  EXPECT_EQ(always.control->kept, 0);
  EXPECT_EQ(c.reconfigurations, 2);
  EXPECT_EQ(c.circuits_torn_down, 0);
  EXPECT_GT(c.kept, 0);
  EXPECT_GE(c.reconfigurations + c.unchanged + c.kept, 2 * 16 * 4 * 2);
  EXPECT_LT(faster.result.mean_iteration_time(), always.result.mean_iteration_time());
  EXPECT_EQ(faster.result.transfers.bytes_delivered, faster.result.transfers.bytes_sent);
  EXPECT_THROW(run("{kind: mfabric, region: 4, switching: sometimes}"), Error);
}

TEST(MfabricControl, FabricsThatDoNotReconfigureHaveNoControlPlane) {
  EXPECT_FALSE(run("fat-tree").control.has_value());
}

TEST(MfabricControl, AnEpGroupAcrossRegionsIsAnErrorNamingTheField) {
  try {
    run("{kind: mfabric, region: 2}");
    FAIL() << "an EP group spanning two regions was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fabric.region"), std::string::npos) << e.what();
  }
}

TEST(MfabricControl, UnknownPlannerOrPolicyIsAnErrorWhenTheExperimentIsLoaded) {
  // Refused by parse_experiment, before any workload is built or run, naming the field.
  for (const auto& [fabric, field] : std::map<std::string, std::string>{
           {"{kind: mfabric, region: 4, planner: magic}", "fabric.planner.algorithm"},
           {"{kind: mfabric, region: 4, policy: predict-everything}", "fabric.policy"}}) {
    try {
      parse_experiment(experiment(fabric), "exp.yaml");
      FAIL() << fabric;
    } catch (const Error& e) {
      EXPECT_EQ(e.source(), "exp.yaml");
      EXPECT_EQ(e.field(), field);
    }
  }
}

TEST(Policies, EachNameMakesItsPolicyAndOnlyTheOracleHidesTheDelay) {
  EXPECT_EQ(policy_names(),
            (std::vector<std::string>{"block", "reuse-previous", "eps-during-switch", "predict",
                                      "oracle", "paper-sim"}));
  for (const std::string& name : policy_names()) {
    const std::unique_ptr<Policy> p = make_policy(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name(), name);
    EXPECT_EQ(p->delay(Time::milliseconds(25)),
              name == "oracle" ? Time::zero() : Time::milliseconds(25));
  }
  EXPECT_EQ(make_policy("Block"), nullptr);
}

TEST(Policies, PlanKeysOrderIterationLayerMicroBatchAndDirection) {
  workload::Task t;
  t.iteration = 1;
  t.layer = 3;
  t.micro_batch = 2;
  const std::int64_t forward = plan_key(t, false);
  EXPECT_EQ(plan_key(t, true), forward + 1);
  workload::Task later_mb = t;
  later_mb.micro_batch = 3;
  workload::Task later_layer = t;
  later_layer.layer = 4;
  workload::Task next_iteration = t;
  next_iteration.iteration = 2;
  next_iteration.layer = -1;
  EXPECT_LT(forward, plan_key(later_mb, false));
  EXPECT_LT(plan_key(later_mb, true), plan_key(later_layer, false));
  EXPECT_LT(plan_key(later_layer, true), plan_key(next_iteration, false));
  EXPECT_GE(plan_key(workload::Task{}, false), 0);  // no layer, no micro-batch: still >= 0
}

// Two servers, one region: whatever the demand, every plan is alpha = 6 circuits between them, so
// only the first plan switches anything. Block waits exactly one delay for it; reuse-previous
// starts from the demand-free plan, which is already that plan; the oracle never waits. The
// roofline's compute times, which the timings below are reasoned from.
Simulation two_servers(const std::string& policy, const std::string& delay = "25ms") {
  return simulate(parse_experiment(
      "cluster: {servers: 2, link: 400G}\nfabric: {kind: mfabric, region: 2, policy: " + policy +
          ", reconfiguration: " + delay +
          "}\nworkload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 1, ep: 8, "
          "global_batch: 4, "
          "micro_batch: 2, seq: 256}\ncalibration: roofline\n",
      "t.yaml"));
}

TEST(MfabricPolicies, OnTwoServersBlockExposesExactlyOneDelay) {
  const Simulation block = two_servers("block");
  const Simulation reuse = two_servers("reuse-previous");
  const Simulation oracle = two_servers("oracle");
  EXPECT_EQ(block.control->reconfigurations, 1);
  EXPECT_EQ(block.result.mean_iteration_time() - oracle.result.mean_iteration_time(),
            Time::milliseconds(25));
  EXPECT_EQ(reuse.control->reconfigurations, 0);
  EXPECT_EQ(reuse.control->held_time, Time::zero());
  EXPECT_EQ(reuse.result.mean_iteration_time(), oracle.result.mean_iteration_time());
  EXPECT_EQ(oracle.control->held_time, Time::zero());
  EXPECT_EQ(oracle.control->reconfiguration_time, Time::zero());
}

TEST(MfabricPolicies, EpsDuringSwitchExposesNoDelayAndMovesBytesWhenCircuitsComeUp) {
  // With a 1 ms switch the first dispatch (over the EPS) and its expert compute outlast the
  // switch, so the combine finds the circuits up: nothing waits, where block holds each of the
  // two dispatches (one per TP rank) exactly 1 ms.
  const Simulation block = two_servers("block", "1ms");
  const Simulation eps = two_servers("eps-during-switch", "1ms");
  const Simulation oracle = two_servers("oracle", "1ms");
  EXPECT_EQ(block.control->held_time, Time::milliseconds(2));
  EXPECT_EQ(eps.control->reconfigurations, 1);
  EXPECT_EQ(eps.control->held, 0);
  EXPECT_EQ(eps.control->held_time, Time::zero());
  EXPECT_LT(eps.result.mean_iteration_time(), block.result.mean_iteration_time());
  EXPECT_EQ(eps.result.transfers.bytes_delivered, eps.result.transfers.bytes_sent);
  // Bytes crossed circuits: those that came up under the first dispatch, and every later one.
  const auto circuit_bytes = [](const Simulation& s) {
    double bytes = 0;
    for (std::size_t c = 2 * s.topology.links().size(); c < s.result.channels.size(); ++c)
      bytes += s.result.channels[c].bytes;
    return bytes;
  };
  EXPECT_GT(circuit_bytes(eps), 0.0);
  // The first dispatch moved some of its bytes over the EPS: less over circuits than the
  // oracle, whose circuits were there from the start.
  EXPECT_LT(circuit_bytes(eps), circuit_bytes(oracle));
  // With 25 ms the combine waits for what is left of the switch: less than block's whole delay.
  const Simulation block25 = two_servers("block");
  const Simulation eps25 = two_servers("eps-during-switch");
  EXPECT_GT(eps25.control->held_time, Time::zero());
  EXPECT_LT(eps25.control->held_time, block25.control->held_time);
  EXPECT_LT(eps25.result.mean_iteration_time(), block25.result.mean_iteration_time());
}

// paper-sim (sim/policies/paper_sim.h) on the two-server job: every plan is the same six
// circuits, so block switches once, while the paper's simulator switches the whole region for
// every forward dispatch and every backward layer. With a 1 us switch the backward switches hide
// under the compute before them (the LM head's or the attention's backward, far longer), and each
// forward dispatch of a (layer, micro-batch) waits exactly one delay on the critical path (one
// pipeline stage: the whole job waits): the iteration is the oracle's plus
// layers x micro-batches x 1 us, and each TP rank's dispatch is held 1 us.
TEST(MfabricPolicies, PaperSimSwitchesEveryLayerAndWaitsOnceEachForwardDispatch) {
  const Simulation paper = two_servers("paper-sim", "1us");
  const Simulation oracle = two_servers("oracle", "1us");
  const Simulation block = two_servers("block", "1us");
  // Mixtral 8x7B: 32 MoE layers; 2 micro-batches (global batch 4 / micro-batch 2, DP 1: 16 GPUs
  // = TP 2 x EP 8); 1 iteration.
  const std::int64_t switches_per_direction = 32 * 2;
  EXPECT_EQ(paper.control->switching, "every");
  EXPECT_EQ(paper.control->policy, "paper-sim");
  EXPECT_EQ(paper.control->reconfigurations, 2 * switches_per_direction);
  EXPECT_EQ(block.control->reconfigurations, 1);
  // Every circuit goes dark for every switch: 6 circuits each time but the first (none up yet).
  EXPECT_EQ(paper.control->circuits_torn_down, 6 * (2 * switches_per_direction - 1));
  EXPECT_EQ(paper.control->held, 2 * switches_per_direction);  // forward dispatches, 2 TP ranks
  EXPECT_EQ(paper.control->held_time, Time::microseconds(2 * switches_per_direction));
  EXPECT_EQ(paper.result.mean_iteration_time() - oracle.result.mean_iteration_time(),
            Time::microseconds(switches_per_direction));
  // The critical path holds one of the two TP ranks' dispatches per (layer, micro-batch): the
  // waits that make up the difference above, counted by walking the run back.
  EXPECT_EQ(paper.result.critical_holds, switches_per_direction);
  EXPECT_EQ(paper.result.critical_held_time, Time::microseconds(switches_per_direction));
  EXPECT_EQ(oracle.result.critical_holds, 0);
  EXPECT_EQ(paper.result.transfers.bytes_delivered, paper.result.transfers.bytes_sent);
}

TEST(MfabricPolicies, PaperSimExposesTheBackwardSwitchesAShortComputeCannotHide) {
  // With 25 ms the backward switches outlast the compute before them: backward all-to-alls wait
  // too, so more is held than the forward dispatches alone and the iteration is longer than the
  // oracle's by more than the forward waits.
  const Simulation paper = two_servers("paper-sim");
  const Simulation oracle = two_servers("oracle");
  const std::int64_t forward_held = 2 * 32 * 2;  // 2 TP ranks x 32 layers x 2 micro-batches
  EXPECT_GT(paper.control->held, forward_held);
  EXPECT_GT(paper.result.mean_iteration_time() - oracle.result.mean_iteration_time(),
            Time::milliseconds(25) * (forward_held / 2));
  EXPECT_EQ(paper.result.transfers.bytes_delivered, paper.result.transfers.bytes_sent);
}

TEST(MfabricPolicies, PaperSimRefusesAnotherSwitchingRule) {
  try {
    two_servers("paper-sim, switching: when-faster");
    FAIL() << "paper-sim with when-faster was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "fabric.switching");
  }
  EXPECT_EQ(two_servers("paper-sim, switching: every", "1us").control->switching, "every");
}

TEST(MfabricPolicies, EveryPolicyDeliversEverythingAndTheOracleBoundsThem) {
  // alpha 2 in regions of 4 servers: plans change with the demand.
  std::map<std::string, Simulation> runs;
  for (const std::string policy :
       {"block", "reuse-previous", "eps-during-switch", "predict", "oracle"}) {
    runs.emplace(policy, run("{kind: mfabric, region: 4, alpha: 2, policy: " + policy + "}"));
    const Simulation& s = runs.at(policy);
    EXPECT_EQ(s.control->policy, policy);
    EXPECT_EQ(s.result.transfers.delivered, s.result.transfers.started) << policy;
    EXPECT_EQ(s.result.transfers.bytes_delivered, s.result.transfers.bytes_sent) << policy;
    EXPECT_GT(s.control->reconfigurations, 2) << policy;
  }
  const Time oracle = runs.at("oracle").result.mean_iteration_time();
  EXPECT_LE(oracle, runs.at("block").result.mean_iteration_time());
  EXPECT_LE(oracle, runs.at("reuse-previous").result.mean_iteration_time());
  EXPECT_EQ(runs.at("oracle").control->held_time, Time::zero());
  EXPECT_LE(oracle, runs.at("eps-during-switch").result.mean_iteration_time());
  EXPECT_LE(oracle, runs.at("predict").result.mean_iteration_time());
  // predict forecast every layer but the first of each stage (2 regions x 15 layers x 4
  // micro-batches), and scored each forecast against the real demand.
  const ControlStats& p = *runs.at("predict").control;
  EXPECT_EQ(p.predictions, 2 * 15 * 4);
  EXPECT_GT(p.prediction_error, 0.0);
  EXPECT_LT(p.prediction_error, 2.0);
  EXPECT_EQ(runs.at("block").control->predictions, 0);
  // reuse-previous and eps-during-switch never hold a forward dispatch, so they wait less than
  // block.
  EXPECT_LT(runs.at("reuse-previous").control->held_time, runs.at("block").control->held_time);
  EXPECT_LT(runs.at("eps-during-switch").control->held_time, runs.at("block").control->held_time);
}

}  // namespace
}  // namespace mfabric::sim

namespace mfabric::sim {
namespace {

TEST(MfabricControl, TraceShowsEachRegionsReconfigurationsOnItsOwnTrack) {
  SimulationOptions options;
  options.record_spans = true;
  const Simulation s = simulate(
      parse_experiment(experiment("{kind: mfabric, region: 4, alpha: 2}"), "t.yaml"), options);
  const nlohmann::json trace = nlohmann::json::parse(report::trace_json(report::report_of(s)));
  const int ocs_pid = s.graph.gpus();
  std::set<int> tracks;
  std::int64_t reconfigurations = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("pid") != ocs_pid) continue;
    if (e.at("ph") == "M" && e.at("name") == "thread_name") tracks.insert(e.at("tid").get<int>());
    if (e.at("ph") == "X") {
      EXPECT_EQ(e.at("name"), "reconfiguration");
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 25000.0);  // 25 ms in microseconds
      ++reconfigurations;
    }
  }
  EXPECT_EQ(tracks, (std::set<int>{0, 1}));
  EXPECT_EQ(reconfigurations, s.control->reconfigurations);
}

}  // namespace
}  // namespace mfabric::sim
