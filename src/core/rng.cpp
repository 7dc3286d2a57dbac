#include "core/rng.h"

namespace mfabric {
namespace {

// FNV-1a: a stable hash of the label (std::hash is not stable across implementations).
std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) : seed_(seed), engine_(splitmix64(seed)) {}

Rng Rng::derive(std::string_view label) const {
  return Rng(splitmix64(seed_ ^ stable_hash(label)));
}

double Rng::uniform() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

std::uint64_t Rng::below(std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
  std::uint64_t x;
  do {
    x = engine_();
  } while (x >= limit);
  return x % n;
}

}  // namespace mfabric
