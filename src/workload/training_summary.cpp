// What a training job's task graph amounts to (training.h, WorkloadSummary): bytes per traffic
// class and iteration, compute per pipeline stage, the forward attention and busiest-expert
// times that `mfabric workload` prints and the compare report quotes.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "workload/training.h"

namespace mfabric::workload {

WorkloadSummary summarize(const TrainingSpec& spec, const TaskGraph& graph) {
  const RankLayout layout(spec.parallelism, spec.model, spec.gpus_per_server);
  WorkloadSummary s;
  s.gpus = spec.parallelism.gpus();
  s.parallelism = spec.parallelism;
  s.micro_batches = spec.micro_batches();
  s.region_servers = layout.region_servers();
  for (int st = 0; st < spec.parallelism.pp; ++st)
    s.stage_layers.push_back(layout.stage_layers(st));

  std::vector<double> busy(static_cast<std::size_t>(s.gpus), 0.0);
  double attention_sum = 0;
  std::int64_t attention_count = 0;
  // Busiest expert GPU per (iteration, layer, micro-batch): the slowest expert bounds the layer.
  std::map<std::tuple<int, int, int>, double> experts_max;
  // Per (op, iteration, layer, micro-batch, GPU): the op's forward time in a MoE layer.
  std::map<std::tuple<Op, int, int, int, int>, double> op_time;
  for (const Task& t : graph.tasks()) {
    switch (t.kind) {
      case TaskKind::Compute:
        ++s.compute_tasks;
        busy[static_cast<std::size_t>(t.gpu())] += t.duration().seconds();
        if (t.phase == Phase::Forward && (t.op == Op::Attention || t.op == Op::Router) &&
            spec.model.is_moe_layer(t.layer)) {
          attention_sum += t.duration().seconds();
          attention_count += t.op == Op::Attention ? 1 : 0;
        }
        if (t.phase == Phase::Forward && t.layer >= 0 && spec.model.is_moe_layer(t.layer)) {
          op_time[{t.op, t.iteration, t.layer, t.micro_batch, t.gpu()}] += t.duration().seconds();
        }
        if (t.phase == Phase::Forward && t.op == Op::Experts) {
          double& m = experts_max[{t.iteration, t.layer, t.micro_batch}];
          m = std::max(m, t.duration().seconds());
        }
        break;
      case TaskKind::Collective: {
        ++s.collective_tasks;
        const auto members = static_cast<std::int64_t>(graph.group(t.group()).size());
        std::int64_t bytes = 0;
        if (t.collective == CollectiveKind::AllToAll) {
          bytes = t.matrix() >= 0 ? graph.matrix(t.matrix()).off_diagonal_sum()
                                  : t.bytes().count() / members * (members - 1);
        } else if (t.collective != CollectiveKind::Barrier) {
          bytes = t.bytes().count() * members;
        }
        if (t.traffic == Traffic::TP) s.bytes_tp += bytes;
        if (t.traffic == Traffic::CP) s.bytes_cp += bytes;
        if (t.traffic == Traffic::EP) s.bytes_ep += bytes;
        if (t.traffic == Traffic::DP) s.bytes_dp += bytes;
        if (t.traffic == Traffic::PP) s.bytes_pp += bytes;
        break;
      }
      case TaskKind::P2P:
        ++s.p2p_tasks;
        if (t.traffic == Traffic::PP) s.bytes_pp += t.bytes().count();
        break;
    }
  }
  const int its = spec.iterations;
  s.bytes_tp /= its;
  s.bytes_cp /= its;
  s.bytes_ep /= its;
  s.bytes_dp /= its;
  s.bytes_pp /= its;
  s.compute_s_per_stage.assign(static_cast<std::size_t>(spec.parallelism.pp), 0.0);
  for (int g = 0; g < s.gpus; ++g) {
    auto& stage = s.compute_s_per_stage[static_cast<std::size_t>(layout.coord(g).pp)];
    stage = std::max(stage, busy[static_cast<std::size_t>(g)] / its);
  }
  if (attention_count > 0) s.attention_fwd_s = attention_sum / static_cast<double>(attention_count);
  if (!experts_max.empty()) {
    double sum = 0;
    for (const auto& [key, v] : experts_max)
      sum += v;
    s.experts_fwd_s = sum / static_cast<double>(experts_max.size());
  }
  // The busiest GPU per (op, iteration, layer, micro-batch), then the mean per op.
  std::map<std::tuple<Op, int, int, int>, double> op_max;
  for (const auto& [key, v] : op_time) {
    const auto& [op, it, layer, mb, gpu] = key;
    double& m = op_max[{op, it, layer, mb}];
    m = std::max(m, v);
  }
  std::map<Op, std::pair<double, int>> op_mean;
  for (const auto& [key, v] : op_max) {
    auto& [sum, n] = op_mean[std::get<0>(key)];
    sum += v;
    ++n;
  }
  for (Op op : {Op::Attention, Op::Router, Op::Permute, Op::SharedExperts, Op::Experts}) {
    const auto it = op_mean.find(op);
    if (it != op_mean.end()) {
      s.moe_layer_fwd_ops.emplace_back(op, it->second.first / it->second.second);
    }
  }
  return s;
}

}  // namespace mfabric::workload
