#include "workload/training.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "workload/training_cp.h"
#include "workload/training_dp.h"
#include "workload/training_ep.h"
#include "workload/training_pp.h"
#include "workload/training_schedule.h"
#include "workload/training_tasks.h"
#include "workload/training_tp.h"

namespace mfabric::workload {

const char* to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::OneFOneB:
      return "1f1b";
    case PipelineSchedule::GPipe:
      return "gpipe";
    case PipelineSchedule::Interleaved:
      return "interleaved";
    case PipelineSchedule::DualPipe:
      return "dualpipe";
  }
  return "?";
}

PipelineSchedule parse_schedule(const std::string& text) {
  if (text == "1f1b") return PipelineSchedule::OneFOneB;
  if (text == "gpipe") return PipelineSchedule::GPipe;
  if (text == "interleaved") return PipelineSchedule::Interleaved;
  if (text == "dualpipe") return PipelineSchedule::DualPipe;
  throw Error(fmt::format(
      "unknown pipeline schedule '{}' (known: 1f1b, gpipe, interleaved, dualpipe)", text));
}

const char* to_string(Dispatcher d) {
  return d == Dispatcher::DeepEP ? "deepep" : "alltoall";
}

Dispatcher parse_dispatcher(const std::string& text) {
  if (text == "alltoall") return Dispatcher::AllToAll;
  if (text == "deepep") return Dispatcher::DeepEP;
  throw Error(fmt::format("unknown dispatcher '{}' (known: alltoall, deepep)", text));
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None:
      return "none";
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
  }
  return "?";
}

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::None;
  if (text == "selective") return Recompute::Selective;
  if (text == "full") return Recompute::Full;
  throw Error(fmt::format("unknown recompute '{}' (known: none, selective, full)", text));
}

const char* to_string(Precision p) {
  return p == Precision::FP8 ? "fp8" : "bf16";
}

Precision parse_precision(const std::string& text) {
  if (text == "bf16") return Precision::BF16;
  if (text == "fp8") return Precision::FP8;
  throw Error(fmt::format("unknown precision '{}' (known: bf16, fp8)", text));
}

double bubble_fraction(PipelineSchedule schedule, int stages, int micro_batches, int chunks) {
  if (stages < 1) throw Error("", "pp", fmt::format("must be at least 1, got {}", stages));
  if (micro_batches < 1) {
    throw Error("", "micro_batches", fmt::format("must be at least 1, got {}", micro_batches));
  }
  if (chunks < 1) throw Error("", "vp", fmt::format("must be at least 1, got {}", chunks));
  switch (schedule) {
    case PipelineSchedule::OneFOneB:
    case PipelineSchedule::GPipe:
      // Every stage idles for stages - 1 forward and as many backward slots while the pipeline
      // fills and drains, of the micro_batches + stages - 1 of each on the path.
      return static_cast<double>(stages - 1) / (micro_batches + stages - 1);
    case PipelineSchedule::Interleaved:
      // The fill and drain take stages - 1 chunk slots, each 1/chunks of a micro-batch's.
      return static_cast<double>(stages - 1) /
             (static_cast<double>(chunks) * micro_batches + stages - 1);
    case PipelineSchedule::DualPipe: {
      // Each rank computes every micro-batch once (F + B = 3F a slot); its bubble is
      // (stages / 2 - 1) x (F&B + B) = (stages / 2 - 1) x 5F with F&B taking F + B.
      const double idle = std::max(0, stages / 2 - 1) * 5.0 / 3.0;
      return idle / (micro_batches + idle);
    }
  }
  return 0;
}

int TrainingSpec::micro_batches() const {
  if (micro_batch < 1) {
    throw Error("", "micro_batch", fmt::format("must be at least 1, got {}", micro_batch));
  }
  if (seq < 1 || seq > kMaxSeq) {
    throw Error("", "seq", fmt::format("must be between 1 and {}, got {}", kMaxSeq, seq));
  }
  // Routing traces count tokens x top_k per source rank in 32 bits.
  if (tokens_per_micro_batch() * std::max(1, model.top_k) >
      std::numeric_limits<std::int32_t>::max()) {
    throw Error("", "micro_batch",
                fmt::format("micro_batch x seq x top_k = {} x {} x {} tokens is more than a "
                            "routing trace counts (2^31 - 1)",
                            micro_batch, seq, model.top_k));
  }
  if (max_nodes_per_token < 0) {
    throw Error("", "routing.max_nodes",
                fmt::format("expected a node count >= 1, got {}", max_nodes_per_token));
  }
  if (max_nodes_per_token > 0) {
    const int group_nodes = std::max(1, parallelism.ep_group_gpus() / std::max(1, gpus_per_server));
    if (max_nodes_per_token > group_nodes) {
      throw Error("", "routing.max_nodes",
                  fmt::format("{} nodes a token, but an EP group of ep x etp = {} GPUs spans {} "
                              "node(s) of {} GPUs",
                              max_nodes_per_token, parallelism.ep_group_gpus(), group_nodes,
                              gpus_per_server));
    }
  }
  if (precision == Precision::FP8 && !(gpu.peak_fp8_flops > 0)) {
    throw Error("", "precision",
                fmt::format("fp8 on {}, which has no FP8 tensor cores; use bf16", gpu.name));
  }
  // Under sequence (and context) parallelism each GPU of a TP x CP group holds an equal share
  // of the micro-batch's tokens, as Megatron-LM requires.
  const long long shards = static_cast<long long>(parallelism.tp) * parallelism.cp;
  if (!parallelism.paper() && tokens_per_micro_batch() % shards != 0) {
    throw Error("", "seq",
                fmt::format("micro_batch x seq = {} x {} tokens must split evenly over tp x cp = "
                            "{} GPUs (sequence parallelism)",
                            micro_batch, seq, shards));
  }
  const long long per_step = static_cast<long long>(micro_batch) * parallelism.dp;
  if (global_batch < 1 || global_batch % per_step != 0) {
    throw Error("", "global_batch",
                fmt::format("must be a positive multiple of micro_batch x dp = {} x {} = {}, "
                            "got {}",
                            micro_batch, parallelism.dp, per_step, global_batch));
  }
  const long long micro_batches = global_batch / per_step;
  // The interleaved schedule and a virtual pipeline go together, in whole rounds of PP.
  if (schedule == PipelineSchedule::Interleaved && parallelism.vp < 2) {
    throw Error("", "vp", "the interleaved schedule runs model chunks: give vp >= 2 (workload.vp)");
  }
  if (parallelism.vp > 1 && schedule != PipelineSchedule::Interleaved) {
    throw Error("", "schedule",
                fmt::format("vp {} needs the interleaved schedule, not {}", parallelism.vp,
                            to_string(schedule)));
  }
  if (schedule == PipelineSchedule::DualPipe) {
    if (parallelism.pp < 2 || parallelism.pp % 2 != 0) {
      throw Error("", "pp",
                  fmt::format("the dualpipe schedule pairs stage s with stage pp - 1 - s: pp must "
                              "be even, got {}",
                              parallelism.pp));
    }
    if (micro_batches < 2LL * parallelism.pp || micro_batches % 2 != 0) {
      throw Error("", "global_batch",
                  fmt::format("the dualpipe schedule runs half the micro-batches each way and "
                              "needs an even number of at least 2 x pp = {}, but {} / "
                              "(micro_batch x dp) gives {}",
                              2 * parallelism.pp, global_batch, micro_batches));
    }
    if (overlap.grad_reduce) {
      throw Error("", "overlap.grad_reduce",
                  "overlapping the gradient reduction is not simulated with the dualpipe schedule");
    }
  }
  if (schedule == PipelineSchedule::Interleaved && micro_batches % parallelism.pp != 0) {
    throw Error("", "global_batch",
                fmt::format("the interleaved schedule runs micro-batches in rounds of pp = {}, "
                            "but {} / (micro_batch x dp) gives {}",
                            parallelism.pp, global_batch, micro_batches));
  }
  // Task labels hold the micro-batch index (over all DP replicas) in 16 bits.
  if (micro_batches * std::max(parallelism.dp, parallelism.expert_dp()) > 32767) {
    throw Error("", "global_batch",
                fmt::format("{} gives {} micro-batches per iteration over {} DP replicas, more "
                            "than mfabric's task graph indexes (32767); use a larger micro_batch "
                            "or a smaller global_batch",
                            global_batch, micro_batches, parallelism.dp));
  }
  return static_cast<int>(micro_batches);
}

RoutingTrace synthetic_trace_for(const TrainingSpec& spec, SyntheticRouting params,
                                 std::uint64_t seed, int of_micro_batches) {
  std::vector<int> layers;
  for (int l = 0; l < spec.model.layers; ++l) {
    if (spec.model.is_moe_layer(l)) layers.push_back(l);
  }
  params.tokens_per_rank = spec.tokens_per_ep_rank();
  params.top_k = spec.model.top_k;
  const int m = spec.micro_batches();
  const int replicas = spec.parallelism.expert_dp();
  // The trace's micro-batch k + r x m is replica r's micro-batch k (training_ep.cpp); in the
  // larger job it is k + r x of_micro_batches.
  std::vector<int> streams;
  if (of_micro_batches > m) {
    for (int r = 0; r < replicas; ++r) {
      for (int k = 0; k < m; ++k)
        streams.push_back(k + r * of_micro_batches);
    }
  }
  return generate_routing(params, spec.parallelism.ep, spec.model.experts, spec.iterations, layers,
                          m * replicas, Rng(seed), streams.empty() ? nullptr : &streams);
}

namespace {

using training::cp_exchange;
using training::ExpertTraffic;
using training::GradientReduction;
using training::PipelineStep;
using training::PipelineTransfers;
using training::tp_all_reduce;
using training::TrainingTasks;

// The training graph, iteration by iteration: each stage's forwards and backwards in the
// pipeline schedule's order (training_schedule.h), each a sequence of compute tasks per layer
// with the communication of every parallelism between them: TP (training_tp.h), EP
// (training_ep.h), PP (training_pp.h), DP (training_dp.h), all added through TrainingTasks.
class GraphBuilder {
 public:
  GraphBuilder(const TrainingSpec& spec, const RoutingTrace& trace)
      : spec_(spec),
        layout_(spec.parallelism, spec.model, spec.gpus_per_server),
        compute_(spec.model, spec.gpu, spec.efficiency,
                 ComputeShape{.micro_batch = spec.micro_batch,
                              .seq = spec.seq,
                              .tp = spec.parallelism.tp,
                              .etp = spec.parallelism.expert_tp(),
                              .fp8 = spec.precision == Precision::FP8,
                              .cp = spec.parallelism.cp},
                 spec.kernels.get()),
        p_(spec.parallelism),
        virtual_(spec.schedule, spec.parallelism.pp, spec.parallelism.vp),
        m_(spec.micro_batches()),
        tasks_(spec.parallelism, layout_),
        experts_(spec, trace, m_),
        pipeline_(spec),
        gradients_(spec, layout_),
        expert_seconds_per_token_(expert_seconds_per_token()) {}

  TaskGraph build() {
    for (int it = 0; it < spec_.iterations; ++it)
      build_iteration(it);
    return tasks_.take_graph();
  }

 private:
  Time duration(Op op, int layer, Phase phase, Time modelled) const {
    if (spec_.replay) {
      if (const Time* t = spec_.replay->find(op, layer, phase)) return *t;
    }
    return modelled;
  }

  // Half of a duration (the permutation runs in two halves around the all-to-alls).
  static Time half(Time t) { return Time::picoseconds(t.ps() / 2); }

  // The same compute op, of duration `d`, on every GPU of the stage after its task in `cur`,
  // which then continues from it.
  void compute_all(int stage, std::vector<TaskId>& cur, Op op, Phase phase, int layer, int mb,
                   Time d) {
    tasks_.each_gpu(stage, [&](int g, std::size_t i, int) {
      cur[i] = tasks_.compute(g, cur[i], op, phase, layer, mb, d);
    });
  }

  void experts(int stage, std::vector<TaskId>& cur, Phase phase, int layer, int mb) {
    tasks_.each_gpu(stage, [&](int g, std::size_t i, int ep) {
      const training::LayerRouting& r =
          experts_.routing(tasks_, layer, mb, layout_.expert_coord(g).edp);
      const std::int64_t n = r.assignments[static_cast<std::size_t>(ep)];
      const Time modelled =
          expert_seconds_per_token_ > 0
              ? Time::from_seconds(expert_seconds_per_token_ * static_cast<double>(n) *
                                   (phase == Phase::Backward ? 2 : 1))
              : compute_.experts(n, experts_.local_experts(), phase);
      const Time t = duration(Op::Experts, layer, phase, modelled);
      cur[i] = tasks_.compute(g, cur[i], Op::Experts, phase, layer, mb, t);
    });
  }

  // A layer's work is built in three parts, each up to and including the issue of an
  // all-to-all, then what follows it (a dense layer's is all in the first): the units in which
  // the EP overlap interleaves a merged forward and backward (merged()).
  static constexpr int kLayerParts = 3;

  // One layer's forward for micro-batch mb on every GPU of the stage after `cur`: the forward
  // proper, or its recompute before the layer's backward (Recompute::Full), the same tasks.
  void forward_layer(int stage, std::vector<TaskId>& cur, int layer, int mb) {
    std::vector<TaskId> gate;
    for (int part = 0; part < kLayerParts; ++part)
      forward_layer_part(part, stage, cur, gate, layer, mb);
  }

  // Part 0: the attention and the router, up to the dispatch; 1: the experts (and shared
  // experts, from `gate`, the router's input), up to the combine; 2: the permutation's second
  // half and the TP all-reduce.
  void forward_layer_part(int part, int stage, std::vector<TaskId>& cur, std::vector<TaskId>& gate,
                          int layer, int mb) {
    const Phase F = Phase::Forward;
    const bool moe = spec_.model.is_moe_layer(layer);
    if (part == 0) {
      // Context parallelism: every token's keys and values before the attention.
      cp_exchange(tasks_, spec_, stage, cur, Op::CpKeyValues, F, layer, mb);
      const Time attn = duration(Op::Attention, layer, F, compute_.attention(F));
      compute_all(stage, cur, Op::Attention, F, layer, mb, attn);
      tp_all_reduce(tasks_, spec_, stage, cur, F, layer, mb);
      if (!moe) {
        const Time ffn = duration(Op::DenseFfn, layer, F, compute_.dense_ffn(F));
        compute_all(stage, cur, Op::DenseFfn, F, layer, mb, ffn);
        tp_all_reduce(tasks_, spec_, stage, cur, F, layer, mb);
        return;
      }
      const Time router = duration(Op::Router, layer, F, compute_.router(F));
      compute_all(stage, cur, Op::Router, F, layer, mb, router);
      gate = cur;
      // The permutation's first half (top-k, sort by expert, gather) feeds the dispatch.
      compute_all(stage, cur, Op::Permute, F, layer, mb, permute_half(layer, F));
      experts_.all_to_all(tasks_, stage, cur, Op::Dispatch, F, layer, mb, /*transposed=*/false);
      return;
    }
    if (!moe) return;
    if (part == 1) {
      // Shared experts need only the gate's input: they run while the dispatch is in flight.
      if (spec_.model.shared_experts > 0) {
        const Time shared = duration(Op::SharedExperts, layer, F, compute_.shared_experts(F));
        tasks_.each_gpu(stage, [&](int g, std::size_t i, int) {
          tasks_.compute(g, gate[i], Op::SharedExperts, F, layer, mb, shared);
        });
      }
      experts(stage, cur, F, layer, mb);
      experts_.all_to_all(tasks_, stage, cur, Op::Combine, F, layer, mb, /*transposed=*/true);
      return;
    }
    // Its second half: the weighted scatter back into token order.
    compute_all(stage, cur, Op::Permute, F, layer, mb, permute_half(layer, F));
    tp_all_reduce(tasks_, spec_, stage, cur, F, layer, mb);
  }

  // One half of a layer's permutation in `phase`.
  Time permute_half(int layer, Phase phase) const {
    return half(duration(Op::Permute, layer, phase, compute_.permutation(phase)));
  }

  // One layer's backward, in the parts of forward_layer_part's: 0 up to the combine's gradient
  // (with full recomputation the layer's forward again first), 1 the experts up to the
  // dispatch's gradient, 2 the router, the attention and what follows.
  void backward_layer_part(int part, int stage, std::vector<TaskId>& cur, int layer, int mb) {
    const Phase B = Phase::Backward;
    const bool moe = spec_.model.is_moe_layer(layer);
    if (part == 0) {
      // Full recomputation: the layer's forward again, from the input it kept.
      if (spec_.recompute == Recompute::Full) forward_layer(stage, cur, layer, mb);
      if (!moe) {
        const Time ffn = duration(Op::DenseFfn, layer, B, compute_.dense_ffn(B));
        compute_all(stage, cur, Op::DenseFfn, B, layer, mb, ffn);
        return;
      }
      if (spec_.model.shared_experts > 0) {
        const Time shared = duration(Op::SharedExperts, layer, B, compute_.shared_experts(B));
        tasks_.each_gpu(stage, [&](int g, std::size_t i, int) {
          tasks_.compute(g, cur[i], Op::SharedExperts, B, layer, mb, shared);
        });
      }
      // Gradients retrace the tokens: through the scatter's gradient (a gather) to the experts
      // (the dispatch matrix), then back and through the gather's gradient.
      compute_all(stage, cur, Op::Permute, B, layer, mb, permute_half(layer, B));
      experts_.all_to_all(tasks_, stage, cur, Op::Combine, B, layer, mb, /*transposed=*/false);
      return;
    }
    if (part == 1) {
      if (!moe) return;
      experts(stage, cur, B, layer, mb);
      experts_.all_to_all(tasks_, stage, cur, Op::Dispatch, B, layer, mb, /*transposed=*/true);
      return;
    }
    if (moe) {
      compute_all(stage, cur, Op::Permute, B, layer, mb, permute_half(layer, B));
      const Time router = duration(Op::Router, layer, B, compute_.router(B));
      compute_all(stage, cur, Op::Router, B, layer, mb, router);
    }
    tp_all_reduce(tasks_, spec_, stage, cur, B, layer, mb);
    // Context parallelism: the keys and values again, and their gradients back to their ranks.
    cp_exchange(tasks_, spec_, stage, cur, Op::CpKeyValues, B, layer, mb);
    const Time attn = duration(Op::Attention, layer, B, compute_.attention(B));
    compute_all(stage, cur, Op::Attention, B, layer, mb, attn);
    cp_exchange(tasks_, spec_, stage, cur, Op::CpKeyValueGrads, B, layer, mb);
    // The stage's last backward has finished this layer: with --overlap-grad-reduce its
    // gradients are reduced now, under the backward of the layers below.
    if (spec_.overlap.grad_reduce && mb == last_backward_mb()) {
      gradients_.reduce_layer(tasks_, stage, layer);
    }
    tp_all_reduce(tasks_, spec_, stage, cur, B, layer, mb);
  }

  // A forward or backward step under construction: its virtual stage, micro-batch, the stage's
  // tasks it continues from, its layers (`next` of `count` built so far) and, for a forward,
  // the router's input of the layer in progress.
  struct Walk {
    int v = 0;
    int mb = 0;
    std::vector<TaskId> cur;
    int first = 0;
    int count = 0;
    int next = 0;
    std::vector<TaskId> gate;
  };

  // A step of micro-batch mb on model chunk `chunk` of `stage`, nothing built yet.
  Walk walk(int stage, int chunk, int mb) const {
    Walk w;
    w.v = virtual_.virtual_stage(stage, chunk);
    w.mb = mb;
    w.first = layout_.chunk_first_layer(virtual_.layer_chunk(w.v));
    w.count = layout_.chunk_layers(virtual_.layer_chunk(w.v));
    return w;
  }

  Walk start_forward(int stage, int chunk, int mb) {
    Walk w = walk(stage, chunk, mb);
    w.cur = pipeline_.forward_input(tasks_, w.v, mb);
    return w;
  }
  void forward_part(int stage, Walk& w, int part) {
    forward_layer_part(part, stage, w.cur, w.gate, w.first + w.next, w.mb);
    if (part == kLayerParts - 1) ++w.next;
  }
  void finish_forward(int stage, Walk& w) {
    while (w.next < w.count) {
      for (int part = 0; part < kLayerParts; ++part)
        forward_part(stage, w, part);
    }
    if (virtual_.last(w.v)) {
      const int layer = w.first + w.count - 1;
      const Time head =
          duration(Op::LmHead, layer, Phase::Forward, compute_.lm_head(Phase::Forward));
      compute_all(stage, w.cur, Op::LmHead, Phase::Forward, layer, w.mb, head);
    }
    pipeline_.end_forward(tasks_, w.v, w.mb, w.cur);
  }

  // The last virtual stage starts from its own loss; the others from the gradient the next one
  // sent. That the forward of this micro-batch is done follows from the compute stream's order
  // (a merged pair's forward is of another micro-batch).
  Walk start_backward(int stage, int chunk, int mb) {
    Walk w = walk(stage, chunk, mb);
    w.cur = pipeline_.backward_input(w.v, mb);
    if (virtual_.last(w.v)) {
      const int layer = w.first + w.count - 1;
      const Time head =
          duration(Op::LmHead, layer, Phase::Backward, compute_.lm_head(Phase::Backward));
      compute_all(stage, w.cur, Op::LmHead, Phase::Backward, layer, mb, head);
    }
    return w;
  }
  // Layers run from the chunk's last down.
  void backward_part(int stage, Walk& w, int part) {
    backward_layer_part(part, stage, w.cur, w.first + w.count - 1 - w.next, w.mb);
    if (part == kLayerParts - 1) ++w.next;
  }
  void finish_backward(int stage, Walk& w) {
    while (w.next < w.count) {
      for (int part = 0; part < kLayerParts; ++part)
        backward_part(stage, w, part);
    }
    pipeline_.end_backward(tasks_, w.v, w.mb, w.cur);
  }

  // The forward of micro-batch mb on model chunk `chunk` of `stage` (virtual stage chunk x PP +
  // stage).
  void forward(int stage, int chunk, int mb) {
    Walk w = start_forward(stage, chunk, mb);
    finish_forward(stage, w);
  }

  void backward(int stage, int chunk, int mb) {
    Walk w = start_backward(stage, chunk, mb);
    finish_backward(stage, w);
  }

  // A forward and a backward merged (the EP overlap: Megatron-Core's combined 1F1B, DualPipe's
  // overlapped chunks): layer by layer, the forward's from the chunk's first and the backward's
  // from its last, their parts in the order Megatron-Core and DeepSeek (V3 report, Figure 4)
  // run them on a GPU's compute stream, so that each all-to-all is in flight under the other
  // step's compute: the backward up to the combine's gradient, the forward's attention up to the
  // dispatch, the backward's experts, the forward's experts, the backward's attention, the
  // forward's permutation; the layers one of them has beyond the other's then run alone.
  void merged(int stage, const PipelineStep& f, const PipelineStep& b) {
    Walk fw = start_forward(stage, f.chunk, f.micro_batch);
    Walk bw = start_backward(stage, b.chunk, b.micro_batch);
    while (fw.next < fw.count && bw.next < bw.count) {
      for (int part = 0; part < kLayerParts; ++part) {
        backward_part(stage, bw, part);
        forward_part(stage, fw, part);
      }
    }
    finish_forward(stage, fw);
    finish_backward(stage, bw);
  }

  // Seconds per token-expert pair when the calibration states expert compute as measured, 0 when
  // the compute model times the experts.
  double expert_seconds_per_token() const {
    if (spec_.expert_per_token) return spec_.expert_per_token->seconds();
    if (!spec_.expert_layer_busiest) return 0;
    const double busiest = experts_.mean_busiest_assignments();
    if (!(busiest > 0)) {
      throw Error("", "calibration.compute.expert_layer_busiest",
                  "the job's routing gives the experts no tokens to scale the time by");
    }
    return spec_.expert_layer_busiest->seconds() / busiest;
  }

  // The micro-batch of a chunk's last backward (every schedule ends each chunk with the last).
  int last_backward_mb() const { return m_ - 1; }

  void build_iteration(int it) {
    tasks_.set_iteration(it);
    experts_.new_iteration();
    pipeline_.new_iteration();
    training::run_schedule(spec_.schedule, p_.pp, m_, p_.vp, spec_.overlap.ep_comm,
                           [&](int stage, std::span<const PipelineStep> steps) {
                             if (steps.size() == 2) {
                               merged(stage, steps[0], steps[1]);
                             } else if (steps[0].forward) {
                               forward(stage, steps[0].chunk, steps[0].micro_batch);
                             } else {
                               backward(stage, steps[0].chunk, steps[0].micro_batch);
                             }
                           });
    if (virtual_.dual()) {
      // A pair of stages reduces (and gathers) together: every stage's reductions, then every
      // step, then the gathers, which wait for both stages' steps.
      for (int s = 0; s < p_.pp; ++s)
        gradients_.reduce_stage(tasks_, s);
      for (int s = 0; s < p_.pp && spec_.optimizer_efficiency; ++s)
        optimizer_step(s);
      for (int s = 0; s < p_.pp && spec_.distributed_optimizer; ++s)
        gradients_.gather_parameters(tasks_, s);
      return;
    }
    for (int s = 0; s < p_.pp; ++s) {
      gradients_.reduce_stage(tasks_, s);
      if (spec_.optimizer_efficiency) optimizer_step(s);
      if (spec_.distributed_optimizer) gradients_.gather_parameters(tasks_, s);
    }
  }

  // The optimizer step on every GPU of the stage, after its gradient all-reduces (the compute
  // stream's pending dependencies); the next iteration's first compute follows it.
  void optimizer_step(int stage) {
    // With the distributed optimizer each GPU updates its shard: the dense parameters' over the
    // stage's DP x CP GPUs of its TP rank, the experts' over their expert-DP replicas.
    // (Under DualPipe both copies' GPUs share the state of both: twice the shards.)
    const std::int64_t copies = gradients_.copies();
    const std::int64_t dense_shards =
        spec_.distributed_optimizer ? p_.dense_dp() * p_.cp * copies : 1;
    const std::int64_t expert_shards = spec_.distributed_optimizer ? p_.expert_dp() * copies : 1;
    const std::int64_t params =
        gradients_.stage_dense_params(stage) / p_.tp / dense_shards +
        gradients_.stage_expert_params(stage) / p_.expert_tp() / expert_shards;
    const Time t =
        compute_.optimizer_step(params, kOptimizerBytesPerParam, *spec_.optimizer_efficiency);
    tasks_.each_gpu(stage, [&](int g, std::size_t, int) {
      tasks_.compute(g, -1, Op::Optimizer, Phase::Update, -1, -1, t);
    });
  }

  const TrainingSpec& spec_;
  RankLayout layout_;
  ComputeModel compute_;
  ParallelismSpec p_;
  training::VirtualPipeline virtual_;
  int m_;
  TrainingTasks tasks_;
  ExpertTraffic experts_;
  PipelineTransfers pipeline_;
  GradientReduction gradients_;
  double expert_seconds_per_token_;
};

}  // namespace

TaskGraph build_training_graph(const TrainingSpec& spec, const RoutingTrace& trace) {
  if (spec.iterations < 1 || spec.iterations > 10000) {
    throw Error("", "iterations",
                fmt::format("must be between 1 and 10000, got {}", spec.iterations));
  }
  return GraphBuilder(spec, trace).build();
}

}  // namespace mfabric::workload
