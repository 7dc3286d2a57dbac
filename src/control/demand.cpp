#include "control/demand.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "core/error.h"

namespace mfabric::control {
namespace {

std::string entry_name(const char* matrix, std::int64_t row, std::int64_t col) {
  return fmt::format("{}[{}][{}]", matrix, row, col);
}

void check_servers(std::int64_t servers, const char* field) {
  if (servers < 1 || servers > kMaxRegionServers) {
    throw Error("", field,
                fmt::format("a region has 1 to {} servers (no OCS has more ports), got {}",
                            kMaxRegionServers, servers));
  }
}

void check_entry(std::int64_t bytes, const char* matrix, std::int64_t row, std::int64_t col,
                 const char* what) {
  if (bytes < 0) {
    throw Error("", entry_name(matrix, row, col),
                fmt::format("expected a non-negative {}, got {}", what, bytes));
  }
  if (bytes > kMaxPairBytes) {
    throw Error("", entry_name(matrix, row, col),
                fmt::format("{} bytes is more than the {} bytes (1 PiB) one pair may carry", bytes,
                            kMaxPairBytes));
  }
}

}  // namespace

ServerDemand::ServerDemand(int servers) : n_(servers) {
  check_servers(servers, "servers");
  bytes_.assign(static_cast<std::size_t>(servers) * static_cast<std::size_t>(servers), 0);
}

void ServerDemand::add(int i, int j, std::int64_t bytes) {
  if (i == j || bytes == 0) return;
  const auto ij =
      static_cast<std::size_t>(i) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(j);
  const auto ji =
      static_cast<std::size_t>(j) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(i);
  // Both terms are at most kMaxPairBytes = 2^50: the sum cannot overflow before the check.
  const std::int64_t sum = bytes_[ij] + bytes;
  if (bytes < 0 || sum > kMaxPairBytes) {
    throw Error(fmt::format(
        "the demand of servers {} and {} ({} + {} bytes) is outside 0 to {} bytes (1 PiB)",
        std::min(i, j), std::max(i, j), bytes_[ij], bytes, kMaxPairBytes));
  }
  // total_ and bytes are at most 2^60 and 2^50: no overflow before the check.
  if (total_ + bytes > kMaxRegionBytes) {
    throw Error(
        fmt::format("the region's demand ({} + {} bytes, adding servers {} and {}) is more "
                    "than the {} bytes (1 EiB) a region may carry",
                    total_, bytes, std::min(i, j), std::max(i, j), kMaxRegionBytes));
  }
  bytes_[ij] = sum;
  bytes_[ji] = sum;
  total_ += bytes;
}

std::vector<DemandPair> ServerDemand::pairs() const {
  std::size_t count = 0;
  for (int i = 0; i < n_; ++i) {
    for (int j = i + 1; j < n_; ++j)
      count += at(i, j) > 0;
  }
  std::vector<DemandPair> out;
  out.reserve(count);
  for (int i = 0; i < n_; ++i) {
    for (int j = i + 1; j < n_; ++j) {
      if (const std::int64_t b = at(i, j); b > 0) out.push_back({i, j, b});
    }
  }
  return out;
}

ServerDemand demand_from_server_bytes(std::span<const std::int64_t> bytes, int servers) {
  check_servers(servers, "demand_bytes");
  if (bytes.size() != static_cast<std::size_t>(servers) * static_cast<std::size_t>(servers)) {
    throw Error("", "demand_bytes",
                fmt::format("expected a square {} x {} matrix ({} entries), got {} entries",
                            servers, servers, servers * servers, bytes.size()));
  }
  ServerDemand demand(servers);
  for (int i = 0; i < servers; ++i) {
    for (int j = 0; j < servers; ++j) {
      const std::int64_t b = bytes[static_cast<std::size_t>(i) * static_cast<std::size_t>(servers) +
                                   static_cast<std::size_t>(j)];
      check_entry(b, "demand_bytes", i, j, "number of bytes");
      with_context("", entry_name("demand_bytes", i, j), [&] { demand.add(i, j, b); });
    }
  }
  return demand;
}

ServerDemand demand_from_gpu_bytes(const workload::ByteMatrix& matrix,
                                   std::span<const int> server_of_member, int servers) {
  check_servers(servers, "servers");
  if (matrix.n < 0 || static_cast<std::size_t>(matrix.n) != server_of_member.size() ||
      matrix.bytes.size() !=
          static_cast<std::size_t>(matrix.n) * static_cast<std::size_t>(matrix.n)) {
    throw Error("", "server_of_member",
                fmt::format("expected one server per member of the {} x {} byte matrix, got {}",
                            matrix.n, matrix.n, server_of_member.size()));
  }
  for (std::size_t k = 0; k < server_of_member.size(); ++k) {
    if (server_of_member[k] < 0 || server_of_member[k] >= servers) {
      throw Error("", fmt::format("server_of_member[{}]", k),
                  fmt::format("expected a server of the region (0 to {}), got {}", servers - 1,
                              server_of_member[k]));
    }
  }
  ServerDemand demand(servers);
  for (int a = 0; a < matrix.n; ++a) {
    for (int b = 0; b < matrix.n; ++b) {
      const std::int64_t bytes = matrix.at(a, b);
      check_entry(bytes, "bytes", a, b, "number of bytes");
      const int i = server_of_member[static_cast<std::size_t>(a)];
      const int j = server_of_member[static_cast<std::size_t>(b)];
      with_context("", entry_name("bytes", a, b), [&] { demand.add(i, j, bytes); });
    }
  }
  return demand;
}

ServerDemand demand_from_tokens(std::span<const std::int64_t> tokens, int ep, int experts,
                                const TokenLayout& layout) {
  if (layout.ep_ranks_per_server < 1) {
    throw Error(
        "", "ep_ranks_per_server",
        fmt::format("expected at least 1 EP rank per server, got {}", layout.ep_ranks_per_server));
  }
  if (layout.experts_per_rank < 1) {
    throw Error(
        "", "experts_per_rank",
        fmt::format("expected at least 1 expert per rank, got {}", layout.experts_per_rank));
  }
  if (layout.bytes_per_token < 1 || layout.bytes_per_token > kMaxPairBytes) {
    throw Error("", "bytes_per_token",
                fmt::format("expected 1 to {} bytes per token, got {}", kMaxPairBytes,
                            layout.bytes_per_token));
  }
  if (ep < 1 || ep % layout.ep_ranks_per_server != 0) {
    throw Error("", "tokens",
                fmt::format("expected a number of source ranks (rows) that is a positive multiple "
                            "of ep_ranks_per_server ({}), got {}",
                            layout.ep_ranks_per_server, ep));
  }
  const std::int64_t servers = ep / layout.ep_ranks_per_server;
  check_servers(servers, "tokens");
  if (static_cast<std::int64_t>(experts) !=
      static_cast<std::int64_t>(ep) * layout.experts_per_rank) {
    throw Error("", "tokens",
                fmt::format("expected {} experts (columns): {} ranks x {} experts_per_rank, got {}",
                            static_cast<std::int64_t>(ep) * layout.experts_per_rank, ep,
                            layout.experts_per_rank, experts));
  }
  if (tokens.size() != static_cast<std::size_t>(ep) * static_cast<std::size_t>(experts)) {
    throw Error("", "tokens",
                fmt::format("expected {} x {} counts, got {}", ep, experts, tokens.size()));
  }
  ServerDemand demand(static_cast<int>(servers));
  const std::int64_t max_tokens = kMaxPairBytes / layout.bytes_per_token;
  for (int r = 0; r < ep; ++r) {
    const int i = r / layout.ep_ranks_per_server;
    for (int e = 0; e < experts; ++e) {
      const std::int64_t count =
          tokens[static_cast<std::size_t>(r) * static_cast<std::size_t>(experts) +
                 static_cast<std::size_t>(e)];
      check_entry(count, "tokens", r, e, "token count");
      if (count > max_tokens) {
        throw Error("", entry_name("tokens", r, e),
                    fmt::format("{} tokens x {} bytes is more than the {} bytes (1 PiB) one pair "
                                "may carry",
                                count, layout.bytes_per_token, kMaxPairBytes));
      }
      const int j = (e / layout.experts_per_rank) / layout.ep_ranks_per_server;
      with_context("", entry_name("tokens", r, e),
                   [&] { demand.add(i, j, count * layout.bytes_per_token); });
    }
  }
  return demand;
}

}  // namespace mfabric::control
