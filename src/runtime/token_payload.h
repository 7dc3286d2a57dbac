// A token's bytes on the wire of the runtime's all-to-all (docs/runtime.md): a header naming the
// token (its source rank, its index in the source's send buffer, its expert rank, the expert
// that processed it) and a checksum over the header and the body, then a body drawn from the
// seed. Every rank can rebuild any token from (seed, layer, source, index), so a receiver checks
// a token without the source's help.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace mfabric::runtime {

// Smallest payload: the header alone.
inline constexpr std::int64_t kTokenHeaderBytes = 24;
// Not yet processed by an expert.
inline constexpr std::uint32_t kNotProcessed = 0xFFFFFFFFu;

struct TokenId {
  std::uint32_t source = 0;
  std::uint32_t index = 0;   // in the source's send buffer (tokens in expert order)
  std::uint32_t expert = 0;  // the rank hosting its expert
};

// Writes the token as its source sends it (unprocessed). out.size() >= kTokenHeaderBytes.
void fill_token(std::span<std::byte> out, std::uint64_t seed, std::uint32_t layer, TokenId id);
// What the expert does to it before sending it back: marks it processed by `expert` and
// re-seals the checksum.
void mark_processed(std::span<std::byte> token, std::uint32_t expert);

// Empty when `token` is exactly the token `id` of (seed, layer), processed by `processed_by`
// (kNotProcessed: not yet); otherwise what is wrong with it (one line).
std::string check_token(std::span<const std::byte> token, std::uint64_t seed, std::uint32_t layer,
                        TokenId id, std::uint32_t processed_by);

}  // namespace mfabric::runtime
