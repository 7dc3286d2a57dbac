#include "runtime/token_payload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/rng.h"

namespace mfabric::runtime {
namespace {

// Header layout (little-endian host order; every rank runs the same binary).
constexpr std::size_t kSourceAt = 0, kIndexAt = 4, kExpertAt = 8, kProcessedAt = 12,
                      kChecksumAt = 16;

std::uint32_t load32(std::span<const std::byte> b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
void store32(std::span<std::byte> b, std::size_t at, std::uint32_t v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// Over everything but the checksum field, eight bytes at a time (a corrupted, dropped or
// swapped word changes it).
std::uint64_t checksum_of(std::span<const std::byte> token) {
  std::uint64_t h = 0x6d6f652d62656e63ULL;
  auto mix = [&](std::uint64_t word) { h = splitmix64(h ^ word); };
  for (std::size_t at = 0; at < token.size(); at += 8) {
    if (at == kChecksumAt) continue;
    std::uint64_t word = 0;
    std::memcpy(&word, token.data() + at, std::min<std::size_t>(8, token.size() - at));
    mix(word);
  }
  return h;
}

void seal(std::span<std::byte> token) {
  const std::uint64_t sum = checksum_of(token);
  std::memcpy(token.data() + kChecksumAt, &sum, sizeof sum);
}

}  // namespace

void fill_token(std::span<std::byte> out, std::uint64_t seed, std::uint32_t layer, TokenId id) {
  store32(out, kSourceAt, id.source);
  store32(out, kIndexAt, id.index);
  store32(out, kExpertAt, id.expert);
  store32(out, kProcessedAt, kNotProcessed);
  // The body: a SplitMix64 stream keyed by the token, so that no two tokens look alike.
  std::uint64_t state = splitmix64(seed ^ splitmix64((std::uint64_t{layer} << 32) ^ id.source) ^
                                   (std::uint64_t{id.index} << 20));
  for (std::size_t at = static_cast<std::size_t>(kTokenHeaderBytes); at < out.size(); at += 8) {
    state = splitmix64(state);
    std::memcpy(out.data() + at, &state, std::min<std::size_t>(8, out.size() - at));
  }
  seal(out);
}

void mark_processed(std::span<std::byte> token, std::uint32_t expert) {
  store32(token, kProcessedAt, expert);
  seal(token);
}

std::string check_token(std::span<const std::byte> token, std::uint64_t seed, std::uint32_t layer,
                        TokenId id, std::uint32_t processed_by) {
  const auto name = [&] {
    return fmt::format("token {} of rank {} (expert rank {}, layer {})", id.index, id.source,
                       id.expert, layer);
  };
  if (token.size() < static_cast<std::size_t>(kTokenHeaderBytes))
    return fmt::format("{}: {} bytes, shorter than its header", name(), token.size());
  const std::uint32_t source = load32(token, kSourceAt), index = load32(token, kIndexAt),
                      expert = load32(token, kExpertAt);
  if (source != id.source || index != id.index || expert != id.expert) {
    return fmt::format("{}: found token {} of rank {} (expert rank {}) in its place", name(), index,
                       source, expert);
  }
  std::uint64_t sum = 0;
  std::memcpy(&sum, token.data() + kChecksumAt, sizeof sum);
  if (sum != checksum_of(token)) return fmt::format("{}: checksum mismatch", name());
  if (load32(token, kProcessedAt) != processed_by) {
    return fmt::format(
        "{}: processed by {}, expected {}", name(), load32(token, kProcessedAt),
        processed_by == kNotProcessed ? std::string("none") : std::to_string(processed_by));
  }
  // The body itself, against the one its source drew.
  std::vector<std::byte> expected(token.size());
  fill_token(expected, seed, layer, id);
  if (processed_by != kNotProcessed) mark_processed(expected, processed_by);
  if (std::memcmp(expected.data(), token.data(), token.size()) != 0)
    return fmt::format("{}: payload differs from what its source sent", name());
  return {};
}

}  // namespace mfabric::runtime
