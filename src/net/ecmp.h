// Every hashed choice of the network layer (ECMP among equal-cost options, spraying): one mix
// and one table of salts. A choice among `count` options is
//     splitmix64(key + golden * (salt + 1)) % count,
// and each kind of choice has a salt range of its own, so that, for one flow, the switch hops,
// the NIC pair, the proxy GPU, host forwarding's path and circuits, the forwarding GPUs and the
// relay route are picked independently of each other. The salts are part of every route (and so
// of every result): change one and every run routes differently.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/rng.h"

namespace mfabric::net {

// splitmix64's finalizer: a fixed, portable mix so that choices are the same everywhere.
inline std::uint64_t mix_hash(std::uint64_t x) {
  return splitmix64(x);
}

// Salts, with the hop number added where a route makes the same kind of choice at several hops
// (hop numbers stay below 1000, far above any route's length).
struct EcmpSalt {
  static constexpr int kSwitchHop = 0;       // + hop: the next switch of a route (router.cpp)
  static constexpr int kNicPair = 1000;      // the NIC pair of a GPU pair
  static constexpr int kProxyGpu = 2000;     // the GPU that proxies a transfer to its NIC
  static constexpr int kForwardPath = 3000;  // host forwarding: the path (circuit_forwarding.cpp)
  static constexpr int kForwardCircuit = 3001;  // + hop: the circuit between two servers
  static constexpr int kForwardInGpu = 4000;    // + hop: the GPU an intermediate server's in-NIC
                                                // hands the data to
  static constexpr int kForwardOutGpu = 5000;   // + hop: the GPU its out-NIC takes it from
  static constexpr int kRelayRoute = 6000;      // one of the cheapest relayed routes
  static constexpr int kMaxHop = 999;           // hop numbers added to a salt are below this
};
static_assert(EcmpSalt::kSwitchHop + EcmpSalt::kMaxHop <= EcmpSalt::kNicPair);
static_assert(EcmpSalt::kForwardCircuit + EcmpSalt::kMaxHop <= EcmpSalt::kForwardInGpu);
static_assert(EcmpSalt::kForwardInGpu + EcmpSalt::kMaxHop <= EcmpSalt::kForwardOutGpu);
static_assert(EcmpSalt::kForwardOutGpu + EcmpSalt::kMaxHop <= EcmpSalt::kRelayRoute);

// One choice among `count` options (0 when there is at most one).
inline std::size_t ecmp_pick(std::uint64_t key, int salt, std::size_t count) {
  if (count <= 1) return 0;
  return static_cast<std::size_t>(
      mix_hash(key + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(salt + 1)) % count);
}

// Packet spraying (docs/network.md, "Spraying"): the flow hash of a transfer's i-th path (i = 0:
// the transfer's own hash, its per-flow ECMP route), so that both backends spray over the same
// paths.
inline std::uint64_t spray_hash(std::uint64_t flow_hash, std::uint64_t i) {
  return i == 0 ? flow_hash : mix_hash(flow_hash ^ mix_hash(i ^ 0x9e3779b97f4a7c15ULL));
}
// The most paths a transfer may be sprayed over.
inline constexpr int kMaxSprayPaths = 64;

}  // namespace mfabric::net
