#include "control/topoopt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "control/topoopt_steps.h"
#include "core/error.h"

namespace mfabric::control {

namespace {

constexpr std::int64_t kMaxNics = std::int64_t{1} << 26;

void validate(const JobDemand& demand, int servers, int degree) {
  if (servers < 1) {
    throw Error("", "servers", fmt::format("expected at least 1 server, got {}", servers));
  }
  if (degree < 1) {
    throw Error("", "degree", fmt::format("expected at least 1 NIC per server, got {}", degree));
  }
  if (static_cast<std::int64_t>(servers) * degree > kMaxNics) {
    throw Error("", "degree",
                fmt::format("{} servers x {} NICs is above the planner's limit of 2^26 NICs",
                            servers, degree));
  }
  if (demand.servers < 0 || demand.servers > servers) {
    throw Error(
        "", "demand.servers",
        fmt::format("the demand spans {} servers, expected 0 to {}", demand.servers, servers));
  }
  if (demand.pairs.servers() != demand.servers) {
    throw Error("", "demand.pairs",
                fmt::format("the pair demand is for {} servers but the demand spans {}",
                            demand.pairs.servers(), demand.servers));
  }
  for (std::size_t g = 0; g < demand.rings.size(); ++g) {
    const RingDemand& ring = demand.rings[g];
    const std::string field = fmt::format("demand.rings[{}]", g);
    if (ring.servers.size() < 2) {
      throw Error(
          "", field,
          fmt::format("a ring group needs at least 2 servers, got {}", ring.servers.size()));
    }
    for (std::size_t i = 0; i < ring.servers.size(); ++i) {
      const int s = ring.servers[i];
      if (s < 0 || s >= demand.servers || (i > 0 && s <= ring.servers[i - 1])) {
        throw Error("", field,
                    fmt::format("expected ascending distinct servers below {}, got {} at {}",
                                demand.servers, s, i));
      }
    }
    if (ring.network_bytes.count() < 0 || ring.buffer_bytes.count() < 0) {
      throw Error("", field,
                  fmt::format("expected non-negative bytes, got {} network and {} buffer bytes",
                              ring.network_bytes.count(), ring.buffer_bytes.count()));
    }
  }
}

// NICs per server for rings, in proportion to the ring share of all bytes (TopoOpt's degree
// split), rounded to the nearest (halves up); at least 1 for each kind with traffic when d >= 2;
// odd counts moved to the nearer even count when every ring group needs 2 NICs per ring.
int ring_degree(const JobDemand& demand, int degree) {
  const auto ring_bytes = static_cast<long double>(demand.ring_network_bytes().count());
  const auto pair_bytes = static_cast<long double>(demand.pairs.total().count());
  if (ring_bytes <= 0) return 0;
  if (pair_bytes <= 0) return degree;
  const long double exact = degree * ring_bytes / (ring_bytes + pair_bytes);
  int ring = static_cast<int>(std::floor(exact + 0.5L));
  const int low = degree >= 2 ? 1 : 0;
  const int high = degree >= 2 ? degree - 1 : degree;
  ring = std::clamp(ring, low, high);
  const bool all_need_two = std::all_of(
      demand.rings.begin(), demand.rings.end(),
      [](const auto& r) { return r.servers.size() >= 3 || r.network_bytes.count() == 0; });
  if (ring % 2 == 1 && all_need_two) {
    const int down = ring - 1;
    const int up = ring + 1;
    const bool down_ok = down >= low && down >= 2;
    const bool up_ok = up <= high;
    if (up_ok && (!down_ok || exact - down >= up - exact)) {
      ring = up;
    } else if (down_ok) {
      ring = down;
    }
  }
  return ring;
}

}  // namespace

const char* to_string(LinkPurpose p) {
  switch (p) {
    case LinkPurpose::Ring:
      return "ring";
    case LinkPurpose::Matching:
      return "matching";
    case LinkPurpose::Connectivity:
      return "connectivity";
    case LinkPurpose::Leftover:
      return "leftover";
  }
  return "?";
}

std::vector<int> TopoOptTopology::links_of(int server) const {
  std::vector<int> result;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (links[i].server_a == server || links[i].server_b == server) {
      result.push_back(static_cast<int>(i));
    }
  }
  return result;
}

TopoOptTopology plan_topoopt(const JobDemand& demand, int servers, int degree,
                             const TopoOptOptions& options) {
  validate(demand, servers, degree);
  if (options.matching_candidates_per_server < 0) {
    throw Error("", "matching_candidates_per_server",
                fmt::format("expected 0 (all pairs) or more, got {}",
                            options.matching_candidates_per_server));
  }
  TopoOptTopology topology;
  topology.servers = servers;
  topology.degree = degree;
  topology.ring_degree = ring_degree(demand, degree);

  detail::PanelDraft draft(servers, degree);
  topology.rings = detail::place_rings(demand, topology.ring_degree, options.stride_search, draft);
  topology.matching_rounds =
      detail::place_matchings(demand.pairs, options.matching_candidates_per_server, draft);
  detail::connect_components(demand.pairs, draft);
  detail::pair_leftover(draft);
  int components = 0;
  detail::components(draft, &components);
  topology.connected = components <= 1;

  // NICs in link order: a server's first link gets its NIC 0, and so on.
  std::vector<int> next_nic(static_cast<std::size_t>(servers), 0);
  topology.links.reserve(draft.links().size());
  for (const detail::DraftLink& link : draft.links()) {
    PanelLink out;
    out.server_a = link.a;
    out.nic_a = next_nic[static_cast<std::size_t>(link.a)]++;
    out.server_b = link.b;
    out.nic_b = next_nic[static_cast<std::size_t>(link.b)]++;
    out.purpose = link.purpose;
    out.ring = link.ring;
    out.stride = link.stride;
    topology.links.push_back(out);
  }
  for (int s = 0; s < servers; ++s)
    topology.unused_nics += draft.free(s);
  return topology;
}

fabric::ForwardingPaths forwarding_paths(const TopoOptTopology& topology,
                                         const fabric::ForwardingOptions& options) {
  std::vector<fabric::ServerLink> links;
  links.reserve(topology.links.size());
  for (const PanelLink& l : topology.links)
    links.push_back(fabric::ServerLink{l.server_a, l.server_b});
  return fabric::ForwardingPaths(topology.servers, links, options);
}

}  // namespace mfabric::control
