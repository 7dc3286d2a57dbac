#include "fabric/kinds/rail_only.h"

#include <algorithm>

#include "fabric/clos.h"
#include "fabric/kinds/kind_params.h"
#include "fabric/paper_formulas.h"

namespace mfabric::fabric::kinds {
namespace {

void build_rail_only(Spec& spec, const std::vector<FabricParam>& params, Topology& t) {
  const int radix = spec.get_int("radix", kDefaultRadix);
  spec.finish(param_names(params));
  // No oversubscription parameter: with no spine joining rails there is nothing above the rail
  // to oversubscribe into that would not also cut the rail's own bandwidth.
  detail::validate_clos_params(radix, 1.0);
  t.set_param("radix", param_text(radix));

  const ClusterSpec& c = t.cluster();
  const int per_leaf = detail::clos_hosts_per_leaf(radix, 1.0);
  int tiers = 0;
  for (int r = 0; r < c.nics_per_server; ++r) {
    std::vector<NodeId> hosts;
    for (int s = 0; s < c.servers; ++s) {
      t.set_nic_role(t.nic(s, r), NicRole::Eps);
      hosts.push_back(t.nic(s, r));
    }
    tiers =
        std::max(tiers, detail::build_clos(t, detail::chunk_into_leaves(hosts, per_leaf),
                                           {.radix = radix, .oversubscription = 1.0, .group = r}));
  }
  t.set_tiers(tiers);
}

}  // namespace

FabricKind rail_only_kind() {
  FabricKind kind;
  kind.params = {radix_param()};
  kind.traits.label = "rail-only";
  kind.traits.baseline_all_to_alls = electrical_all_to_alls();
  kind.build = [params = kind.params](Spec& spec, Topology& t) {
    build_rail_only(spec, params, t);
  };
  // Without a spine across rails: no core layer and no oversubscription knob.
  kind.paper_formula = [](const PaperCostInputs& in, CostConvention) {
    return paper_fat_tree_bill(std::int64_t{in.servers} * in.nics_per_server, 1.0,
                               /*core=*/false);
  };
  return kind;
}

}  // namespace mfabric::fabric::kinds
