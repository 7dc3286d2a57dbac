// Seeded random numbers. One seed per experiment; every consumer derives its own stream by name
// so that adding a consumer never changes the numbers another one draws.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace mfabric {

// SplitMix64's finaliser: a fixed, portable 64-bit mix. Used to seed streams and wherever a
// deterministic hash must be the same on every platform (ECMP choices, transfer hashes).
std::uint64_t splitmix64(std::uint64_t x);

// FNV-1a, 64 bits: a stable hash of text (std::hash is not the same across implementations).
inline constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ULL;
std::uint64_t fnv1a(std::string_view text, std::uint64_t basis = kFnvOffsetBasis);

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  // An independent stream for `label` (e.g. "routing/layer3"); same seed + label, same stream.
  Rng derive(std::string_view label) const;

  std::uint64_t seed() const { return seed_; }
  std::uint64_t next_u64() { return engine_(); }
  // Uniform in [0, 1), from the top 53 bits (identical on every platform, unlike
  // std::uniform_real_distribution).
  double uniform();
  // Uniform integer in [0, n); n > 0. Rejection sampling, no modulo bias.
  std::uint64_t below(std::uint64_t n);
  std::mt19937_64& engine() { return engine_; }

 private:
  std::uint64_t seed_;
  std::mt19937_64 engine_;
};

}  // namespace mfabric
