// The Lowerer: which algorithm lowers each collective (the experiment's choice per collective
// kind, `auto`'s rules, or a fabric controller's per-collective choice).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collective/lowering.h"
#include "collective/lowering_impl.h"
#include "core/error.h"
#include "fabric/fabric_kinds.h"

namespace mfabric::collective {
namespace {

void check_choice(const std::string& field, const char* collective, const std::string& value,
                  workload::CollectiveKind kind) {
  const std::vector<std::string> valid = algorithm_choices(kind);
  if (std::find(valid.begin(), valid.end(), value) != valid.end()) return;
  throw Error("", field,
              fmt::format("{} has no algorithm '{}' (valid: {})", collective, value,
                          fmt::join(valid, ", ")));
}

}  // namespace

std::vector<std::string> algorithm_choices(workload::CollectiveKind kind) {
  std::vector<std::string> out{"auto"};
  // all-gather and reduce-scatter have no rule of their own to pick by: only ring.
  if (kind == workload::CollectiveKind::AllGather ||
      kind == workload::CollectiveKind::ReduceScatter)
    out.clear();
  for (const auto& e : lowerings().entries()) {
    if (e.factory()->choosable_for(kind)) out.push_back(e.name);
  }
  return out;
}

Lowerer::Lowerer(const AlgorithmChoice& choice) : choice_(choice) {
  using workload::CollectiveKind;
  for (const auto& e : lowerings().entries())
    lowerings_.emplace_back(e.name, e.factory());
  ring_ = &by_name("ring");
  hierarchical_ = &by_name("hierarchical");
  proxy_ = &by_name("proxy");
  check_choice("all_reduce", "all-reduce", choice_.all_reduce, CollectiveKind::AllReduce);
  check_choice("all_to_all", "all-to-all", choice_.all_to_all, CollectiveKind::AllToAll);
  check_choice("all_gather", "all-gather", choice_.all_gather, CollectiveKind::AllGather);
  check_choice("reduce_scatter", "reduce-scatter", choice_.reduce_scatter,
               CollectiveKind::ReduceScatter);
}

const Lowering& Lowerer::by_name(std::string_view name) const {
  for (const auto& [known, lowering] : lowerings_) {
    if (known == name) return *lowering;
  }
  lowerings().at(name);  // throws: unknown, listing the known ones
  throw Error("", "",
              fmt::format("collective algorithm '{}' was registered after this run began",
                          std::string(name)));
}

Plan Lowerer::lower(const CollectiveRequest& request, const fabric::Topology& topology) const {
  using workload::CollectiveKind;
  if (request.algorithm != nullptr) return by_name(request.algorithm).lower(request, topology);
  switch (request.kind) {
    case CollectiveKind::AllReduce: {
      if (choice_.all_reduce != "auto") return by_name(choice_.all_reduce).lower(request, topology);
      // auto: hierarchical when the members span several servers and some server holds
      // several of them; otherwise there is nothing for the hierarchy to gain.
      detail::validate_request(request, topology, "auto");
      const auto servers = detail::members_by_server(request, topology);
      const bool several_servers = servers.size() > 1;
      const bool shared_server =
          std::any_of(servers.begin(), servers.end(), [](const auto& s) { return s.size() > 1; });
      if (several_servers && shared_server) return hierarchical_->lower(request, topology);
      return ring_->lower(request, topology);
    }
    case CollectiveKind::AllToAll:
      if (choice_.all_to_all != "auto") return by_name(choice_.all_to_all).lower(request, topology);
      // auto: the fabric kind's own all-to-all (fabric/fabric_kind.h): mFabric's proxy
      // algorithm on its OCS regions, PXN on rails as NCCL does by default there (cross-rail
      // bytes move to the right rail over the NVSwitch instead of crossing a spine), direct
      // elsewhere (every GPU's NIC reaches the network itself; there is nothing to gather). A
      // topology of no known kind that has OCS regions gets the proxy algorithm too.
      if (!topology.regions().empty()) return proxy_->lower(request, topology);
      return by_name(fabric::traits_of(topology).all_to_all).lower(request, topology);
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::Broadcast:
    case CollectiveKind::Barrier:
      return ring_->lower(request, topology);
  }
  return ring_->lower(request, topology);
}

}  // namespace mfabric::collective
