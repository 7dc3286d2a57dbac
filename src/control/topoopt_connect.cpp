// Making the planned graph connected, and pairing the NICs nothing else used.
#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>

#include "control/topoopt_steps.h"

namespace mfabric::control::detail {

namespace {

int find_root(std::vector<int>& parent, int v) {
  while (parent[static_cast<std::size_t>(v)] != v) {
    parent[static_cast<std::size_t>(v)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(v)])];
    v = parent[static_cast<std::size_t>(v)];
  }
  return v;
}

// bridge[i]: removing links[i] disconnects its ends. Tarjan's low-link over link ids (so that
// parallel links are never bridges), iterative to stay off the call stack at thousands of
// servers.
std::vector<bool> find_bridges(const PanelDraft& draft) {
  const int n = draft.servers();
  const auto& links = draft.links();
  std::vector<std::vector<std::pair<int, int>>> adjacency(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < links.size(); ++i) {
    adjacency[static_cast<std::size_t>(links[i].a)].emplace_back(links[i].b, static_cast<int>(i));
    adjacency[static_cast<std::size_t>(links[i].b)].emplace_back(links[i].a, static_cast<int>(i));
  }
  std::vector<bool> bridge(links.size(), false);
  std::vector<int> order(static_cast<std::size_t>(n), -1);
  std::vector<int> low(static_cast<std::size_t>(n), 0);
  struct Frame {
    int vertex;
    int via;  // link id we came in by
    std::size_t next = 0;
  };
  int clock = 0;
  for (int root = 0; root < n; ++root) {
    if (order[static_cast<std::size_t>(root)] >= 0) continue;
    std::vector<Frame> stack{{root, -1, 0}};
    order[static_cast<std::size_t>(root)] = low[static_cast<std::size_t>(root)] = clock++;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto v = static_cast<std::size_t>(f.vertex);
      if (f.next < adjacency[v].size()) {
        const auto [w, id] = adjacency[v][f.next++];
        if (id == f.via) continue;
        const auto wi = static_cast<std::size_t>(w);
        if (order[wi] < 0) {
          order[wi] = low[wi] = clock++;
          stack.push_back(Frame{w, id, 0});
        } else {
          low[v] = std::min(low[v], order[wi]);
        }
        continue;
      }
      const Frame done = f;
      stack.pop_back();
      if (!stack.empty()) {
        const auto parent = static_cast<std::size_t>(stack.back().vertex);
        const auto child = static_cast<std::size_t>(done.vertex);
        low[parent] = std::min(low[parent], low[child]);
        if (low[child] > order[parent]) bridge[static_cast<std::size_t>(done.via)] = true;
      }
    }
  }
  return bridge;
}

int purpose_rank(LinkPurpose p) {
  switch (p) {
    case LinkPurpose::Leftover:
      return 0;
    case LinkPurpose::Connectivity:
      return 1;
    case LinkPurpose::Matching:
      return 2;
    case LinkPurpose::Ring:
      return 3;
  }
  return 4;
}

std::int64_t pair_bytes(const PairDemand& pairs, int a, int b) {
  if (a >= pairs.servers() || b >= pairs.servers()) return 0;
  return pairs.at(a, b).count();
}

// The link of component c a rewiring gives up, on a cycle when `need_cycle` (so that c stays
// connected without it); least useful first: leftover, connectivity, matching, ring links; then
// the least pair demand; then the most recent.
std::optional<std::size_t> link_to_give_up(const PanelDraft& draft, const PairDemand& pairs,
                                           const std::vector<int>& comp, int c,
                                           const std::vector<bool>& bridge, bool need_cycle) {
  std::optional<std::size_t> best;
  std::tuple<int, std::int64_t, std::size_t> best_key{};
  const auto& links = draft.links();
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (comp[static_cast<std::size_t>(links[i].a)] != c) continue;
    if (need_cycle && bridge[i]) continue;
    const std::tuple<int, std::int64_t, std::size_t> key{purpose_rank(links[i].purpose),
                                                         pair_bytes(pairs, links[i].a, links[i].b),
                                                         links.size() - i};
    if (!best || key < best_key) {
      best = i;
      best_key = key;
    }
  }
  return best;
}

}  // namespace

std::vector<int> components(const PanelDraft& draft, int* count) {
  const int n = draft.servers();
  std::vector<int> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  for (const DraftLink& link : draft.links()) {
    const int ra = find_root(parent, link.a);
    const int rb = find_root(parent, link.b);
    if (ra != rb) parent[static_cast<std::size_t>(std::max(ra, rb))] = std::min(ra, rb);
  }
  std::vector<int> comp(static_cast<std::size_t>(n), -1);
  std::vector<int> index_of_root(static_cast<std::size_t>(n), -1);
  int next = 0;
  for (int s = 0; s < n; ++s) {
    const auto root = static_cast<std::size_t>(find_root(parent, s));
    if (index_of_root[root] < 0) index_of_root[root] = next++;
    comp[static_cast<std::size_t>(s)] = index_of_root[root];
  }
  if (count != nullptr) *count = next;
  return comp;
}

bool connect_components(const PairDemand& pairs, PanelDraft& draft) {
  for (;;) {
    int count = 0;
    const std::vector<int> comp = components(draft, &count);
    if (count <= 1) return true;
    // Free NICs per component and the server with the most of them (lowest id on ties).
    std::vector<int> free_total(static_cast<std::size_t>(count), 0);
    std::vector<int> rep(static_cast<std::size_t>(count), -1);
    for (int s = 0; s < draft.servers(); ++s) {
      const auto c = static_cast<std::size_t>(comp[static_cast<std::size_t>(s)]);
      free_total[c] += draft.free(s);
      if (draft.free(s) > 0 && (rep[c] < 0 || draft.free(s) > draft.free(rep[c]))) rep[c] = s;
    }
    std::vector<int> with_free;
    for (int c = 0; c < count; ++c) {
      if (free_total[static_cast<std::size_t>(c)] > 0) with_free.push_back(c);
    }
    if (with_free.size() >= 2) {
      // The two components with the most free NICs (lowest component on ties).
      std::stable_sort(with_free.begin(), with_free.end(), [&](int x, int y) {
        return free_total[static_cast<std::size_t>(x)] > free_total[static_cast<std::size_t>(y)];
      });
      draft.add(DraftLink{rep[static_cast<std::size_t>(with_free[0])],
                          rep[static_cast<std::size_t>(with_free[1])], LinkPurpose::Connectivity,
                          -1, 0});
      continue;
    }
    // A component with no free NIC gives up a link on one of its cycles (it stays connected)
    // and the freed NICs join another component.
    const std::vector<bool> bridge = find_bridges(draft);
    std::optional<std::size_t> give_up;
    int x = -1;
    for (int c = 0; c < count && !give_up; ++c) {
      if (free_total[static_cast<std::size_t>(c)] > 0) continue;
      give_up = link_to_give_up(draft, pairs, comp, c, bridge, true);
      x = c;
    }
    if (!give_up) return false;  // only trees without free NICs: degree 1
    const DraftLink lost = draft.links()[*give_up];
    if (with_free.size() == 1) {
      // The end with more demand towards the free server keeps a link.
      const int y = rep[static_cast<std::size_t>(with_free[0])];
      const int end = pair_bytes(pairs, lost.b, y) > pair_bytes(pairs, lost.a, y) ? lost.b : lost.a;
      draft.remove(*give_up);
      draft.add(DraftLink{end, y, LinkPurpose::Connectivity, -1, 0});
      continue;
    }
    // No component has a free NIC: swap the ends of a link of X and one of another component.
    std::optional<std::size_t> other;
    for (int c = 0; c < count && !other; ++c) {
      if (c == x) continue;
      other = link_to_give_up(draft, pairs, comp, c, bridge, false);
    }
    if (!other) return false;
    const DraftLink lost_other = draft.links()[*other];
    draft.remove(std::max(*give_up, *other));
    draft.remove(std::min(*give_up, *other));
    // Of the two ways to cross the ends, the one joining pairs with more demand.
    int x_first = lost_other.a;
    int x_second = lost_other.b;
    if (pair_bytes(pairs, lost.a, lost_other.b) + pair_bytes(pairs, lost.b, lost_other.a) >
        pair_bytes(pairs, lost.a, lost_other.a) + pair_bytes(pairs, lost.b, lost_other.b)) {
      std::swap(x_first, x_second);
    }
    draft.add(DraftLink{lost.a, x_first, LinkPurpose::Connectivity, -1, 0});
    draft.add(DraftLink{lost.b, x_second, LinkPurpose::Connectivity, -1, 0});
  }
}

void pair_leftover(PanelDraft& draft) {
  const int n = draft.servers();
  for (;;) {
    int a = -1;
    for (int s = 0; s < n; ++s) {
      if (draft.free(s) > 0 && (a < 0 || draft.free(s) > draft.free(a))) a = s;
    }
    if (a < 0) return;
    int b = -1;
    for (int s = 0; s < n; ++s) {
      if (s == a || draft.free(s) == 0) continue;
      if (b < 0) {
        b = s;
        continue;
      }
      const int links_s = draft.links_between(a, s);
      const int links_b = draft.links_between(a, b);
      if (links_s < links_b || (links_s == links_b && draft.free(s) > draft.free(b))) b = s;
    }
    if (b < 0) return;
    draft.add(DraftLink{a, b, LinkPurpose::Leftover, -1, 0});
  }
}

}  // namespace mfabric::control::detail
