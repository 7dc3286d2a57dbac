#include "workload/training_ep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"

namespace mfabric::workload::training {

ExpertTraffic::ExpertTraffic(const TrainingSpec& spec, const RoutingTrace& trace, int micro_batches)
    : spec_(spec), trace_(trace), m_(micro_batches) {
  const ParallelismSpec& p = spec.parallelism;
  if (trace_.ep() != p.ep) {
    throw Error("", "routing",
                fmt::format("the routing trace has {} EP ranks but the job has ep = {}",
                            trace_.ep(), p.ep));
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

std::pair<std::vector<std::int64_t>, ByteMatrix> ExpertTraffic::route(int iteration, int layer,
                                                                      int mb_index) const {
  const int E = spec_.parallelism.ep;
  const int experts = spec_.model.experts;
  const int per_rank = local_experts();
  const auto counts = trace_.matrix(iteration, layer, mb_index);
  const double target = static_cast<double>(spec_.tokens_per_ep_rank()) * spec_.model.top_k;
  const double bytes_per_token = static_cast<double>(spec_.model.hidden) * spec_.model.dtype_bytes /
                                 spec_.parallelism.expert_tp();
  ByteMatrix d(E);
  std::vector<std::int64_t> assignments(static_cast<std::size_t>(E), 0);
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
      assignments[static_cast<std::size_t>(b)] += std::llround(tokens);
      d.at(a, b) = std::llround(tokens * bytes_per_token);
    }
  }
  return {std::move(assignments), std::move(d)};
}

namespace {

// DeepEP's dispatch of one routing (Dispatcher::DeepEP): `pairs` holds the bytes of the token-
// expert pairs from EP rank a to rank b, `ranks_per_node` EP ranks share a node (in rank order),
// each rank routes `tokens` tokens to `top_k` experts. Within a node the pairs go as they are
// (NVLink). To another node N a rank sends each token once, to its rail peer there (the rank of
// the same place on N), which forwards every pair to its expert's rank on N. How many of a's
// tokens reach N: with the pairs to N a share p of a's k x tokens, each of a token's k choices
// lands on N with probability p, so tokens x (1 - (1 - p)^k) of them, at most tokens x M / nodes
// under node-limited routing to M nodes (the node choice spread evenly).
ByteMatrix per_node_dispatch(const ByteMatrix& pairs, int ranks_per_node, int top_k, double tokens,
                             double bytes_per_token, int max_nodes) {
  const int n = pairs.n;
  const int nodes = n / ranks_per_node;
  ByteMatrix out(n);
  const double cap = max_nodes > 0 ? static_cast<double>(max_nodes) / nodes : 1.0;
  for (int a = 0; a < n; ++a) {
    const int home = a / ranks_per_node;
    for (int node = 0; node < nodes; ++node) {
      const int first = node * ranks_per_node;
      if (node == home) {
        for (int b = first; b < first + ranks_per_node; ++b)
          out.at(a, b) += pairs.at(a, b);
        continue;
      }
      const int peer = first + a % ranks_per_node;
      double to_node = 0;
      for (int b = first; b < first + ranks_per_node; ++b) {
        to_node += static_cast<double>(pairs.at(a, b));
        out.at(peer, b) += pairs.at(a, b);  // the forward over NVLink (the peer's own: local)
      }
      const double p = tokens > 0 ? to_node / bytes_per_token / (tokens * top_k) : 0;
      const double reached = std::min(1 - std::pow(1 - std::min(p, 1.0), top_k), cap);
      out.at(a, peer) += std::llround(tokens * reached * bytes_per_token);
    }
  }
  return out;
}

}  // namespace

const LayerRouting& ExpertTraffic::routing(TrainingTasks& tasks, int layer, int mb, int dp) {
  const auto key = std::make_tuple(layer, mb, dp);
  auto it = routing_.find(key);
  if (it != routing_.end()) return it->second;
  auto [assignments, d] = route(tasks.iteration(), trace_layer(layer), mb + dp * m_);
  LayerRouting r;
  r.assignments = std::move(assignments);
  TaskGraph& graph = tasks.graph();
  const ParallelismSpec& p = spec_.parallelism;
  const int ranks_per_node = std::max(1, spec_.gpus_per_server / p.expert_tp());
  if (spec_.dispatcher == Dispatcher::DeepEP && p.ep > ranks_per_node &&
      p.ep % ranks_per_node == 0) {
    d = per_node_dispatch(
        d, ranks_per_node, spec_.model.top_k, static_cast<double>(spec_.tokens_per_ep_rank()),
        static_cast<double>(spec_.model.hidden) * spec_.model.dtype_bytes / p.expert_tp(),
        spec_.max_nodes_per_token);
  }
  // What comes back retraces the way out (DeepEP reduces on the forwarding GPU).
  ByteMatrix combine = d.transposed();
  if (spec_.precision == Precision::FP8) {
    // Tokens (forward) and their gradients (backward) travel to the experts in FP8; what comes
    // back stays bf16 (the combine's matrix is the bf16 one's transpose).
    const double scale = kFp8DispatchBytesPerElement / spec_.model.dtype_bytes;
    for (std::int64_t& b : d.bytes)
      b = std::llround(static_cast<double>(b) * scale);
  }
  r.dispatch_bytes = d.off_diagonal_sum();
  r.combine_bytes = combine.off_diagonal_sum();
  r.combine = graph.add_matrix(std::move(combine));
  r.dispatch = graph.add_matrix(std::move(d));
  return routing_.emplace(key, std::move(r)).first->second;
}

double ExpertTraffic::mean_busiest_assignments() const {
  double sum = 0;
  int n = 0;
  for (int layer = 0; layer < spec_.model.layers; ++layer) {
    if (!spec_.model.is_moe_layer(layer)) continue;
    for (int i = 0; i < m_ * spec_.parallelism.expert_dp(); ++i) {
      const std::vector<std::int64_t> a = route(0, trace_layer(layer), i).first;
      sum += static_cast<double>(*std::max_element(a.begin(), a.end()));
      ++n;
    }
  }
  return n > 0 ? sum / n : 0;
}

void ExpertTraffic::all_to_all(TrainingTasks& tasks, int stage, std::vector<TaskId>& cur, Op op,
                               Phase phase, int layer, int mb, bool transposed) {
  const ParallelismSpec& p = spec_.parallelism;
  const int etp = p.expert_tp();
  for (int edp = 0; edp < p.expert_dp(); ++edp) {
    const LayerRouting& r = routing(tasks, layer, mb, edp);
    const std::int32_t matrix = transposed ? r.combine : r.dispatch;
    for (int t = 0; t < etp; ++t) {
      std::vector<std::int32_t> members;
      std::vector<TaskId> deps;
      for (int ep = 0; ep < p.ep; ++ep) {
        const int l = t + etp * (ep + p.ep * edp);
        members.push_back(tasks.gpu(stage, l));
        deps.push_back(cur[static_cast<std::size_t>(l)]);
        tasks.also_overlapped(deps.back(), deps);
      }
      const TaskId id = tasks.collective(
          CollectiveKind::AllToAll, op, Traffic::EP, phase, layer, mb, std::move(members),
          Bytes(transposed ? r.combine_bytes : r.dispatch_bytes), matrix, std::move(deps));
      for (int ep = 0; ep < p.ep; ++ep)
        cur[static_cast<std::size_t>(t + etp * (ep + p.ep * edp))] = id;
    }
  }
}

}  // namespace mfabric::workload::training
