#include "fabric/kinds/fat_tree.h"

#include "fabric/clos.h"
#include "fabric/kinds/kind_params.h"
#include "fabric/paper_formulas.h"

namespace mfabric::fabric::kinds {

FabricKind fat_tree_kind() {
  FabricKind kind;
  kind.params = {radix_param(), oversubscription_param()};
  kind.traits.label = "fat-tree";
  kind.traits.baseline_all_to_alls = electrical_all_to_alls();
  kind.build = [params = kind.params](Spec& spec, Topology& t) {
    const auto [radix, o] = read_clos_params(spec, params, t);
    t.set_tiers(detail::build_eps_fat_tree(t, t.cluster().nics_per_server, radix, o));
  };
  kind.paper_formula = [](const PaperCostInputs& in, CostConvention) {
    return paper_fat_tree_bill(std::int64_t{in.servers} * in.nics_per_server, in.oversubscription,
                               /*core=*/true);
  };
  return kind;
}

}  // namespace mfabric::fabric::kinds
