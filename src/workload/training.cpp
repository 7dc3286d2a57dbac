#include "workload/training.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"

namespace mfabric::workload {

const char* to_string(PipelineSchedule s) {
  return s == PipelineSchedule::OneFOneB ? "1f1b" : "gpipe";
}

PipelineSchedule parse_schedule(const std::string& text) {
  if (text == "1f1b") return PipelineSchedule::OneFOneB;
  if (text == "gpipe") return PipelineSchedule::GPipe;
  throw Error(fmt::format("unknown pipeline schedule '{}' (known: 1f1b, gpipe)", text));
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
  const long long per_step = static_cast<long long>(micro_batch) * parallelism.dp;
  if (global_batch < 1 || global_batch % per_step != 0) {
    throw Error("", "global_batch",
                fmt::format("must be a positive multiple of micro_batch x dp = {} x {} = {}, "
                            "got {}",
                            micro_batch, parallelism.dp, per_step, global_batch));
  }
  const long long micro_batches = global_batch / per_step;
  // Task labels hold the micro-batch index (over all DP replicas) in 16 bits.
  if (micro_batches * parallelism.dp > 32767) {
    throw Error("", "global_batch",
                fmt::format("{} gives {} micro-batches per iteration over {} DP replicas, more "
                            "than mfabric's task graph indexes (32767); use a larger micro_batch "
                            "or a smaller global_batch",
                            global_batch, micro_batches, parallelism.dp));
  }
  return static_cast<int>(micro_batches);
}

RoutingTrace synthetic_trace_for(const TrainingSpec& spec, SyntheticRouting params,
                                 std::uint64_t seed) {
  std::vector<int> layers;
  for (int l = 0; l < spec.model.layers; ++l) {
    if (spec.model.is_moe_layer(l)) layers.push_back(l);
  }
  params.tokens_per_rank = spec.tokens_per_micro_batch();
  params.top_k = spec.model.top_k;
  return generate_routing(params, spec.parallelism.ep, spec.model.experts, spec.iterations, layers,
                          spec.micro_batches() * spec.parallelism.dp, Rng(seed));
}

namespace {

// The all-to-all traffic of one (iteration, MoE layer, micro-batch, DP replica).
struct LayerRouting {
  std::int32_t dispatch = -1;             // matrix: EP rank a -> EP rank b, bytes per TP rank
  std::int32_t combine = -1;              // its transpose
  std::int64_t dispatch_bytes = 0;        // off-diagonal sum of `dispatch`
  std::vector<std::int64_t> assignments;  // token-expert pairs each EP rank's experts compute
};

class GraphBuilder {
 public:
  GraphBuilder(const TrainingSpec& spec, const RoutingTrace& trace)
      : spec_(spec),
        trace_(trace),
        layout_(spec.parallelism, spec.model, spec.gpus_per_server),
        compute_(spec.model, spec.gpu, spec.efficiency,
                 ComputeShape{spec.micro_batch, spec.seq, spec.parallelism.tp}),
        p_(spec.parallelism),
        m_(spec.micro_batches()),
        graph_(spec.parallelism.gpus()),
        last_compute_(static_cast<std::size_t>(spec.parallelism.gpus()), -1),
        other_step_last_(static_cast<std::size_t>(spec.parallelism.gpus()), -1),
        pending_(static_cast<std::size_t>(spec.parallelism.gpus())),
        grad_pending_(static_cast<std::size_t>(spec.parallelism.gpus())) {
    check_trace();
  }

  TaskGraph build() {
    for (int it = 0; it < spec_.iterations; ++it)
      build_iteration(it);
    return std::move(graph_);
  }

 private:
  // GPUs of one stage are indexed locally as tp + TP * (ep + EP * dp).
  int local(int tp, int ep, int dp) const { return tp + p_.tp * (ep + p_.ep * dp); }
  int stage_gpus() const { return p_.tp * p_.ep * p_.dp; }
  int gpu(int stage, int tp, int ep, int dp) const {
    return layout_.gpu(RankCoord{.tp = tp, .ep = ep, .dp = dp, .pp = stage});
  }
  int local_experts() const { return spec_.model.experts / p_.ep; }

  void check_trace() const {
    if (trace_.ep() != p_.ep) {
      throw Error("", "routing",
                  fmt::format("the routing trace has {} EP ranks but the job has ep = {}",
                              trace_.ep(), p_.ep));
    }
    if (trace_.experts() != spec_.model.experts) {
      throw Error("", "routing",
                  fmt::format("the routing trace has {} experts but {} has {}", trace_.experts(),
                              spec_.model.name, spec_.model.experts));
    }
    const bool single_record = trace_.layers().size() == 1;
    for (int l = 0; l < spec_.model.layers; ++l) {
      if (spec_.model.is_moe_layer(l) && trace_.layer_index(l) < 0 && !single_record) {
        throw Error("", "routing",
                    fmt::format("the routing trace has no record for MoE layer {}", l));
      }
    }
  }

  int trace_layer(int layer) const {
    const int idx = trace_.layer_index(layer);
    return idx >= 0 ? idx : 0;  // a single-record trace serves every layer
  }

  Time duration(Op op, int layer, Phase phase, Time modelled) const {
    if (spec_.replay) {
      if (const Time* t = spec_.replay->find(op, layer, phase)) return *t;
    }
    return modelled;
  }

  // --- task helpers -------------------------------------------------------------------------

  TaskId add(const Task& t, std::vector<TaskId>& deps) {
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    if (!deps.empty() && deps.front() < 0) deps.erase(deps.begin());
    return graph_.add(t, deps);
  }

  // A task of `kind` doing `op`, stamped with where it belongs in the iteration.
  Task stamped(TaskKind kind, Op op, Phase phase, int layer, int mb) const {
    Task t;
    t.kind = kind;
    t.op = op;
    t.phase = phase;
    t.layer = static_cast<std::int16_t>(layer);
    t.micro_batch = static_cast<std::int16_t>(mb);
    t.iteration = static_cast<std::int16_t>(iteration_);
    return t;
  }

  // Compute on `g` after its data dependency `after` and after the GPU's previous compute task
  // (the compute stream runs tasks in schedule order).
  TaskId compute(int g, TaskId after, Op op, Phase phase, int layer, int mb, Time d) {
    std::vector<TaskId> deps{after, last_compute_[static_cast<std::size_t>(g)]};
    also_overlapped(after, deps);
    auto& pend = pending_[static_cast<std::size_t>(g)];
    deps.insert(deps.end(), pend.begin(), pend.end());
    pend.clear();
    Task t = stamped(TaskKind::Compute, op, phase, layer, mb);
    t.gpu = g;
    t.duration = d;
    const TaskId id = add(t, deps);
    last_compute_[static_cast<std::size_t>(g)] = id;
    return id;
  }

  TaskId collective(CollectiveKind kind, Op op, Traffic traffic, Phase phase, int layer, int mb,
                    std::vector<std::int32_t> members, Bytes bytes, std::int32_t matrix,
                    std::vector<TaskId> deps) {
    Task t = stamped(TaskKind::Collective, op, phase, layer, mb);
    t.collective = kind;
    t.traffic = traffic;
    t.group = graph_.add_group(std::move(members));
    t.matrix = matrix;
    t.bytes = bytes;
    return add(t, deps);
  }

  TaskId p2p(int src, int dst, Op op, Phase phase, int mb, Bytes bytes, TaskId after) {
    Task t = stamped(TaskKind::P2P, op, phase, /*layer=*/-1, mb);
    t.traffic = Traffic::PP;
    t.gpu = src;
    t.peer = dst;
    t.bytes = bytes;
    std::vector<TaskId> deps{after};
    also_overlapped(after, deps);
    return add(t, deps);
  }

  // With overlap.tp_comm, a compute task X whose TP all-reduce runs alongside it stands for both
  // in `cur`: whatever depends on X depends on that all-reduce too.
  void also_overlapped(TaskId x, std::vector<TaskId>& deps) const {
    if (x < 0 || static_cast<std::size_t>(x) >= overlapped_tp_.size()) return;
    const TaskId ar = overlapped_tp_[static_cast<std::size_t>(x)];
    if (ar >= 0) deps.push_back(ar);
  }

  Bytes activation_bytes() const {
    // One micro-batch's hidden states, split over TP ranks.
    return Bytes(spec_.tokens_per_micro_batch() * spec_.model.hidden * spec_.model.dtype_bytes /
                 p_.tp);
  }

  // TP all-reduce of the hidden states in every TP group of the stage (no-op for TP = 1).
  void tp_all_reduce(int stage, std::vector<TaskId>& cur, Phase phase, int layer, int mb) {
    if (p_.tp == 1) return;
    const Bytes bytes(spec_.tokens_per_micro_batch() * spec_.model.hidden *
                      spec_.model.dtype_bytes);
    for (int dp = 0; dp < p_.dp; ++dp) {
      for (int ep = 0; ep < p_.ep; ++ep) {
        // With overlap.tp_comm and a compute task X producing the hidden states on every
        // member, the all-reduce is pipelined with X (Megatron's --tp-comm-overlap splits the
        // GEMM and its collective into chunks): it starts when X can start, and what follows
        // waits for both, so the pair takes max(X, all-reduce) instead of their sum.
        bool pipelined = spec_.overlap.tp_comm;
        for (int tp = 0; tp < p_.tp && pipelined; ++tp) {
          const TaskId x = cur[static_cast<std::size_t>(local(tp, ep, dp))];
          pipelined = x >= 0 && graph_.task(x).kind == TaskKind::Compute;
        }
        std::vector<std::int32_t> members;
        std::vector<TaskId> deps;
        for (int tp = 0; tp < p_.tp; ++tp) {
          members.push_back(gpu(stage, tp, ep, dp));
          const TaskId x = cur[static_cast<std::size_t>(local(tp, ep, dp))];
          if (pipelined) {
            for (TaskId d : graph_.deps(x))
              deps.push_back(d);
          } else {
            deps.push_back(x);
            also_overlapped(x, deps);
          }
        }
        const TaskId id = collective(CollectiveKind::AllReduce, Op::TpAllReduce, Traffic::TP, phase,
                                     layer, mb, std::move(members), bytes, -1, std::move(deps));
        for (int tp = 0; tp < p_.tp; ++tp) {
          const auto i = static_cast<std::size_t>(local(tp, ep, dp));
          if (!pipelined) {
            cur[i] = id;
            continue;
          }
          const auto x = static_cast<std::size_t>(cur[i]);
          if (overlapped_tp_.size() <= x) overlapped_tp_.resize(x + 1, -1);
          overlapped_tp_[x] = id;
        }
      }
    }
  }

  // All-to-all-v among the EP ranks of every (dp, tp) of the stage.
  void all_to_all(int stage, std::vector<TaskId>& cur, Op op, Phase phase, int layer, int mb,
                  bool transposed) {
    for (int dp = 0; dp < p_.dp; ++dp) {
      const LayerRouting& r = routing(layer, mb, dp);
      const std::int32_t matrix = transposed ? r.combine : r.dispatch;
      for (int tp = 0; tp < p_.tp; ++tp) {
        std::vector<std::int32_t> members;
        std::vector<TaskId> deps;
        for (int ep = 0; ep < p_.ep; ++ep) {
          members.push_back(gpu(stage, tp, ep, dp));
          deps.push_back(cur[static_cast<std::size_t>(local(tp, ep, dp))]);
          also_overlapped(deps.back(), deps);
        }
        const TaskId id =
            collective(CollectiveKind::AllToAll, op, Traffic::EP, phase, layer, mb,
                       std::move(members), Bytes(r.dispatch_bytes), matrix, std::move(deps));
        for (int ep = 0; ep < p_.ep; ++ep)
          cur[static_cast<std::size_t>(local(tp, ep, dp))] = id;
      }
    }
  }

  // Runs `fn(g, local_index, tp, ep, dp)` over the stage's GPUs.
  template <class F>
  void each_gpu(int stage, F&& fn) {
    for (int dp = 0; dp < p_.dp; ++dp) {
      for (int ep = 0; ep < p_.ep; ++ep) {
        for (int tp = 0; tp < p_.tp; ++tp) {
          fn(gpu(stage, tp, ep, dp), static_cast<std::size_t>(local(tp, ep, dp)), ep);
        }
      }
    }
  }

  // --- routing ---------------------------------------------------------------------------------

  const LayerRouting& routing(int layer, int mb, int dp) {
    const auto key = std::make_tuple(layer, mb, dp);
    auto it = routing_.find(key);
    if (it != routing_.end()) return it->second;
    const int E = p_.ep;
    const int experts = spec_.model.experts;
    const int per_rank = local_experts();
    const auto counts = trace_.matrix(iteration_, trace_layer(layer), mb + dp * m_);
    const double target = static_cast<double>(spec_.tokens_per_micro_batch()) * spec_.model.top_k;
    const double bytes_per_token =
        static_cast<double>(spec_.model.hidden) * spec_.model.dtype_bytes / p_.tp;
    ByteMatrix d(E);
    LayerRouting r;
    r.assignments.assign(static_cast<std::size_t>(E), 0);
    std::vector<double> to_rank(static_cast<std::size_t>(E));
    for (int a = 0; a < E; ++a) {
      const auto row =
          counts.subspan(static_cast<std::size_t>(a) * experts, static_cast<std::size_t>(experts));
      double sum = 0;
      for (std::int32_t c : row)
        sum += c;
      std::fill(to_rank.begin(), to_rank.end(), 0.0);
      for (int e = 0; e < experts; ++e) {
        // A source that routed nothing is taken as uniform rather than silent.
        const double share = sum > 0 ? row[static_cast<std::size_t>(e)] / sum : 1.0 / experts;
        to_rank[static_cast<std::size_t>(e / per_rank)] += share * target;
      }
      for (int b = 0; b < E; ++b) {
        const double tokens = to_rank[static_cast<std::size_t>(b)];
        r.assignments[static_cast<std::size_t>(b)] += std::llround(tokens);
        d.at(a, b) = std::llround(tokens * bytes_per_token);
      }
    }
    r.dispatch_bytes = d.off_diagonal_sum();
    r.combine = graph_.add_matrix(d.transposed());
    r.dispatch = graph_.add_matrix(std::move(d));
    return routing_.emplace(key, std::move(r)).first->second;
  }

  // --- one pipeline step ---------------------------------------------------------------------

  // A new pipeline step on the stage's GPUs. With overlap.ep_comm its compute chains to the last
  // compute of the step before the previous one, not of the previous one: two adjacent steps
  // run at once, their ops in the order they become ready.
  void begin_step(int stage) {
    if (!spec_.overlap.ep_comm) return;
    each_gpu(stage, [&](int g, std::size_t, int) {
      std::swap(last_compute_[static_cast<std::size_t>(g)],
                other_step_last_[static_cast<std::size_t>(g)]);
    });
  }

  void forward(int stage, int mb) {
    begin_step(stage);
    std::vector<TaskId> cur(static_cast<std::size_t>(stage_gpus()), -1);
    if (stage > 0) cur = pp_in_.at({stage, mb});
    const int first = layout_.first_layer(stage);
    const int count = layout_.stage_layers(stage);
    const Phase F = Phase::Forward;
    for (int layer = first; layer < first + count; ++layer) {
      const bool moe = spec_.model.is_moe_layer(layer);
      const Time attn = duration(Op::Attention, layer, F, compute_.attention(F));
      each_gpu(stage, [&](int g, std::size_t i, int) {
        cur[i] = compute(g, cur[i], Op::Attention, F, layer, mb, attn);
      });
      tp_all_reduce(stage, cur, F, layer, mb);
      if (!moe) {
        const Time ffn = duration(Op::DenseFfn, layer, F, compute_.dense_ffn(F));
        each_gpu(stage, [&](int g, std::size_t i, int) {
          cur[i] = compute(g, cur[i], Op::DenseFfn, F, layer, mb, ffn);
        });
        tp_all_reduce(stage, cur, F, layer, mb);
        continue;
      }
      const Time router = duration(Op::Router, layer, F, compute_.router(F));
      const Time shared = spec_.model.shared_experts > 0
                              ? duration(Op::SharedExperts, layer, F, compute_.shared_experts(F))
                              : Time::zero();
      std::vector<TaskId> gate(cur.size());
      each_gpu(stage, [&](int g, std::size_t i, int) {
        cur[i] = compute(g, cur[i], Op::Router, F, layer, mb, router);
        gate[i] = cur[i];
      });
      all_to_all(stage, cur, Op::Dispatch, F, layer, mb, /*transposed=*/false);
      // Shared experts need only the gate's input: they run while the dispatch is in flight.
      if (spec_.model.shared_experts > 0) {
        each_gpu(stage, [&](int g, std::size_t i, int) {
          compute(g, gate[i], Op::SharedExperts, F, layer, mb, shared);
        });
      }
      experts(stage, cur, F, layer, mb);
      all_to_all(stage, cur, Op::Combine, F, layer, mb, /*transposed=*/true);
      tp_all_reduce(stage, cur, F, layer, mb);
    }
    if (stage == p_.pp - 1) {
      const Time head = duration(Op::LmHead, first + count - 1, F, compute_.lm_head(F));
      each_gpu(stage, [&](int g, std::size_t i, int) {
        cur[i] = compute(g, cur[i], Op::LmHead, F, first + count - 1, mb, head);
      });
      bwd_in_[{stage, mb}] = cur;
      return;
    }
    std::vector<TaskId> sent(cur.size());
    each_gpu(stage, [&](int g, std::size_t i, int) {
      const RankCoord c = layout_.coord(g);
      const int next = gpu(stage + 1, c.tp, c.ep, c.dp);
      sent[i] = p2p(g, next, Op::PpActivation, F, mb, activation_bytes(), cur[i]);
    });
    pp_in_[{stage + 1, mb}] = std::move(sent);
  }

  void experts(int stage, std::vector<TaskId>& cur, Phase phase, int layer, int mb) {
    each_gpu(stage, [&](int g, std::size_t i, int ep) {
      const RankCoord c = layout_.coord(g);
      const LayerRouting& r = routing(layer, mb, c.dp);
      const Time t = duration(
          Op::Experts, layer, phase,
          compute_.experts(r.assignments[static_cast<std::size_t>(ep)], local_experts(), phase));
      cur[i] = compute(g, cur[i], Op::Experts, phase, layer, mb, t);
    });
  }

  void backward(int stage, int mb) {
    // The last stage starts from its own loss; the others from the gradient the next stage sent.
    // That the forward of this micro-batch is done follows from the compute stream's order.
    begin_step(stage);
    std::vector<TaskId> cur =
        stage == p_.pp - 1 ? bwd_in_.at({stage, mb}) : pp_grad_in_.at({stage, mb});
    const int first = layout_.first_layer(stage);
    const int count = layout_.stage_layers(stage);
    const Phase B = Phase::Backward;
    if (stage == p_.pp - 1) {
      const Time head = duration(Op::LmHead, first + count - 1, B, compute_.lm_head(B));
      each_gpu(stage, [&](int g, std::size_t i, int) {
        cur[i] = compute(g, cur[i], Op::LmHead, B, first + count - 1, mb, head);
      });
    }
    for (int layer = first + count - 1; layer >= first; --layer) {
      if (spec_.model.is_moe_layer(layer)) {
        if (spec_.model.shared_experts > 0) {
          const Time shared = duration(Op::SharedExperts, layer, B, compute_.shared_experts(B));
          each_gpu(stage, [&](int g, std::size_t i, int) {
            compute(g, cur[i], Op::SharedExperts, B, layer, mb, shared);
          });
        }
        // Gradients retrace the tokens: to the experts (the dispatch matrix), then back.
        all_to_all(stage, cur, Op::Combine, B, layer, mb, /*transposed=*/false);
        experts(stage, cur, B, layer, mb);
        all_to_all(stage, cur, Op::Dispatch, B, layer, mb, /*transposed=*/true);
        const Time router = duration(Op::Router, layer, B, compute_.router(B));
        each_gpu(stage, [&](int g, std::size_t i, int) {
          cur[i] = compute(g, cur[i], Op::Router, B, layer, mb, router);
        });
      } else {
        const Time ffn = duration(Op::DenseFfn, layer, B, compute_.dense_ffn(B));
        each_gpu(stage, [&](int g, std::size_t i, int) {
          cur[i] = compute(g, cur[i], Op::DenseFfn, B, layer, mb, ffn);
        });
      }
      tp_all_reduce(stage, cur, B, layer, mb);
      const Time attn = duration(Op::Attention, layer, B, compute_.attention(B));
      each_gpu(stage, [&](int g, std::size_t i, int) {
        cur[i] = compute(g, cur[i], Op::Attention, B, layer, mb, attn);
      });
      // The stage's last backward has finished this layer: with --overlap-grad-reduce its
      // gradients are reduced now, under the backward of the layers below.
      if (spec_.overlap.grad_reduce && mb == last_backward_mb()) {
        reduce_gradients(stage, layer_dense_params(layer), layer_expert_params(layer));
      }
      tp_all_reduce(stage, cur, B, layer, mb);
    }
    if (stage == 0) return;
    std::vector<TaskId> sent(cur.size());
    each_gpu(stage, [&](int g, std::size_t i, int) {
      const RankCoord c = layout_.coord(g);
      sent[i] = p2p(g, gpu(stage - 1, c.tp, c.ep, c.dp), Op::PpGradient, B, mb, activation_bytes(),
                    cur[i]);
    });
    pp_grad_in_[{stage - 1, mb}] = std::move(sent);
  }

  // Forward/backward order of one stage's compute stream.
  std::vector<std::pair<bool, int>> stage_schedule(int stage) const {
    std::vector<std::pair<bool, int>> order;
    if (spec_.schedule == PipelineSchedule::GPipe) {
      for (int mb = 0; mb < m_; ++mb)
        order.emplace_back(true, mb);
      for (int mb = 0; mb < m_; ++mb)
        order.emplace_back(false, mb);
      return order;
    }
    // 1F1B: warm up with as many forwards as stages below this one, then alternate, then drain.
    const int warmup = std::min(p_.pp - stage - 1, m_);
    for (int mb = 0; mb < warmup; ++mb)
      order.emplace_back(true, mb);
    for (int i = 0; i < m_ - warmup; ++i) {
      order.emplace_back(true, warmup + i);
      order.emplace_back(false, i);
    }
    for (int mb = m_ - warmup; mb < m_; ++mb)
      order.emplace_back(false, mb);
    return order;
  }

  // Parameters of the stage's dense part: its layers' (layer_dense_params) and its embeddings'.
  std::int64_t stage_dense_params(int stage) const {
    std::int64_t params = stage_embedding_params(stage);
    const int first = layout_.first_layer(stage);
    for (int l = first; l < first + layout_.stage_layers(stage); ++l)
      params += layer_dense_params(l);
    return params;
  }

  // The input embedding on the first stage, the (untied) output head on the last.
  std::int64_t stage_embedding_params(int stage) const {
    const std::int64_t embedding =
        static_cast<std::int64_t>(spec_.model.vocab) * spec_.model.hidden;
    return (stage == 0 ? embedding : 0) + (stage == p_.pp - 1 ? embedding : 0);
  }

  std::int64_t stage_expert_params(int stage) const {
    std::int64_t params = 0;
    const int first = layout_.first_layer(stage);
    for (int l = first; l < first + layout_.stage_layers(stage); ++l)
      params += layer_expert_params(l);
    return params;
  }

  std::int64_t layer_dense_params(int layer) const {
    const ModelSpec& m = spec_.model;
    return m.attention_params_per_layer() + (m.is_moe_layer(layer)
                                                 ? m.router_params() + m.shared_expert_params()
                                                 : m.dense_ffn_params());
  }

  std::int64_t layer_expert_params(int layer) const {
    return spec_.model.is_moe_layer(layer)
               ? std::int64_t{local_experts()} * spec_.model.expert_params()
               : 0;
  }

  // The micro-batch of a stage's last backward (1F1B and GPipe alike end with the last one).
  int last_backward_mb() const { return m_ - 1; }

  // All-reduces of `dense` and `expert` parameters' gradients (their TP share) over the DP
  // groups of every GPU of the stage, after each member's latest compute (both running steps'
  // with overlap.ep_comm). The next iteration's first compute (or the optimizer step) waits for
  // them: they are handed to pending_ when the iteration's graph is complete.
  void reduce_gradients(int stage, std::int64_t dense_params, std::int64_t expert_params) {
    const int dtype = spec_.model.dtype_bytes;
    const Bytes dense(dense_params * dtype / p_.tp);
    const Bytes expert(expert_params * dtype / p_.tp);
    auto reduce = [&](const std::vector<int>& members, Op op, Bytes bytes) {
      if (members.size() < 2 || bytes.count() == 0) return;
      std::vector<TaskId> deps;
      for (int g : members) {
        deps.push_back(last_compute_[static_cast<std::size_t>(g)]);
        if (spec_.overlap.ep_comm) deps.push_back(other_step_last_[static_cast<std::size_t>(g)]);
      }
      const TaskId id = collective(CollectiveKind::AllReduce, op, Traffic::DP, Phase::Update, -1,
                                   -1, std::vector<std::int32_t>(members.begin(), members.end()),
                                   bytes, -1, std::move(deps));
      for (int g : members)
        grad_pending_[static_cast<std::size_t>(g)].push_back(id);
    };
    for (int tp = 0; tp < p_.tp; ++tp) {
      reduce(layout_.dense_dp_group(gpu(stage, tp, 0, 0)), Op::DenseGradAllReduce, dense);
      for (int ep = 0; ep < p_.ep; ++ep) {
        reduce(layout_.expert_dp_group(gpu(stage, tp, ep, 0)), Op::ExpertGradAllReduce, expert);
      }
    }
  }

  // Gradient all-reduces after a stage's last backward: every parameter of the stage, or with
  // overlap.grad_reduce (its layers reduced during the backward) the embeddings only; then the
  // stage's GPUs' next compute waits for all of them.
  void gradient_all_reduce(int stage) {
    if (spec_.overlap.grad_reduce) {
      reduce_gradients(stage, stage_embedding_params(stage), 0);
    } else {
      reduce_gradients(stage, stage_dense_params(stage), stage_expert_params(stage));
    }
    each_gpu(stage, [&](int g, std::size_t, int) {
      auto& from = grad_pending_[static_cast<std::size_t>(g)];
      auto& to = pending_[static_cast<std::size_t>(g)];
      to.insert(to.end(), from.begin(), from.end());
      from.clear();
      // The other running step's last compute too, so that nothing of this iteration is left
      // behind the next one's first compute.
      if (spec_.overlap.ep_comm) to.push_back(other_step_last_[static_cast<std::size_t>(g)]);
    });
  }

  void build_iteration(int it) {
    iteration_ = it;
    routing_.clear();
    pp_in_.clear();
    pp_grad_in_.clear();
    bwd_in_.clear();
    // Stages advance in turn; a step is added once the step it needs from a neighbouring stage
    // exists, which orders the whole iteration topologically (1F1B and GPipe never deadlock).
    std::vector<std::vector<std::pair<bool, int>>> order;
    for (int s = 0; s < p_.pp; ++s)
      order.push_back(stage_schedule(s));
    std::vector<std::size_t> pos(static_cast<std::size_t>(p_.pp), 0);
    std::vector<std::vector<char>> fwd_done(static_cast<std::size_t>(p_.pp),
                                            std::vector<char>(static_cast<std::size_t>(m_), 0));
    auto bwd_done = fwd_done;
    bool progress = true;
    while (progress) {
      progress = false;
      for (int s = 0; s < p_.pp; ++s) {
        auto& at = pos[static_cast<std::size_t>(s)];
        const auto& steps = order[static_cast<std::size_t>(s)];
        while (at < steps.size()) {
          const auto [is_forward, mb] = steps[at];
          const auto mbi = static_cast<std::size_t>(mb);
          const bool ready =
              is_forward ? (s == 0 || fwd_done[static_cast<std::size_t>(s - 1)][mbi])
                         : (s == p_.pp - 1 || bwd_done[static_cast<std::size_t>(s + 1)][mbi]);
          if (!ready) break;
          if (is_forward) {
            forward(s, mb);
            fwd_done[static_cast<std::size_t>(s)][mbi] = 1;
          } else {
            backward(s, mb);
            bwd_done[static_cast<std::size_t>(s)][mbi] = 1;
          }
          ++at;
          progress = true;
        }
      }
    }
    for (int s = 0; s < p_.pp; ++s) {
      if (pos[static_cast<std::size_t>(s)] != order[static_cast<std::size_t>(s)].size()) {
        throw std::logic_error("build_training_graph: pipeline schedule deadlocked");
      }
      gradient_all_reduce(s);
      if (spec_.optimizer_efficiency) optimizer_step(s);
    }
  }

  // The optimizer step on every GPU of the stage, after its gradient all-reduces (the compute
  // stream's pending dependencies); the next iteration's first compute follows it.
  void optimizer_step(int stage) {
    const std::int64_t params = (stage_dense_params(stage) + stage_expert_params(stage)) / p_.tp;
    const Time t =
        compute_.optimizer_step(params, kOptimizerBytesPerParam, *spec_.optimizer_efficiency);
    each_gpu(stage, [&](int g, std::size_t, int) {
      compute(g, -1, Op::Optimizer, Phase::Update, -1, -1, t);
    });
  }

  const TrainingSpec& spec_;
  const RoutingTrace& trace_;
  RankLayout layout_;
  ComputeModel compute_;
  ParallelismSpec p_;
  int m_;
  TaskGraph graph_;
  int iteration_ = 0;
  std::vector<TaskId> last_compute_;
  // With overlap.ep_comm: per GPU, the last compute of the step before the current one (the
  // next step chains to it, two steps back, so that adjacent steps overlap).
  std::vector<TaskId> other_step_last_;
  // With overlap.tp_comm: per task id, the TP all-reduce pipelined with that compute task (-1:
  // none); what depends on the task depends on the all-reduce too (also_overlapped).
  std::vector<TaskId> overlapped_tp_;
  std::vector<std::vector<TaskId>> pending_;
  // Gradient all-reduces of the iteration being built, handed to pending_ at its end.
  std::vector<std::vector<TaskId>> grad_pending_;
  std::map<std::tuple<int, int, int>, LayerRouting> routing_;
  // Per (stage, micro-batch): the tasks each GPU of the stage continues from.
  std::map<std::pair<int, int>, std::vector<TaskId>> pp_in_, pp_grad_in_, bwd_in_;
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
