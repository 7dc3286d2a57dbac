#include "control/job_demand.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"

namespace mfabric::control {

namespace {

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw Error("", "bytes", "the job's demand between servers exceeds 2^63 bytes");
  }
  return sum;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw Error("", "bytes", "the job's demand between servers exceeds 2^63 bytes");
  }
  return product;
}

// Bytes a ring over m servers sends between servers for one collective of buffer size S.
std::int64_t ring_network_bytes(workload::CollectiveKind kind, std::int64_t buffer, int m) {
  switch (kind) {
    case workload::CollectiveKind::AllReduce:
      return checked_mul(checked_mul(2, m - 1), buffer);
    case workload::CollectiveKind::ReduceScatter:
    case workload::CollectiveKind::AllGather:
    case workload::CollectiveKind::Broadcast:
      return checked_mul(m - 1, buffer);
    case workload::CollectiveKind::AllToAll:
    case workload::CollectiveKind::Barrier:
      break;
  }
  return 0;
}

// A GPU group seen from the servers: the server of each member and the distinct servers.
struct ServerGroup {
  std::vector<int> member_server;
  std::vector<int> servers;     // ascending, distinct
  std::vector<int> members_on;  // members per entry of `servers`
};

class GroupCache {
 public:
  GroupCache(const workload::TaskGraph& graph, int gpus_per_server)
      : graph_(graph), gpus_per_server_(gpus_per_server), cache_(graph.groups().size()) {}

  const ServerGroup& get(std::int32_t g) {
    if (g < 0 || static_cast<std::size_t>(g) >= cache_.size()) {
      throw Error("", "group",
                  fmt::format("collective refers to group {}, which does not exist", g));
    }
    auto& entry = cache_[static_cast<std::size_t>(g)];
    if (!entry.member_server.empty() || graph_.group(g).empty()) return entry;
    for (const std::int32_t gpu : graph_.group(g)) {
      entry.member_server.push_back(server_of(gpu));
    }
    std::map<int, int> count;
    for (const int s : entry.member_server)
      ++count[s];
    for (const auto& [server, members] : count) {
      entry.servers.push_back(server);
      entry.members_on.push_back(members);
    }
    return entry;
  }

  int server_of(std::int32_t gpu) const {
    if (gpu < 0 || gpu >= graph_.gpus()) {
      throw Error("", "gpu",
                  fmt::format("GPU {} is outside the job's {} GPUs", gpu, graph_.gpus()));
    }
    return gpu / gpus_per_server_;
  }

 private:
  const workload::TaskGraph& graph_;
  int gpus_per_server_;
  std::vector<ServerGroup> cache_;
};

struct RingSum {
  std::int64_t buffer = 0;
  std::int64_t network = 0;
  int tasks = 0;
};

}  // namespace

PairDemand::PairDemand(int servers) : servers_(servers) {
  if (servers < 0) {
    throw Error("", "servers",
                fmt::format("expected a non-negative server count, got {}", servers));
  }
  const auto n = static_cast<std::size_t>(servers);
  upper_.assign(n * (n > 0 ? n - 1 : 0) / 2, 0);
}

std::size_t PairDemand::index(int a, int b) const {
  if (a < 0 || b < 0 || a >= servers_ || b >= servers_ || a == b) {
    throw Error(
        "", "server pair",
        fmt::format("expected two different servers below {}, got ({}, {})", servers_, a, b));
  }
  if (a > b) std::swap(a, b);
  const auto n = static_cast<std::size_t>(servers_);
  const auto i = static_cast<std::size_t>(a);
  // Row i of the strict upper triangle starts after rows 0..i-1 of lengths n-1, ..., n-i.
  return i * (2 * n - i - 1) / 2 + static_cast<std::size_t>(b - a - 1);
}

Bytes PairDemand::at(int a, int b) const {
  if (a == b && a >= 0 && a < servers_) return Bytes(0);
  return Bytes(upper_[index(a, b)]);
}

void PairDemand::add(int a, int b, Bytes bytes) {
  if (bytes.count() < 0) {
    throw Error("", "bytes",
                fmt::format("expected non-negative demand between servers {} and {}, got {}", a, b,
                            bytes.count()));
  }
  auto& cell = upper_[index(a, b)];
  cell = checked_add(cell, bytes.count());
}

void PairDemand::set(int a, int b, Bytes bytes) {
  if (bytes.count() < 0) {
    throw Error("", "bytes",
                fmt::format("expected non-negative demand between servers {} and {}, got {}", a, b,
                            bytes.count()));
  }
  upper_[index(a, b)] = bytes.count();
}

Bytes PairDemand::total() const {
  std::int64_t sum = 0;
  for (const std::int64_t v : upper_)
    sum = checked_add(sum, v);
  return Bytes(sum);
}

std::vector<int> PairDemand::partners(int a) const {
  std::vector<int> result;
  for (int b = 0; b < servers_; ++b) {
    if (b != a && upper_[index(a, b)] > 0) result.push_back(b);
  }
  return result;
}

Bytes JobDemand::ring_network_bytes() const {
  std::int64_t sum = 0;
  for (const auto& ring : rings)
    sum = checked_add(sum, ring.network_bytes.count());
  return Bytes(sum);
}

JobDemand job_demand(const workload::TaskGraph& graph, int gpus_per_server) {
  if (gpus_per_server < 1) {
    throw Error("", "gpus_per_server",
                fmt::format("expected at least 1 GPU per server, got {}", gpus_per_server));
  }
  if (graph.gpus() < 0) {
    throw Error("", "gpus", fmt::format("expected a non-negative GPU count, got {}", graph.gpus()));
  }
  JobDemand demand;
  demand.servers = (graph.gpus() + gpus_per_server - 1) / gpus_per_server;
  demand.pairs = PairDemand(demand.servers);

  GroupCache groups(graph, gpus_per_server);
  std::vector<RingSum> ring_sums(graph.groups().size());
  // Uniform all-to-alls add the same ceil(S / n) to every member pair: summed per group here and
  // spread over the server pairs once at the end.
  std::vector<std::int64_t> uniform_per_member_pair(graph.groups().size(), 0);

  for (const workload::Task& task : graph.tasks()) {
    if (task.kind == workload::TaskKind::P2P) {
      const int from = groups.server_of(task.gpu());
      const int to = groups.server_of(task.peer());
      if (task.bytes().count() < 0) {
        throw Error("", "bytes", fmt::format("negative transfer size {}", task.bytes().count()));
      }
      if (from != to && task.bytes().count() > 0) demand.pairs.add(from, to, task.bytes());
      continue;
    }
    if (task.kind != workload::TaskKind::Collective) continue;
    if (task.collective == workload::CollectiveKind::Barrier) continue;
    const ServerGroup& group = groups.get(task.group());
    const auto g = static_cast<std::size_t>(task.group());
    const std::int64_t bytes = task.bytes().count();
    if (bytes < 0) throw Error("", "bytes", fmt::format("negative collective size {}", bytes));
    if (group.servers.size() < 2) continue;  // inside one server: NVSwitch traffic

    if (task.collective != workload::CollectiveKind::AllToAll) {
      const int m = static_cast<int>(group.servers.size());
      ring_sums[g].buffer = checked_add(ring_sums[g].buffer, bytes);
      ring_sums[g].network =
          checked_add(ring_sums[g].network, ring_network_bytes(task.collective, bytes, m));
      ++ring_sums[g].tasks;
      continue;
    }
    const int n = static_cast<int>(group.member_server.size());
    if (task.matrix() < 0) {
      const std::int64_t share = bytes / n + (bytes % n != 0 ? 1 : 0);
      uniform_per_member_pair[g] = checked_add(uniform_per_member_pair[g], share);
      continue;
    }
    if (static_cast<std::size_t>(task.matrix()) >= graph.matrix_count()) {
      throw Error(
          "", "matrix",
          fmt::format("all-to-all refers to matrix {}, which does not exist", task.matrix()));
    }
    const workload::ByteMatrix& matrix = graph.matrix(task.matrix());
    if (matrix.n != n) {
      throw Error(
          "", "matrix",
          fmt::format("all-to-all-v matrix is {0}x{0} but its group has {1} members", matrix.n, n));
    }
    for (int i = 0; i < n; ++i) {
      const int from = group.member_server[static_cast<std::size_t>(i)];
      for (int j = 0; j < n; ++j) {
        const std::int64_t v = matrix.at(i, j);
        if (v < 0) {
          throw Error("", "matrix",
                      fmt::format("all-to-all-v matrix entry ({}, {}) is negative ({})", i, j, v));
        }
        const int to = group.member_server[static_cast<std::size_t>(j)];
        if (from != to && v > 0) demand.pairs.add(from, to, Bytes(v));
      }
    }
  }

  for (std::size_t g = 0; g < uniform_per_member_pair.size(); ++g) {
    if (uniform_per_member_pair[g] == 0) continue;
    const ServerGroup& group = groups.get(static_cast<std::int32_t>(g));
    for (std::size_t a = 0; a < group.servers.size(); ++a) {
      for (std::size_t b = a + 1; b < group.servers.size(); ++b) {
        // Both directions: members on a to members on b and back.
        const std::int64_t pairs =
            checked_mul(2, checked_mul(group.members_on[a], group.members_on[b]));
        demand.pairs.add(group.servers[a], group.servers[b],
                         Bytes(checked_mul(pairs, uniform_per_member_pair[g])));
      }
    }
  }

  std::map<std::vector<int>, RingSum> by_servers;
  for (std::size_t g = 0; g < ring_sums.size(); ++g) {
    if (ring_sums[g].tasks == 0) continue;
    RingSum& sum = by_servers[groups.get(static_cast<std::int32_t>(g)).servers];
    sum.buffer = checked_add(sum.buffer, ring_sums[g].buffer);
    sum.network = checked_add(sum.network, ring_sums[g].network);
    sum.tasks += ring_sums[g].tasks;
  }
  for (auto& [servers, sum] : by_servers) {
    demand.rings.push_back(RingDemand{servers, Bytes(sum.buffer), Bytes(sum.network), sum.tasks});
  }
  return demand;
}

}  // namespace mfabric::control
