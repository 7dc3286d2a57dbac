// The non-ring share of the degree: repeated maximum-weight matching over the remaining pair
// demand (TopoOpt section 4, "Blossom" matching; here LEMON's MaxWeightedMatching).
#include <lemon/fractional_matching.h>
#include <lemon/smart_graph.h>

#include <cstdint>
#include <type_traits>

// LEMON 1.3.1 keeps graph maps of class and enum types in ArrayMap, which calls std::allocator's
// construct/destroy, removed in C++20. The matching needs two such maps, of arcs and of the
// fractional start's node status; both get LEMON's std::vector based map instead. The status
// enum is private: an explicit instantiation (where access is not checked) hands it out through
// a friend function.
namespace mfabric::control::detail::lemon_compat {
using Fractional = lemon::MaxWeightedFractionalMatching<lemon::SmartGraph,
                                                        lemon::SmartGraph::EdgeMap<std::int64_t>>;
struct StatusTag {
  friend auto status_type(StatusTag);
};
// GCC warns about the friend declaration (a template would be meant); clang has no such warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-template-friend"
#endif
template <class Tag, class T>
struct ExportType {
  friend auto status_type(Tag) { return std::type_identity<T>{}; }
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
template struct ExportType<StatusTag, Fractional::Status>;
using FractionalStatus = decltype(status_type(StatusTag{}))::type;
}  // namespace mfabric::control::detail::lemon_compat

namespace lemon {
template <typename Graph, typename Item>
struct DefaultMapSelector<Graph, Item, SmartGraphBase::Arc> {
  typedef VectorMap<Graph, Item, SmartGraphBase::Arc> Map;
};
template <typename Graph, typename Item>
struct DefaultMapSelector<Graph, Item, mfabric::control::detail::lemon_compat::FractionalStatus> {
  typedef VectorMap<Graph, Item, mfabric::control::detail::lemon_compat::FractionalStatus> Map;
};
}  // namespace lemon

#include <lemon/matching.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "control/topoopt_steps.h"

namespace mfabric::control::detail {

namespace {

// LEMON scales integer duals by 4 and sums them: weights are shifted down to at most 2^40 so that
// nothing overflows 64 bits, keeping every positive weight at least 1.
constexpr int kMaxWeightBits = 40;

struct Candidate {
  int a;
  int b;
  std::int64_t demand;
};

std::vector<Candidate> candidate_pairs(const PairDemand& pairs, int per_server) {
  const int n = pairs.servers();
  std::vector<std::pair<int, int>> chosen;
  for (int a = 0; a < n; ++a) {
    std::vector<int> partners = pairs.partners(a);
    if (per_server > 0 && static_cast<int>(partners.size()) > per_server) {
      // Heaviest first, then the lower server: a stable order for ties.
      std::stable_sort(partners.begin(), partners.end(),
                       [&](int x, int y) { return pairs.at(a, x) > pairs.at(a, y); });
      partners.resize(static_cast<std::size_t>(per_server));
    }
    for (const int b : partners)
      chosen.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  std::vector<Candidate> result;
  result.reserve(chosen.size());
  for (const auto& [a, b] : chosen)
    result.push_back(Candidate{a, b, pairs.at(a, b).count()});
  return result;
}

}  // namespace

int place_matchings(const PairDemand& pairs, int candidates_per_server, PanelDraft& draft) {
  const std::vector<Candidate> candidates = candidate_pairs(pairs, candidates_per_server);
  int rounds = 0;
  for (int round = 0; round < draft.degree(); ++round) {
    lemon::SmartGraph graph;
    graph.reserveNode(pairs.servers());
    for (int s = 0; s < pairs.servers(); ++s)
      graph.addNode();
    std::vector<std::pair<lemon::SmartGraph::Edge, const Candidate*>> edges;
    std::vector<std::int64_t> weights;
    std::int64_t max_weight = 0;
    for (const Candidate& c : candidates) {
      if (draft.free(c.a) < 1 || draft.free(c.b) < 1) continue;
      const std::int64_t w = c.demand / (draft.links_between(c.a, c.b) + 1);
      if (w <= 0) continue;
      edges.emplace_back(graph.addEdge(graph.nodeFromId(c.a), graph.nodeFromId(c.b)), &c);
      weights.push_back(w);
      max_weight = std::max(max_weight, w);
    }
    if (edges.empty()) break;
    const auto bits = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(max_weight)));
    const int shift = std::max(0, bits - kMaxWeightBits);
    lemon::SmartGraph::EdgeMap<std::int64_t> weight(graph);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      weight[edges[i].first] = std::max<std::int64_t>(1, weights[i] >> shift);
    }
    lemon::MaxWeightedMatching<lemon::SmartGraph, lemon::SmartGraph::EdgeMap<std::int64_t>>
        matching(graph, weight);
    matching.run();
    bool placed = false;
    for (const auto& [edge, c] : edges) {
      if (!matching.matching(edge)) continue;
      draft.add(DraftLink{c->a, c->b, LinkPurpose::Matching, -1, 0});
      placed = true;
    }
    if (!placed) break;
    ++rounds;
  }
  return rounds;
}

}  // namespace mfabric::control::detail
