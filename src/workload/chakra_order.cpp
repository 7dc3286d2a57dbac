// Dependencies of one rank: ids -> node indices under the control-dependency policy, cycles,
// and the topological order the reader matches collectives in (docs/chakra.md, "Dependencies").
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "workload/chakra_trace.h"

namespace mfabric::workload::chakra {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// Rows of node indices: row i is items[begin[i], begin[i + 1]).
struct Rows {
  std::vector<std::size_t> begin{0};
  std::vector<std::size_t> items;

  std::size_t size(std::size_t i) const { return begin[i + 1] - begin[i]; }
  const std::size_t* row(std::size_t i) const { return items.data() + begin[i]; }
  void close_row() { begin.push_back(items.size()); }
};

// Row i of `parents` lists the parents of i; the result lists the children.
Rows reversed(const Rows& parents, std::size_t n) {
  Rows children;
  children.begin.assign(n + 1, 0);
  for (std::size_t p : parents.items)
    ++children.begin[p + 1];
  for (std::size_t i = 0; i < n; ++i)
    children.begin[i + 1] += children.begin[i];
  children.items.resize(parents.items.size());
  std::vector<std::size_t> next(children.begin.begin(), children.begin.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < parents.size(i); ++k)
      children.items[next[parents.row(i)[k]]++] = i;
  }
  return children;
}

struct Graph {
  Rows data;  // parents by data dependency
  Rows ctrl;  // parents by control dependency (those kept after mapping)
  Rows data_children;
  Rows ctrl_children;
};

std::string cycle_text(const RankTrace& rank, const std::vector<std::size_t>& cycle) {
  std::string text;
  for (std::size_t v : cycle)
    text += fmt::format("node {} -> ", rank.nodes[v].id);
  return text + fmt::format("node {}", rank.nodes[cycle.front()].id);
}

// Ids -> indices. Missing data dependencies are errors; missing and self control dependencies
// follow the policy. Frees each node's id list once mapped.
Graph map_ids(RankTrace& rank, ControlDeps policy, ChakraSummary& summary) {
  const std::size_t n = rank.nodes.size();
  std::unordered_map<std::uint64_t, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    index.emplace(rank.nodes[i].id, i);
  Graph g;
  g.data.begin.reserve(n + 1);
  g.ctrl.begin.reserve(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    RawNode& node = rank.nodes[i];
    for (std::size_t k = 0; k < node.dep_ids.size(); ++k) {
      const std::uint64_t d = node.dep_ids[k];
      const bool data = k < node.data_deps;
      if (!data && policy == ControlDeps::Ignore) {
        ++summary.ignored_control_deps;
        continue;
      }
      const auto it = index.find(d);
      if (it == index.end()) {
        if (data) {
          throw Error(rank.file, describe(node),
                      fmt::format("depends on node {}, which is not in this file", d));
        }
        if (policy == ControlDeps::Strict) {
          throw Error(rank.file, describe(node),
                      fmt::format("has a control dependency on node {}, which is not in this file "
                                  "(control_deps: relaxed drops such dependencies)",
                                  d));
        }
        ++summary.dangling_control_deps;
        continue;
      }
      if (it->second == i) {
        if (data) {
          throw Error(rank.file, describe(node),
                      fmt::format("data dependency cycle: node {0} -> node {0}", d));
        }
        if (policy == ControlDeps::Strict) {
          throw Error(rank.file, describe(node),
                      fmt::format("dependency cycle: node {0} -> node {0} (a control dependency "
                                  "on itself; control_deps: relaxed drops it)",
                                  d));
        }
        ++summary.cyclic_control_deps;
        continue;
      }
      (data ? g.data : g.ctrl).items.push_back(it->second);
    }
    g.data.close_row();
    g.ctrl.close_row();
    std::vector<std::uint64_t>().swap(node.dep_ids);
  }
  g.data_children = reversed(g.data, n);
  g.ctrl_children = reversed(g.ctrl, n);
  return g;
}

// Strongly connected components of the graph of data and control edges (iterative Tarjan, since
// a chain of a million nodes would overflow the call stack). Returns a component id per node.
std::vector<std::size_t> components(const Graph& g, std::size_t n) {
  std::vector<std::size_t> order_index(n, kNone), low(n, 0), component(n, kNone);
  std::vector<char> on_stack(n, 0);
  std::vector<std::size_t> stack;
  struct Frame {
    std::size_t node;
    std::size_t edge;
  };
  std::vector<Frame> frames;
  std::size_t counter = 0;
  std::size_t next_component = 0;
  const auto edge = [&](std::size_t v, std::size_t e) {
    const std::size_t d = g.data.size(v);
    return e < d ? g.data.row(v)[e] : g.ctrl.row(v)[e - d];
  };
  const auto visit = [&](std::size_t v) {
    order_index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = 1;
    frames.push_back(Frame{v, 0});
  };
  for (std::size_t root = 0; root < n; ++root) {
    if (order_index[root] != kNone) continue;
    visit(root);
    while (!frames.empty()) {
      const std::size_t v = frames.back().node;
      const std::size_t e = frames.back().edge;
      if (e < g.data.size(v) + g.ctrl.size(v)) {
        ++frames.back().edge;
        const std::size_t w = edge(v, e);
        if (order_index[w] == kNone) {
          visit(w);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], order_index[w]);
        }
        continue;
      }
      if (low[v] == order_index[v]) {
        std::size_t w = kNone;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          component[w] = next_component;
        } while (w != v);
        ++next_component;
      }
      frames.pop_back();
      if (!frames.empty()) {
        const std::size_t parent = frames.back().node;
        low[parent] = std::min(low[parent], low[v]);
      }
    }
  }
  return component;
}

// Kahn's algorithm, smallest id first among ready nodes: trace ids follow program order, and
// collectives are matched across ranks in this order. With `component`, a node that waits only
// for control parents inside its own strongly connected component is started anyway when
// nothing else can run: those control edges close cycles and are dropped (counted in
// `summary`). Every dropped edge lies on a cycle, and the edges kept are acyclic. Returns the
// order, short of n nodes if the graph (without `component`: data and control) has a cycle.
std::vector<std::size_t> topological_order(const RankTrace& rank, const Graph& g, bool use_control,
                                           const std::vector<std::size_t>* component,
                                           ChakraSummary& summary) {
  const std::size_t n = rank.nodes.size();
  std::vector<std::size_t> data_left(n), outside_left(n, 0), inside_left(n, 0);
  const auto same = [&](std::size_t a, std::size_t b) {
    return component != nullptr && (*component)[a] == (*component)[b];
  };
  for (std::size_t i = 0; i < n; ++i) {
    data_left[i] = g.data.size(i);
    if (!use_control) continue;
    for (std::size_t k = 0; k < g.ctrl.size(i); ++k) {
      ++(same(g.ctrl.row(i)[k], i) ? inside_left : outside_left)[i];
    }
  }
  using Ready = std::pair<std::uint64_t, std::size_t>;  // (id, node)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready, breakable;
  const auto settle = [&](std::size_t i) {
    if (data_left[i] != 0 || outside_left[i] != 0) return;
    (inside_left[i] == 0 ? ready : breakable).emplace(rank.nodes[i].id, i);
  };
  for (std::size_t i = 0; i < n; ++i)
    settle(i);
  std::vector<char> done(n, 0);
  std::vector<std::size_t> order;
  order.reserve(n);
  while (order.size() < n) {
    std::size_t v = kNone;
    if (!ready.empty()) {
      v = ready.top().second;
      ready.pop();
    } else if (component != nullptr && !breakable.empty()) {
      v = breakable.top().second;
      breakable.pop();
      if (done[v]) continue;
      for (std::size_t k = 0; k < g.ctrl.size(v); ++k) {
        if (!done[g.ctrl.row(v)[k]]) ++summary.cyclic_control_deps;
      }
      inside_left[v] = 0;
    } else {
      break;
    }
    if (done[v]) continue;
    done[v] = 1;
    order.push_back(v);
    for (std::size_t k = 0; k < g.data_children.size(v); ++k) {
      const std::size_t c = g.data_children.row(v)[k];
      if (done[c]) continue;
      --data_left[c];
      settle(c);
    }
    if (!use_control) continue;
    for (std::size_t k = 0; k < g.ctrl_children.size(v); ++k) {
      const std::size_t c = g.ctrl_children.row(v)[k];
      if (done[c]) continue;  // an edge dropped when c was started
      --(same(v, c) ? inside_left : outside_left)[c];
      settle(c);
    }
  }
  return order;
}

// The nodes `order` left out, each of which waits for another one of them.
std::vector<char> left_out(const std::vector<std::size_t>& order, std::size_t n) {
  std::vector<char> stuck(n, 1);
  for (std::size_t i : order)
    stuck[i] = 0;
  return stuck;
}

}  // namespace

std::vector<std::size_t> find_cycle(
    const std::vector<char>& stuck,
    const std::function<std::vector<std::size_t>(std::size_t)>& deps) {
  std::size_t v =
      static_cast<std::size_t>(std::find(stuck.begin(), stuck.end(), 1) - stuck.begin());
  std::vector<std::size_t> path;
  std::unordered_map<std::size_t, std::size_t> position;
  while (position.find(v) == position.end()) {
    position[v] = path.size();
    path.push_back(v);
    for (std::size_t d : deps(v)) {
      if (stuck[d]) {
        v = d;
        break;
      }
    }
  }
  std::vector<std::size_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(position[v]),
                                 path.end());
  std::reverse(cycle.begin(), cycle.end());  // walked child -> parent; report parent -> child
  // Start at the earliest vertex so the message does not depend on where the walk began.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

void resolve_dependencies(RankTrace& rank, ControlDeps policy, ChakraSummary& summary) {
  const std::size_t n = rank.nodes.size();
  const Graph g = map_ids(rank, policy, summary);
  const auto parents = [&](std::size_t v, bool with_control) {
    std::vector<std::size_t> out(g.data.row(v), g.data.row(v) + g.data.size(v));
    if (with_control) out.insert(out.end(), g.ctrl.row(v), g.ctrl.row(v) + g.ctrl.size(v));
    return out;
  };

  // Data dependencies alone must be acyclic, whatever the policy.
  std::vector<std::size_t> order = topological_order(rank, g, false, nullptr, summary);
  if (order.size() != n) {
    const auto cycle =
        find_cycle(left_out(order, n), [&](std::size_t v) { return parents(v, false); });
    throw Error(rank.file, describe(rank.nodes[cycle.front()]),
                "data dependency cycle: " + cycle_text(rank, cycle));
  }
  const bool use_control = policy != ControlDeps::Ignore;
  if (use_control) {
    order = topological_order(rank, g, true, nullptr, summary);
    if (order.size() != n) {
      if (policy == ControlDeps::Strict) {
        const auto cycle =
            find_cycle(left_out(order, n), [&](std::size_t v) { return parents(v, true); });
        throw Error(rank.file, describe(rank.nodes[cycle.front()]),
                    fmt::format("dependency cycle: {} (through control dependencies; "
                                "control_deps: relaxed drops the ones that close cycles)",
                                cycle_text(rank, cycle)));
      }
      const std::vector<std::size_t> component = components(g, n);
      order = topological_order(rank, g, true, &component, summary);
    }
  }
  if (order.size() != n) {
    throw std::logic_error("chakra: dependencies left unordered after dropping control cycles");
  }

  // Kept: every data dependency, and the control dependencies that run before their node.
  std::vector<std::size_t> position(n);
  for (std::size_t k = 0; k < n; ++k)
    position[order[k]] = k;
  rank.dep_begin.assign(1, 0);
  rank.dep_begin.reserve(n + 1);
  rank.deps.clear();
  for (std::size_t i = 0; i < n; ++i) {
    rank.deps.insert(rank.deps.end(), g.data.row(i), g.data.row(i) + g.data.size(i));
    if (use_control) {
      for (std::size_t k = 0; k < g.ctrl.size(i); ++k) {
        const std::size_t p = g.ctrl.row(i)[k];
        if (position[p] < position[i]) rank.deps.push_back(p);
      }
    }
    rank.dep_begin.push_back(rank.deps.size());
  }
  rank.order = std::move(order);
}

}  // namespace mfabric::workload::chakra
