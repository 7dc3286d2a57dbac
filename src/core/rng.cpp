#include "core/rng.h"

namespace mfabric {
namespace {

// The start of the hash that names a derived stream: FNV's offset basis with its last digit
// missing, a slip made when streams were first derived. Any fixed start hashes as well, and
// this one is kept so that every seeded stream, and so every published figure, stays the same.
constexpr std::uint64_t kStreamLabelBasis = 1469598103934665603ULL;

}  // namespace

std::uint64_t fnv1a(std::string_view text, std::uint64_t basis) {
  std::uint64_t h = basis;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;  // FNV's 64-bit prime
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) : seed_(seed), engine_(splitmix64(seed)) {}

Rng Rng::derive(std::string_view label) const {
  return Rng(splitmix64(seed_ ^ fnv1a(label, kStreamLabelBasis)));
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
