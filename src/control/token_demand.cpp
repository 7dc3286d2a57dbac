#include "control/token_demand.h"

#include <fmt/format.h>

#include <cmath>

#include "control/demand.h"
#include "core/error.h"

namespace mfabric::control {

workload::ByteMatrix rank_bytes_from_tokens(std::span<const double> tokens, int ep, int experts,
                                            double bytes_per_token) {
  if (ep < 1) throw Error("", "ep", fmt::format("expected at least 1 EP rank, got {}", ep));
  if (experts < ep || experts % ep != 0) {
    throw Error(
        "", "experts",
        fmt::format("expected a positive multiple of ep ({}) experts, got {}", ep, experts));
  }
  if (tokens.size() != static_cast<std::size_t>(ep) * static_cast<std::size_t>(experts)) {
    throw Error("", "tokens",
                fmt::format("expected {} x {} counts, got {}", ep, experts, tokens.size()));
  }
  if (!(bytes_per_token > 0) || !std::isfinite(bytes_per_token)) {
    throw Error("", "bytes_per_token",
                fmt::format("expected a positive number of bytes, got {}", bytes_per_token));
  }
  const int per_rank = experts / ep;
  const double max_tokens = static_cast<double>(kMaxPairBytes) / bytes_per_token;
  std::vector<double> to_rank(static_cast<std::size_t>(ep));
  workload::ByteMatrix bytes(ep);
  for (int a = 0; a < ep; ++a) {
    std::fill(to_rank.begin(), to_rank.end(), 0.0);
    for (int e = 0; e < experts; ++e) {
      const double t = tokens[static_cast<std::size_t>(a) * static_cast<std::size_t>(experts) +
                              static_cast<std::size_t>(e)];
      if (!(t >= 0 && t <= max_tokens)) {
        throw Error("", fmt::format("tokens[{}][{}]", a, e),
                    fmt::format("expected a non-negative token count of at most {} bytes, got {}",
                                kMaxPairBytes, t));
      }
      to_rank[static_cast<std::size_t>(e / per_rank)] += t;
    }
    for (int b = 0; b < ep; ++b) {
      const double value = to_rank[static_cast<std::size_t>(b)] * bytes_per_token;
      if (value > static_cast<double>(kMaxPairBytes)) {
        throw Error("", fmt::format("tokens[{}]", a),
                    fmt::format("the tokens to rank {} need more than {} bytes", b, kMaxPairBytes));
      }
      bytes.at(a, b) = std::llround(value);
    }
  }
  return bytes;
}

}  // namespace mfabric::control
