#include "runtime/proxy_alltoallv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "runtime/token_payload.h"

namespace mfabric::runtime {

void RankLayout::validate() const {
  if (servers < 1 || ranks < servers || ranks % servers != 0) {
    throw Error("", "servers",
                fmt::format("must divide the {} ranks evenly, got {} servers", ranks, servers));
  }
  if (gpus_per_server() < 2) {
    throw Error("", "servers",
                fmt::format("{} servers of {} ranks: a server needs at least 2 ranks (an EPS "
                            "NIC and an OCS NIC)",
                            servers, gpus_per_server()));
  }
  if (alpha < 1 || alpha > gpus_per_server() - 1) {
    throw Error("", "alpha",
                fmt::format("must be 1..{} (OCS NICs of a server of {} ranks; one stays on the "
                            "EPS), got {}",
                            gpus_per_server() - 1, gpus_per_server(), alpha));
  }
}

void check_circuits(const CircuitsInForce& circuits, const RankLayout& layout) {
  std::set<std::pair<int, int>> taken;
  for (const control::PortCircuit& c : circuits.circuits) {
    const std::string name = fmt::format("circuit (server {} NIC {}) - (server {} NIC {})",
                                         c.server, c.nic, c.peer_server, c.peer_nic);
    for (auto [server, nic] : {std::pair{c.server, c.nic}, std::pair{c.peer_server, c.peer_nic}}) {
      if (server < 0 || server >= layout.servers || nic < 0 || nic >= layout.gpus_per_server() ||
          !layout.on_ocs(nic)) {
        throw Error("", "circuits",
                    fmt::format("{}: server {} NIC {} is not an OCS NIC of the {} servers", name,
                                server, nic, layout.servers));
      }
      if (!taken.insert({server, nic}).second) {
        throw Error("", "circuits",
                    fmt::format("{}: server {} NIC {} holds two circuits", name, server, nic));
      }
    }
    if (c.server == c.peer_server)
      throw Error("", "circuits", fmt::format("{}: joins a server to itself", name));
  }
}

std::int64_t TokenRouting::sent_by(int source) const {
  std::int64_t n = 0;
  for (int e = 0; e < ranks; ++e)
    n += at(source, e);
  return n;
}

void TokenRouting::validate() const {
  if (ranks < 1 ||
      tokens.size() != static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks))
    throw Error("", "routing", fmt::format("expected {} x {} token counts", ranks, ranks));
  for (std::int64_t n : tokens) {
    if (n < 0 || n > 0xFFFFFFFFLL)
      throw Error("", "routing", fmt::format("token count {} out of range", n));
  }
  if (token_bytes < kTokenHeaderBytes) {
    throw Error("", "hidden",
                fmt::format("a token needs at least {} bytes (its header), got {}",
                            kTokenHeaderBytes, token_bytes));
  }
}

std::vector<TokenMove> dispatch_moves(const TokenRouting& routing) {
  std::vector<TokenMove> moves;
  for (int s = 0; s < routing.ranks; ++s) {
    std::uint32_t index = 0;
    for (int e = 0; e < routing.ranks; ++e) {
      for (std::int64_t t = 0; t < routing.at(s, e); ++t)
        moves.push_back({token_key(static_cast<std::uint32_t>(s), index++), s, e});
    }
  }
  return moves;
}

std::vector<TokenMove> combine_moves(const TokenRouting& routing) {
  std::vector<TokenMove> moves = dispatch_moves(routing);
  for (TokenMove& m : moves)
    std::swap(m.from, m.to);
  return moves;
}

const char* path_name(Path path) {
  switch (path) {
    case Path::NvSwitch:
      return "nvswitch";
    case Path::Circuit:
      return "circuit";
    case Path::Eps:
      return "eps";
  }
  return "?";
}

std::int64_t ProxyPlan::bytes_over(Path path) const {
  std::int64_t n = 0;
  for (const auto& step : steps) {
    for (const Transfer& t : step) {
      if (t.path == path) n += static_cast<std::int64_t>(t.tokens.size()) * token_bytes;
    }
  }
  return n;
}

namespace {

// A sending and a receiving rank.
using Channel = std::pair<int, int>;

// The channels between servers: the circuits in force, and the EPS ranks of each server.
class ProxyChannels {
 public:
  ProxyChannels(const RankLayout& layout, const CircuitsInForce& circuits)
      : layout_(layout),
        circuit_channels_(static_cast<std::size_t>(layout.servers * layout.servers)) {
    for (const control::PortCircuit& c : circuits.circuits) {
      const int a = layout.rank_of(c.server, c.nic), b = layout.rank_of(c.peer_server, c.peer_nic);
      circuits_of(c.server, c.peer_server).push_back({a, b});
      circuits_of(c.peer_server, c.server).push_back({b, a});
    }
    for (auto& list : circuit_channels_)
      std::sort(list.begin(), list.end());
  }

  bool has_eps_nic(int rank) const { return !layout_.on_ocs(layout_.nic_of(rank)); }

  // The channels a token from `from` to `to` (on another server) may take, and their path.
  Path channels(int from, int to, std::vector<Channel>& out) const {
    const int s = layout_.server_of(from), d = layout_.server_of(to);
    const auto& circuits = circuit_channels_[index(s, d)];
    if (!circuits.empty()) {
      out = circuits;
      return Path::Circuit;
    }
    // Over the EPS: a rank with an EPS NIC sends (receives) itself, the others through their
    // server's EPS ranks, pairs in turn so that several EPS NICs share the bytes.
    const std::vector<int> a = has_eps_nic(from) ? std::vector<int>{from} : eps_ranks(s);
    const std::vector<int> b = has_eps_nic(to) ? std::vector<int>{to} : eps_ranks(d);
    out.clear();
    for (std::size_t c = 0; c < std::max(a.size(), b.size()); ++c)
      out.push_back({a[c % a.size()], b[c % b.size()]});
    return Path::Eps;
  }

 private:
  std::size_t index(int s, int d) const {
    return static_cast<std::size_t>(s) * static_cast<std::size_t>(layout_.servers) +
           static_cast<std::size_t>(d);
  }
  std::vector<Channel>& circuits_of(int s, int d) { return circuit_channels_[index(s, d)]; }
  std::vector<int> eps_ranks(int server) const {
    std::vector<int> out;
    for (int nic = 0; nic < layout_.gpus_per_server(); ++nic) {
      if (!layout_.on_ocs(nic)) out.push_back(layout_.rank_of(server, nic));
    }
    return out;
  }

  RankLayout layout_;
  std::vector<std::vector<Channel>> circuit_channels_;  // servers x servers
};

// One step's messages, by (from, to), in that order.
class StepTransfers {
 public:
  void add(int from, int to, Path path, std::uint64_t key) {
    Transfer& t = by_pair_[{from, to}];
    t.from = from;
    t.to = to;
    t.path = path;
    t.tokens.push_back(key);
  }
  std::vector<Transfer> take() {
    std::vector<Transfer> out;
    for (auto& [pair, t] : by_pair_)
      out.push_back(std::move(t));
    return out;
  }

 private:
  std::map<std::pair<int, int>, Transfer> by_pair_;
};

}  // namespace

// The tokens a rank holds between steps: a byte arena and where each token sits in it.
class ProxyRunner::TokenStore {
 public:
  // Empties the store for a run; `capacity`: the tokens that will pass through, so that the
  // arena never moves during the run.
  void reset(std::int64_t token_bytes, std::size_t capacity) {
    token_bytes_ = static_cast<std::size_t>(token_bytes);
    slot_.clear();
    arena_.clear();
    arena_.reserve(capacity * token_bytes_);
    slot_.reserve(capacity);
  }

  void put(std::uint64_t key, const std::byte* bytes) {
    const std::size_t at = arena_.size();
    arena_.insert(arena_.end(), bytes, bytes + token_bytes_);
    if (!slot_.emplace(key, at).second)
      throw Error("", "runtime", fmt::format("token {:#x} arrived twice at one rank", key));
  }
  // Appends the token's bytes to out and forgets it.
  void take(std::uint64_t key, int rank, std::vector<std::byte>& out) {
    const auto it = slot_.find(key);
    if (it == slot_.end()) {
      throw Error("", "runtime",
                  fmt::format("token {} of rank {} is not at rank {} when it must leave or "
                              "arrive there",
                              key & 0xFFFFFFFFu, key >> 32, rank));
    }
    out.insert(out.end(), arena_.begin() + static_cast<std::ptrdiff_t>(it->second),
               arena_.begin() + static_cast<std::ptrdiff_t>(it->second + token_bytes_));
    slot_.erase(it);
  }

 private:
  std::size_t token_bytes_ = 0;
  std::unordered_map<std::uint64_t, std::size_t> slot_;
  std::vector<std::byte> arena_;
};

ProxyPlan plan_proxy(std::span<const TokenMove> moves, const RankLayout& layout,
                     const CircuitsInForce& circuits, std::int64_t token_bytes) {
  layout.validate();
  check_circuits(circuits, layout);
  const ProxyChannels channels(layout, circuits);
  ProxyPlan plan;
  plan.token_bytes = token_bytes;
  plan.departures.resize(static_cast<std::size_t>(layout.ranks));
  plan.arrivals.resize(static_cast<std::size_t>(layout.ranks));
  std::array<StepTransfers, 3> steps;
  // Tokens of each (from, to) so far: token t takes channel t mod k.
  std::vector<std::size_t> sent(static_cast<std::size_t>(layout.ranks * layout.ranks), 0);
  std::vector<Channel> scratch;
  for (const TokenMove& m : moves) {
    if (m.from < 0 || m.from >= layout.ranks || m.to < 0 || m.to >= layout.ranks)
      throw Error("", "routing",
                  fmt::format("a token between ranks {} and {} of {}", m.from, m.to, layout.ranks));
    plan.departures[static_cast<std::size_t>(m.from)].push_back(m.key);
    plan.arrivals[static_cast<std::size_t>(m.to)].push_back(m.key);
    if (m.from == m.to) continue;
    if (layout.server_of(m.from) == layout.server_of(m.to)) {
      steps[1].add(m.from, m.to, Path::NvSwitch, m.key);
      continue;
    }
    const Path path = channels.channels(m.from, m.to, scratch);
    std::size_t& count =
        sent[static_cast<std::size_t>(m.from) * static_cast<std::size_t>(layout.ranks) +
             static_cast<std::size_t>(m.to)];
    const auto [a, b] = scratch[count++ % scratch.size()];
    if (a != m.from) steps[0].add(m.from, a, Path::NvSwitch, m.key);
    steps[1].add(a, b, path, m.key);
    if (b != m.to) steps[2].add(b, m.to, Path::NvSwitch, m.key);
  }
  for (std::size_t s = 0; s < steps.size(); ++s)
    plan.steps[s] = steps[s].take();
  for (auto* lists : {&plan.departures, &plan.arrivals}) {
    for (auto& keys : *lists)
      std::sort(keys.begin(), keys.end());
  }
  return plan;
}

void InProcessTransport::exchange(std::span<const Transfer> transfers, std::int64_t,
                                  std::vector<std::vector<std::byte>>& payloads) {
  // Sender and receiver share this process: the payload handed over is the receiver's copy.
  if (payloads.size() != transfers.size())
    throw Error("", "runtime", "a step's payloads do not match its transfers");
}

ProxyRunner::ProxyRunner() = default;
ProxyRunner::~ProxyRunner() = default;

void ProxyRunner::run(const ProxyPlan& plan, Transport& transport,
                      const std::map<int, std::vector<std::byte>>& send_buffers,
                      std::map<int, std::vector<std::byte>>& received) {
  const auto token_bytes = static_cast<std::size_t>(plan.token_bytes);
  for (std::size_t r = 0; r < plan.departures.size(); ++r) {
    const int rank = static_cast<int>(r);
    if (!transport.hosts(rank)) continue;
    const auto it = send_buffers.find(rank);
    const auto& keys = plan.departures[r];
    if (it == send_buffers.end() || it->second.size() != keys.size() * token_bytes) {
      throw Error("", "runtime",
                  fmt::format("rank {}'s send buffer must hold its {} tokens", rank, keys.size()));
    }
    std::size_t passing = keys.size();
    for (const std::vector<Transfer>& step : plan.steps) {
      for (const Transfer& t : step) {
        if (t.to == rank) passing += t.tokens.size();
      }
    }
    std::unique_ptr<TokenStore>& store = stores_[rank];
    if (!store) store = std::make_unique<TokenStore>();
    store->reset(plan.token_bytes, passing);
    for (std::size_t t = 0; t < keys.size(); ++t)
      store->put(keys[t], it->second.data() + t * token_bytes);
  }
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const std::vector<Transfer>& step = plan.steps[s];
    std::vector<std::vector<std::byte>>& payloads = payloads_[s];
    payloads.resize(step.size());
    for (std::size_t k = 0; k < step.size(); ++k) {
      const Transfer& t = step[k];
      payloads[k].clear();
      if (!transport.hosts(t.from)) continue;
      payloads[k].reserve(t.tokens.size() * token_bytes);
      for (std::uint64_t key : t.tokens)
        stores_.at(t.from)->take(key, t.from, payloads[k]);
    }
    transport.exchange(step, plan.token_bytes, payloads);
    for (std::size_t k = 0; k < step.size(); ++k) {
      const Transfer& t = step[k];
      if (!transport.hosts(t.to)) continue;
      if (payloads[k].size() != t.tokens.size() * token_bytes) {
        throw Error("", "runtime",
                    fmt::format("rank {} got {} bytes from rank {}, expected {}", t.to,
                                payloads[k].size(), t.from, t.tokens.size() * token_bytes));
      }
      TokenStore& store = *stores_.at(t.to);
      for (std::size_t i = 0; i < t.tokens.size(); ++i)
        store.put(t.tokens[i], payloads[k].data() + i * token_bytes);
    }
  }
  for (std::size_t r = 0; r < plan.arrivals.size(); ++r) {
    const int rank = static_cast<int>(r);
    if (!transport.hosts(rank)) continue;
    std::vector<std::byte>& out = received[rank];
    out.clear();
    const auto& keys = plan.arrivals[r];
    out.reserve(keys.size() * token_bytes);
    for (std::uint64_t key : keys)
      stores_.at(rank)->take(key, rank, out);
  }
}

std::map<int, std::vector<std::byte>> run_proxy(
    const ProxyPlan& plan, Transport& transport,
    const std::map<int, std::vector<std::byte>>& send_buffers) {
  ProxyRunner runner;
  std::map<int, std::vector<std::byte>> received;
  runner.run(plan, transport, send_buffers, received);
  return received;
}

}  // namespace mfabric::runtime
