// The 5-step proxy all-to-all (collective/proxy.cpp): expected plans worked out by hand on a
// 4-server mFabric region (NICs 0-1 on the EPS, 2-7 on the OCS, NIC j on GPU j), and flow
// conservation on random circuits and matrices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "collective/lowering.h"
#include "core/error.h"
#include "fabric/builders.h"

namespace mfabric::collective::proxy_test {
namespace {

using fabric::NodeId;
using workload::ByteMatrix;
using workload::CollectiveKind;

fabric::ClusterSpec cluster(int servers) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = 8;
  c.nics_per_server = 8;
  return c;
}

const fabric::Topology& mfabric_topo() {
  static const fabric::Topology t = fabric::build_fabric("mfabric:region=4", cluster(4));
  return t;
}

const fabric::Topology& fat_tree_topo() {
  static const fabric::Topology t = fabric::build_fabric("fat-tree", cluster(4));
  return t;
}

NodeId gpu(int server, int local) {
  return mfabric_topo().gpu(server, local);
}

class FakeCircuits final : public CircuitView {
 public:
  void connect(int server_a, int nic_a, int server_b, int nic_b) {
    const NodeId a = mfabric_topo().nic(server_a, nic_a);
    const NodeId b = mfabric_topo().nic(server_b, nic_b);
    peer_[a] = b;
    peer_[b] = a;
  }
  NodeId circuit_peer(NodeId nic) const override {
    const auto it = peer_.find(nic);
    return it == peer_.end() ? fabric::kNoNode : it->second;
  }

 private:
  std::map<NodeId, NodeId> peer_;
};

struct Request {
  std::vector<NodeId> members;
  ByteMatrix matrix;
  CollectiveRequest get(const CircuitView* circuits) const {
    CollectiveRequest r;
    r.kind = CollectiveKind::AllToAll;
    r.members = members;
    r.matrix = &matrix;
    r.flow_hash = 3;
    r.circuits = circuits;
    return r;
  }
};

Request request(std::vector<NodeId> members) {
  Request r{std::move(members), ByteMatrix(0)};
  r.matrix = ByteMatrix(static_cast<int>(r.members.size()));
  return r;
}

using Moves = std::vector<std::tuple<NodeId, NodeId, std::int64_t>>;

Moves moves(const Step& step) {
  Moves out;
  for (const net::Transfer& t : step.transfers)
    out.emplace_back(t.src, t.dst, t.size.count());
  std::sort(out.begin(), out.end());
  return out;
}

Moves sorted(Moves m) {
  std::sort(m.begin(), m.end());
  return m;
}

Plan lower_proxy(const CollectiveRequest& r, const fabric::Topology& t = mfabric_topo()) {
  return make_lowering("proxy")->lower(r, t);
}

std::vector<NodeId> one_gpu_per_server(int local) {
  return {gpu(0, local), gpu(1, local), gpu(2, local), gpu(3, local)};
}

TEST(Proxy, CircuitPairSplitsEvenlyOverItsCircuits) {
  FakeCircuits circuits;
  circuits.connect(0, 2, 1, 3);
  circuits.connect(0, 4, 1, 5);
  Request r = request(one_gpu_per_server(7));
  r.matrix.at(0, 1) = 1000;
  const Plan p = lower_proxy(r.get(&circuits));
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(moves(p.steps[0]), sorted({{gpu(0, 7), gpu(0, 2), 500}, {gpu(0, 7), gpu(0, 4), 500}}));
  EXPECT_EQ(moves(p.steps[1]), sorted({{gpu(0, 2), gpu(1, 3), 500}, {gpu(0, 4), gpu(1, 5), 500}}));
  EXPECT_EQ(moves(p.steps[2]), sorted({{gpu(1, 3), gpu(1, 7), 500}, {gpu(1, 5), gpu(1, 7), 500}}));
}

TEST(Proxy, ACircuitAtTheSendersOwnNicNeedsNoGather) {
  FakeCircuits circuits;
  circuits.connect(0, 7, 1, 7);
  Request r = request(one_gpu_per_server(7));
  r.matrix.at(0, 1) = 64;
  const Plan p = lower_proxy(r.get(&circuits));
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(moves(p.steps[0]), (Moves{{gpu(0, 7), gpu(1, 7), 64}}));
}

TEST(Proxy, WithoutACircuitGoesThroughTheEpsGpus) {
  FakeCircuits circuits;
  circuits.connect(0, 2, 1, 3);  // not to server 2
  Request r = request(one_gpu_per_server(7));
  r.matrix.at(0, 2) = 1001;  // odd: one channel carries the extra byte
  const Plan p = lower_proxy(r.get(&circuits));
  ASSERT_EQ(p.steps.size(), 3u);
  // (i + j) % k = (0 + 2) % 2 = 0: channel 0 (the first EPS GPUs) takes the extra byte.
  EXPECT_EQ(moves(p.steps[0]), sorted({{gpu(0, 7), gpu(0, 0), 501}, {gpu(0, 7), gpu(0, 1), 500}}));
  EXPECT_EQ(moves(p.steps[1]), sorted({{gpu(0, 0), gpu(2, 0), 501}, {gpu(0, 1), gpu(2, 1), 500}}));
  EXPECT_EQ(moves(p.steps[2]), sorted({{gpu(2, 0), gpu(2, 7), 501}, {gpu(2, 1), gpu(2, 7), 500}}));
}

TEST(Proxy, AnEpsGpuSendsAndReceivesItself) {
  Request r = request(one_gpu_per_server(0));  // GPU 0 has EPS NIC 0
  r.matrix.at(0, 2) = 1000;
  const Plan p = lower_proxy(r.get(nullptr));
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(moves(p.steps[0]), (Moves{{gpu(0, 0), gpu(2, 0), 1000}}));
}

TEST(Proxy, ServerLocalShareMovesInTheExchangeStep) {
  FakeCircuits circuits;
  circuits.connect(0, 2, 1, 2);
  Request r = request({gpu(0, 6), gpu(0, 7), gpu(1, 7)});
  r.matrix.at(0, 1) = 300;  // inside server 0
  r.matrix.at(1, 2) = 40;   // over the circuit
  const Plan p = lower_proxy(r.get(&circuits));
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(moves(p.steps[0]), (Moves{{gpu(0, 7), gpu(0, 2), 40}}));
  EXPECT_EQ(moves(p.steps[1]), sorted({{gpu(0, 6), gpu(0, 7), 300}, {gpu(0, 2), gpu(1, 2), 40}}));
  EXPECT_EQ(moves(p.steps[2]), (Moves{{gpu(1, 2), gpu(1, 7), 40}}));
}

TEST(Proxy, OnAFatTreeEveryGpuIsItsOwnProxy) {
  // Every NIC is on the EPS: the plan is the direct one.
  std::vector<NodeId> members;
  for (int s = 0; s < 4; ++s) {
    for (int l = 0; l < 8; l += 3)
      members.push_back(fat_tree_topo().gpu(s, l));
  }
  CollectiveRequest r;
  r.kind = CollectiveKind::AllToAll;
  r.members = members;
  r.bytes = Bytes(12 * 1000);
  const Plan proxy = lower_proxy(r, fat_tree_topo());
  const Plan direct = make_lowering("direct")->lower(r, fat_tree_topo());
  ASSERT_EQ(proxy.steps.size(), 1u);
  ASSERT_EQ(direct.steps.size(), 1u);
  EXPECT_EQ(moves(proxy.steps[0]), moves(direct.steps[0]));
}

TEST(Proxy, RejectsOtherCollectivesAndBadMatrices) {
  Request r = request(one_gpu_per_server(7));
  CollectiveRequest ar = r.get(nullptr);
  ar.kind = CollectiveKind::AllReduce;
  ar.matrix = nullptr;
  try {
    lower_proxy(ar);
    ADD_FAILURE() << "all-reduce accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("proxy: only lowers all-to-all"), std::string::npos);
  }
  const ByteMatrix small(3);
  CollectiveRequest wrong = r.get(nullptr);
  wrong.matrix = &small;
  try {
    lower_proxy(wrong);
    ADD_FAILURE() << "3 x 3 matrix for 4 members accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("proxy: all-to-all-v matrix is 3 x 3"), std::string::npos)
        << e.what();
  }
}

TEST(Proxy, LowererPicksProxyWhereThereAreRegions) {
  FakeCircuits circuits;
  circuits.connect(0, 2, 1, 3);
  Request r = request(one_gpu_per_server(7));
  r.matrix.at(0, 1) = 10;
  const Lowerer lowerer;  // all_to_all: auto
  EXPECT_EQ(lowerer.lower(r.get(&circuits), mfabric_topo()).steps.size(), 3u);
  AlgorithmChoice direct;
  direct.all_to_all = "direct";
  EXPECT_EQ(Lowerer(direct).lower(r.get(&circuits), mfabric_topo()).steps.size(), 1u);
}

// Random circuits (each OCS NIC at most one, inside the region) and random matrices over random
// member sets: every GPU's bytes out minus bytes in over the plan equals its row sum minus its
// column sum (proxies only relay); gathers and scatters stay inside a server; exchanges between
// servers use a circuit when the two servers have one, else two EPS GPUs.
TEST(Proxy, RandomPlansConserveBytesAndUseTheRightPorts) {
  const fabric::Topology& t = mfabric_topo();
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    FakeCircuits circuits;
    std::vector<std::pair<int, int>> free_ports;  // (server, nic)
    for (int s = 0; s < 4; ++s) {
      for (int n = 2; n < 8; ++n)
        free_ports.emplace_back(s, n);
    }
    std::shuffle(free_ports.begin(), free_ports.end(), rng);
    std::map<std::pair<int, int>, int> circuit_count;
    while (free_ports.size() >= 2 && rng() % 5 != 0) {
      const auto a = free_ports.back();
      free_ports.pop_back();
      const auto it = std::find_if(free_ports.begin(), free_ports.end(),
                                   [&](const auto& p) { return p.first != a.first; });
      if (it == free_ports.end()) break;
      const auto b = *it;
      free_ports.erase(it);
      circuits.connect(a.first, a.second, b.first, b.second);
      ++circuit_count[{std::min(a.first, b.first), std::max(a.first, b.first)}];
    }
    std::vector<NodeId> members;
    for (int s = 0; s < 4; ++s) {
      for (int l = 0; l < 8; ++l) {
        if (rng() % 3 == 0) members.push_back(t.gpu(s, l));
      }
    }
    if (members.empty()) continue;
    std::shuffle(members.begin(), members.end(), rng);
    Request r = request(members);
    const int n = static_cast<int>(members.size());
    std::map<NodeId, std::int64_t> expected_net;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j || rng() % 4 == 0) continue;
        const auto bytes = static_cast<std::int64_t>(rng() % 100000);
        r.matrix.at(i, j) = bytes;
        expected_net[members[static_cast<std::size_t>(i)]] += bytes;
        expected_net[members[static_cast<std::size_t>(j)]] -= bytes;
      }
    }
    const Plan p = lower_proxy(r.get(&circuits));
    std::map<NodeId, std::int64_t> net;
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
      for (const net::Transfer& tr : p.steps[k].transfers) {
        ASSERT_GT(tr.size.count(), 0);
        ASSERT_NE(tr.src, tr.dst);
        net[tr.src] += tr.size.count();
        net[tr.dst] -= tr.size.count();
        const int sa = t.node(tr.src).server;
        const int sb = t.node(tr.dst).server;
        if (sa == sb) continue;
        // Only exchanges cross servers; with 3 steps that is the middle one.
        ASSERT_TRUE(p.steps.size() < 3 || k == 1) << "trial " << trial << " step " << k;
        const bool has_circuit = circuit_count.count({std::min(sa, sb), std::max(sa, sb)}) > 0;
        if (has_circuit) {
          // src's NIC (NIC j on GPU j) has a circuit to dst's NIC.
          const NodeId nic = t.nic(sa, t.node(tr.src).index);
          EXPECT_EQ(circuits.circuit_peer(nic), t.nic(sb, t.node(tr.dst).index))
              << "trial " << trial;
        } else {
          EXPECT_LT(t.node(tr.src).index, 2) << "trial " << trial;  // EPS GPUs
          EXPECT_LT(t.node(tr.dst).index, 2) << "trial " << trial;
        }
      }
    }
    for (auto& [node, bytes] : net) {
      if (bytes != 0 || expected_net.count(node) > 0) {
        EXPECT_EQ(bytes, expected_net[node]) << "trial " << trial << " " << t.name(node);
      }
    }
    for (const auto& [node, bytes] : expected_net) {
      EXPECT_EQ(net[node], bytes) << "trial " << trial << " " << t.name(node);
    }
  }
}

}  // namespace
}  // namespace mfabric::collective::proxy_test
