// Internal to collective/: the bytes of one step of a relayed all-to-all (proxy, pxn,
// hierarchical), summed per ordered GPU pair, and the step they become. A map keeps the
// transfers in a deterministic order.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "collective/lowering_impl.h"

namespace mfabric::collective::detail {

using StepBytes = std::map<std::pair<fabric::NodeId, fabric::NodeId>, std::int64_t>;

// Adds `bytes` from src to dst; nothing when they are the same GPU or there are no bytes.
inline void add_bytes(StepBytes& step, fabric::NodeId src, fabric::NodeId dst, std::int64_t bytes) {
  if (src == dst || bytes <= 0) return;
  step[{src, dst}] += bytes;
}

// One transfer per pair, hashed with the request's seed and the step's index.
inline Step to_step(const StepBytes& bytes, std::uint64_t seed, int index) {
  Step step;
  step.transfers.reserve(bytes.size());
  for (const auto& [pair, size] : bytes) {
    net::Transfer t;
    t.src = pair.first;
    t.dst = pair.second;
    t.size = Bytes(size);
    t.latency_hops = 1;
    t.flow_hash = transfer_hash(seed, index, pair.first, pair.second);
    step.transfers.push_back(t);
  }
  return step;
}

// The plan of the non-empty steps among `steps`, in order (each keeps its index for the hashes).
template <std::size_t N>
Plan plan_of(const std::array<const StepBytes*, N>& steps, std::uint64_t seed) {
  Plan plan;
  int index = 0;
  for (const StepBytes* step : steps) {
    if (!step->empty()) plan.steps.push_back(to_step(*step, seed, index));
    ++index;
  }
  return plan;
}

// A way between two servers for a relayed all-to-all: bytes go source GPU -> `from` (gather),
// `from` -> `to` (exchange), `to` -> destination GPU (scatter).
struct Channel {
  fabric::NodeId from = fabric::kNoNode;
  fabric::NodeId to = fabric::kNoNode;
};

// The bytes of member pair (i, j), src -> dst, split evenly over `channels` (not empty) and
// added to the three steps. The remainder's extra bytes start at a pair-dependent channel so
// that no channel collects all of them.
inline void relay_over(const std::vector<Channel>& channels, fabric::NodeId src, fabric::NodeId dst,
                       std::int64_t bytes, int i, int j, StepBytes& gather, StepBytes& exchange,
                       StepBytes& scatter) {
  const auto k = static_cast<std::int64_t>(channels.size());
  const std::int64_t base = bytes / k;
  const std::int64_t extra = bytes % k;
  for (std::int64_t c = 0; c < k; ++c) {
    const std::int64_t part = base + ((c - (i + j) % k + k) % k < extra ? 1 : 0);
    const Channel& ch = channels[static_cast<std::size_t>(c)];
    add_bytes(gather, src, ch.from, part);
    add_bytes(exchange, ch.from, ch.to, part);
    add_bytes(scatter, ch.to, dst, part);
  }
}

// True when `gpu` is usable and has a usable NIC on the electrical network (role Eps): a GPU
// that can send into a fat-tree or a rail itself.
bool has_eps_nic(const fabric::Topology& t, const CircuitView* view, fabric::NodeId gpu);

}  // namespace mfabric::collective::detail
