#include "fabric/kinds/rail_optimized.h"

#include <algorithm>

#include "fabric/clos.h"
#include "fabric/kinds/kind_params.h"
#include "fabric/paper_formulas.h"

namespace mfabric::fabric::kinds {
namespace {

void build_rail_optimized(Spec& spec, const std::vector<FabricParam>& params, Topology& t) {
  const auto [radix, o] = read_clos_params(spec, params, t);

  const ClusterSpec& c = t.cluster();
  const int per_leaf = detail::clos_hosts_per_leaf(radix, o);
  // Leaf (block b, rail r) holds NIC r of the servers of block b; rails are the inner loop so
  // that a pod holds every rail of a few server blocks.
  detail::ClosOptions options{.radix = radix, .oversubscription = o};
  std::vector<std::vector<NodeId>> leaves;
  for (int first = 0; first < c.servers; first += per_leaf) {
    const int last = std::min(c.servers, first + per_leaf);
    for (int r = 0; r < c.nics_per_server; ++r) {
      std::vector<NodeId> leaf;
      for (int s = first; s < last; ++s) {
        t.set_nic_role(t.nic(s, r), NicRole::Eps);
        leaf.push_back(t.nic(s, r));
      }
      leaves.push_back(std::move(leaf));
      options.leaf_groups.push_back(r);
    }
  }
  t.set_tiers(detail::build_clos(t, leaves, options));
}

}  // namespace

FabricKind rail_optimized_kind() {
  FabricKind kind;
  kind.params = {radix_param(), oversubscription_param()};
  // Cross-rail bytes move to the right rail over the NVSwitch instead of crossing a spine, as
  // NCCL does by default on rails.
  kind.traits.all_to_all = "pxn";
  kind.traits.label = "rail-optimized";
  kind.traits.baseline_all_to_alls = electrical_all_to_alls();
  kind.build = [params = kind.params](Spec& spec, Topology& t) {
    build_rail_optimized(spec, params, t);
  };
  kind.paper_formula = [](const PaperCostInputs& in, CostConvention) {
    return paper_fat_tree_bill(std::int64_t{in.servers} * in.nics_per_server, in.oversubscription,
                               /*core=*/true);
  };
  return kind;
}

}  // namespace mfabric::fabric::kinds
