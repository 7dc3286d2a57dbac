// Overlap models (workload/training.h, OverlapSpec) through the whole path, with times derived
// by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "config/experiment.h"
#include "config/workload_builder.h"
#include "sim/load_experiment.h"
#include "sim/simulation.h"
#include "workload/tiny_model.h"

namespace mfabric::sim {
namespace {

// The tiny model (tests/workload/tiny_model.h: 4 layers, the first dense, 4 experts top-2,
// hidden 64) with every compute op replayed at 1 ms (the permutation around the experts at 0,
// so that the counts below are of GEMMs), on 2 servers of 1 GPU at 100G (1 us
// cables, exact max-min evolution).
struct TinyJob {
  std::filesystem::path dir;
  explicit TinyJob(const std::string& name) {
    dir = std::filesystem::temp_directory_path() / ("mfabric_overlap_" + name);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "tiny.yaml") << workload::testing::kTinyModelYaml;
    // One MoE layer and nothing else: a pipeline step is 4 compute ops and 2 all-to-alls.
    std::ofstream(dir / "one-layer.yaml") << "name: one-layer\nlayers: 1\nhidden: 64\n"
                                             "attention: {kind: mha, heads: 4}\nffn_expert: 32\n"
                                             "experts: 4\ntop_k: 2\nvocab: 1000\n";
    std::ofstream(dir / "measured.csv")
        << "op,layer,phase,duration\n"
        << "attention,*,fwd,1ms\nattention,*,bwd,1ms\nrouter,*,fwd,1ms\nrouter,*,bwd,1ms\n"
        << "experts,*,fwd,1ms\nexperts,*,bwd,1ms\ndense-ffn,*,fwd,1ms\ndense-ffn,*,bwd,1ms\n"
        << "lm-head,*,fwd,1ms\nlm-head,*,bwd,1ms\npermute,*,fwd,0ms\npermute,*,bwd,0ms\n";
  }
  ~TinyJob() { std::filesystem::remove_all(dir); }

  RunResult run(const std::string& workload, const std::string& cluster =
                                                 "cluster: {servers: 2, gpus_per_server: 1, "
                                                 "nics_per_server: 1, link: 100G, link_latency: "
                                                 "1us}\n") {
    const std::string path = (dir / "job.yaml").string();
    std::ofstream(path) << cluster << "fabric: fat-tree\n"
                        << "workload: {" << workload << "}\n"
                        << "simulation: {completion_batching: 0}\n"
                        << "calibration: {base: roofline, compute: {replay: measured.csv}}\n";
    SimulationOptions options;
    options.record_spans = true;
    Simulation s = simulate(load_experiment(path), options);
    tasks = s.graph.tasks();
    return std::move(s.result);
  }
  // The op of task `id` of the last run.
  workload::Op graph_op(workload::TaskId id) const {
    return tasks.at(static_cast<std::size_t>(id)).op;
  }
  std::vector<workload::Task> tasks;

  // The time every TP all-reduce of run `r` (which must be the last run) takes, checking that there
  // are `count` of them and that they all take it (the same bytes over an idle NVSwitch).
  Time the_tp_all_reduce_time(const RunResult& r, std::size_t count) const {
    std::vector<Time> times;
    for (const TaskSpan& s : r.spans) {
      if (graph_op(s.task) == workload::Op::TpAllReduce) times.push_back(s.end - s.start);
    }
    EXPECT_EQ(times.size(), count);
    for (Time t : times)
      EXPECT_EQ(t, times.front());
    return times.empty() ? Time::zero() : times.front();
  }
};

// DP 2 (one GPU per server), TP 1, PP 1, EP 1, one micro-batch: 12 ops forward (attention and
// dense FFN in layer 0; attention, router and experts in layers 1-3; the LM head) and 12
// backward, 1 ms each: 24 ms of compute, then the gradient all-reduces over the two servers. A
// 2-member ring moves S each way in one step: S x 8 / 100G + 2 x 2 us (two cables per path, two
// ring hops). The dense and the expert reduce share the link, so together they end after their
// summed bytes.
//   gradients: attention 4 x 64 x 64 per layer, routers 64 x 4 (layers 1-3), the dense FFN
//   3 x 64 x 128 (layer 0), embeddings 2 x 1000 x 64; experts 4 x 3 x 64 x 32 per MoE layer;
//   2 bytes each.
// Without overlap every byte waits for the end: 585,216 bytes. With --overlap-grad-reduce,
// layers 3, 2, 1 are reduced under the backward of the layers below (each in a few us, far
// less than 1 ms), and only layer 0's (16,384 + 24,576 parameters) and the embeddings'
// (128,000) are left at the end: 337,920 bytes.
TEST(Overlap, GradReduceLeavesOnlyTheFirstLayerAndTheEmbeddingsAtTheEnd) {
  TinyJob job("grad_reduce");
  const std::string workload =
      "model: tiny.yaml, convention: paper, tp: 1, pp: 1, ep: 1, dp: 2, micro_batch: 1, "
      "global_batch: 2, "
      "seq: 16";
  const RunResult plain = job.run(workload);
  const RunResult overlapped = job.run(workload + ", overlap: {grad_reduce: true}");
  const double compute = 24e-3;
  const double latency = 2 * 2e-6;
  const double all_bytes = 2.0 * (4 * 4 * 4096 + 3 * 256 + 3 * 64 * 128 + 2 * 64000 + 3 * 4 * 6144);
  const double tail_bytes = 2.0 * (4 * 4096 + 3 * 64 * 128 + 2 * 64000);
  ASSERT_EQ(all_bytes, 585216);
  ASSERT_EQ(tail_bytes, 337920);
  EXPECT_NEAR(plain.iteration_times[0].seconds(), compute + all_bytes * 8 / 100e9 + latency, 1e-9);
  EXPECT_NEAR(overlapped.iteration_times[0].seconds(), compute + tail_bytes * 8 / 100e9 + latency,
              1e-9);
  // The bytes are the same; only when they move changes.
  EXPECT_EQ(plain.transfers.bytes_delivered, overlapped.transfers.bytes_delivered);
}

// EP 2 over the two servers, PP 1, a model of one MoE layer, two micro-batches: 1F1B runs F0 B0
// F1 B1, each step 4 compute ops of 1 ms, the two halves of the permutation (0 ms) and 2
// all-to-alls. Those of micro-batch 0 all take a (dispatch, combine and their backward move the
// same two byte counts, swapped: one step each way over a full-duplex link), those of micro-batch
// 1 all take b, both far below 1 ms. Plain: 16 ms + 4a + 4b, then the gradient all-reduce r. With
// the EP overlap (Megatron-Core's combined 1F1B) F0 runs alone, then F1 and B0 merged, then B1
// alone. The merged pair runs in Megatron-Core's order: B0's lm-head and its permutation, whose
// combine gradient then runs under F1's attention; F1's attention and router, whose dispatch runs
// under B0's experts; F1's experts, under which B0's dispatch gradient runs; B0's router and
// attention, under which F1's combine runs; F1's permutation and lm-head. The pair is its 8 ms of
// compute with every all-to-all hidden: F0 ends at 4 ms + 2a, the pair 8 ms later, B1 takes
// 4 ms + 2b: 16 ms + 2a + 2b + r.
TEST(Overlap, EpCommHidesOneStepsAllToAllsUnderTheOthersCompute) {
  TinyJob job("ep_comm");
  const std::string workload =
      "model: one-layer.yaml, convention: paper, tp: 1, pp: 1, ep: 2, micro_batch: 1, "
      "global_batch: 2, seq: 4096";
  const RunResult plain = job.run(workload);
  Time a, b, r;
  int all_to_alls = 0;
  for (const TaskSpan& s : plain.spans) {
    const workload::Task& t = job.tasks.at(static_cast<std::size_t>(s.task));
    const Time d = s.end - s.start;
    if (t.op == workload::Op::Dispatch || t.op == workload::Op::Combine) {
      ++all_to_alls;
      (t.micro_batch == 0 ? a : b) = d;
    }
    if (t.op == workload::Op::DenseGradAllReduce) r = d;
  }
  ASSERT_EQ(all_to_alls, 8);
  for (const TaskSpan& s : plain.spans) {  // all four of a micro-batch take the same time
    const workload::Task& t = job.tasks.at(static_cast<std::size_t>(s.task));
    if (t.op == workload::Op::Dispatch || t.op == workload::Op::Combine) {
      EXPECT_EQ(s.end - s.start, t.micro_batch == 0 ? a : b);
    }
  }
  ASSERT_GT(a, Time::zero());
  ASSERT_LT(a, Time::milliseconds(1));
  ASSERT_LT(b, Time::milliseconds(1));
  EXPECT_EQ(plain.iteration_times[0], Time::milliseconds(16) + a * 4 + b * 4 + r);
  const RunResult overlapped = job.run(workload + ", overlap: {ep_comm: true}");
  // Each all-to-all of the pair starts under the other step's compute op of the order above.
  Time f0_end, combine_grad_start, f1_dispatch_start, b0_experts_start, b0_experts_end;
  for (const TaskSpan& s : overlapped.spans) {
    const workload::Task& t = job.tasks.at(static_cast<std::size_t>(s.task));
    const bool forward = t.phase == workload::Phase::Forward;
    if (t.op == workload::Op::LmHead && forward && t.micro_batch == 0) f0_end = s.end;
    if (t.op == workload::Op::Combine && !forward && t.micro_batch == 0) {
      combine_grad_start = s.start;
    }
    if (t.op == workload::Op::Dispatch && forward && t.micro_batch == 1) {
      f1_dispatch_start = s.start;
    }
    if (t.op == workload::Op::Experts && !forward && t.micro_batch == 0 && t.gpu() == 0) {
      b0_experts_start = s.start;
      b0_experts_end = s.end;
    }
  }
  EXPECT_EQ(f0_end, Time::milliseconds(4) + a * 2);
  EXPECT_EQ(combine_grad_start, f0_end + Time::milliseconds(1));  // after B0's lm-head
  EXPECT_EQ(f1_dispatch_start, f0_end + Time::milliseconds(3));   // after F1's router
  EXPECT_EQ(b0_experts_start, f1_dispatch_start);
  EXPECT_EQ(overlapped.iteration_times[0], Time::milliseconds(16) + a * 2 + b * 2 + r);
  EXPECT_EQ(plain.transfers.bytes_delivered, overlapped.transfers.bytes_delivered);
}

// TP 2 on one server of 2 GPUs, PP 1, EP 1 (its all-to-alls move nothing), one micro-batch: 16
// TP all-reduces of the same 128 KiB, 12 ops of 1 ms each way. With --tp-comm-overlap the
// all-reduce after each compute op runs alongside it and, far shorter than 1 ms, is hidden: those
// after the attention (4 layers) and the dense FFN forward, after the router or dense FFN and the
// attention backward (4 layers x 2), 13 in all. The 3 after the forward combines follow an
// all-to-all, not a GEMM, and stay in the path. So the overlapped iteration is the plain one less
// 13 all-reduce times.
TEST(Overlap, TpCommHidesTheAllReducesAfterEachGemm) {
  TinyJob job("tp_comm");
  const std::string workload =
      "model: tiny.yaml, convention: paper, tp: 2, pp: 1, ep: 1, micro_batch: 1, global_batch: 1, "
      "seq: 1024";
  const std::string two_gpus = "cluster: {servers: 1, gpus_per_server: 2, nics_per_server: 2}\n";
  const RunResult plain = job.run(workload, two_gpus);
  const Time all_reduce = job.the_tp_all_reduce_time(plain, 16);
  const RunResult overlapped = job.run(workload + ", overlap: {tp_comm: true}", two_gpus);
  ASSERT_LT(all_reduce, Time::milliseconds(1));
  EXPECT_EQ(plain.iteration_times[0], Time::milliseconds(24) + all_reduce * 16);
  EXPECT_EQ(overlapped.iteration_times[0], Time::milliseconds(24) + all_reduce * 3);
}

// The same two models on a two-stage pipeline (PP 2), one micro-batch, so that the whole
// iteration is one chain through both stages and the sends between them.
//  - grad_reduce, DP 2 on 4 servers of 1 GPU: stage 1 finishes its backward first and its
//    reduces hide under stage 0's backward either way; stage 0's tail is what changes. Stage 0
//    holds layer 0 (attention 4 x 64 x 64, dense FFN 3 x 64 x 128), layer 1 (attention, router
//    64 x 4, experts 4 x 3 x 64 x 32) and the input embedding 1000 x 64: 292,352 bytes at the
//    end without the overlap; with it, layer 1's are reduced under layer 0's backward and 209,920
//    remain (layer 0 and the embedding), each tail its bytes at 100G plus two ring hops of 2 us.
//  - tp_comm, TP 2 in each of 2 servers: the same 13 of 16 all-reduces follow a GEMM, on one chain.
TEST(Overlap, TwoStagePipelinesByHand) {
  TinyJob job("two_stage");
  const std::string four_servers =
      "cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 100G, link_latency: "
      "1us}\n";
  const std::string grad =
      "model: tiny.yaml, convention: paper, tp: 1, pp: 2, ep: 1, dp: 2, micro_batch: 1, "
      "global_batch: 2, seq: 16";
  // What follows the last compute: stage 0's gradient all-reduces. (Stage 1's, under the
  // overlap, start with the gradient send to stage 0 and share its NIC for a moment, so the
  // whole iterations differ by that too; the tails are what the model changes.)
  const auto tail_after_compute = [&job](const RunResult& r) {
    Time last_compute, end;
    for (const TaskSpan& span : r.spans) {
      end = std::max(end, span.end);
      if (job.tasks.at(static_cast<std::size_t>(span.task)).kind == workload::TaskKind::Compute)
        last_compute = std::max(last_compute, span.end);
    }
    return end - last_compute;
  };
  const RunResult plain = job.run(grad, four_servers);
  const Time plain_tail = tail_after_compute(plain);
  const RunResult reduced = job.run(grad + ", overlap: {grad_reduce: true}", four_servers);
  const Time reduced_tail = tail_after_compute(reduced);
  const double stage0 = 2.0 * (2 * 4 * 4096 + 3 * 64 * 128 + 256 + 4 * 6144 + 64000);
  const double tail = 2.0 * (4 * 4096 + 3 * 64 * 128 + 64000);
  ASSERT_EQ(stage0, 292352);
  ASSERT_EQ(tail, 209920);
  EXPECT_NEAR(plain_tail.seconds(), stage0 * 8 / 100e9 + 4e-6, 1e-12);
  EXPECT_NEAR(reduced_tail.seconds(), tail * 8 / 100e9 + 4e-6, 1e-12);

  const std::string two_servers = "cluster: {servers: 2, gpus_per_server: 2, nics_per_server: 2}\n";
  const std::string tp =
      "model: tiny.yaml, convention: paper, tp: 2, pp: 2, ep: 1, micro_batch: 1, global_batch: 1, "
      "seq: 1024";
  const RunResult tp_plain = job.run(tp, two_servers);
  const Time all_reduce = job.the_tp_all_reduce_time(tp_plain, 16);
  const RunResult tp_overlapped = job.run(tp + ", overlap: {tp_comm: true}", two_servers);
  EXPECT_EQ(tp_plain.iteration_times[0] - tp_overlapped.iteration_times[0], all_reduce * 13);
}

TEST(Overlap, UnknownOverlapIsOneLine) {
  try {
    parse_experiment("workload: {model: mixtral-8x7b, overlap: {pp_comm: true}}\n", "x.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.yaml: workload.overlap.pp_comm: unknown field"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mfabric::sim
