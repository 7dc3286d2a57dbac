// Graph assembly of the Chakra reader (chakra_units.h): the matched units become tasks of one
// TaskGraph in dependency order, a unit depending on the units of its nodes' dependencies; units
// left over form a cycle, named in the error (ranks ordering their communication
// inconsistently).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "workload/chakra_units.h"

namespace mfabric::workload::chakra {

TaskGraph assemble_graph(UnitTable& table) {
  constexpr std::size_t kNone = UnitTable::kNone;
  std::vector<Unit>& units = table.units();
  const std::size_t count = units.size();
  // Ready units are taken in (rank, topological position) order of their first node, so the task
  // ids read like the trace: deterministic and close to program order.
  std::vector<std::size_t> priority(count, kNone);
  std::size_t next = 0;
  for (int r = 0; r < table.rank_count(); ++r) {
    for (std::size_t i : table.rank(r).order) {
      const std::size_t u = table.unit_of(r, i);
      if (priority[u] == kNone) priority[u] = next++;
    }
  }
  std::vector<std::vector<std::size_t>> deps(count);
  std::vector<std::vector<std::size_t>> children(count);
  std::vector<std::size_t> missing(count, 0);
  for (std::size_t u = 0; u < count; ++u) {
    auto& d = deps[u];
    d = units[u].extra_deps;
    for (NodeRef ref : units[u].nodes) {
      const auto [begin, end] = table.rank(ref.rank).deps_of(ref.index);
      for (const std::size_t* dep = begin; dep != end; ++dep) {
        d.push_back(table.unit_of(ref.rank, *dep));
      }
    }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    missing[u] = d.size();
    for (std::size_t p : d)
      children[p].push_back(u);
  }

  TaskGraph graph(table.rank_count());
  std::vector<TaskId> task_of(count, -1);
  using Ready = std::pair<std::size_t, std::size_t>;  // (priority, unit)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (std::size_t u = 0; u < count; ++u) {
    if (missing[u] == 0) ready.emplace(priority[u], u);
  }
  std::vector<TaskId> task_deps;
  std::size_t added = 0;
  while (!ready.empty()) {
    const std::size_t u = ready.top().second;
    ready.pop();
    Unit& unit = units[u];
    Task task = unit.task;
    if (task.kind == TaskKind::Collective) {
      task.set_group(graph.add_group(unit.members));
      if (unit.matrix) task.set_matrix(graph.add_matrix(std::move(*unit.matrix)));
    }
    task_deps.clear();
    for (std::size_t p : deps[u])
      task_deps.push_back(task_of[p]);
    task_of[u] = graph.add(task, task_deps);
    ++added;
    for (std::size_t c : children[u]) {
      if (--missing[c] == 0) ready.emplace(priority[c], c);
    }
  }
  if (added != count) {
    std::vector<char> stuck(count, 1);
    for (std::size_t u = 0; u < count; ++u)
      stuck[u] = task_of[u] >= 0 ? 0 : 1;
    const auto cycle = find_cycle(stuck, [&](std::size_t v) { return deps[v]; });
    std::string text;
    for (std::size_t v : cycle)
      text += table.describe_unit(units[v]) + " -> ";
    text += "the first again";
    const NodeRef first = units[cycle.front()].nodes.front();
    throw Error(table.file(first.rank), describe(table.node(first)),
                fmt::format("deadlock: the ranks order their communication inconsistently, so "
                            "the matched tasks form a cycle: {}",
                            text));
  }
  return graph;
}

}  // namespace mfabric::workload::chakra
