#include "fabric/kinds/nvl72.h"

#include <fmt/format.h>

#include "core/error.h"
#include "fabric/clos.h"
#include "fabric/kinds/kind_params.h"
#include "fabric/paper_formulas.h"

namespace mfabric::fabric::kinds {
namespace {

void build_nvl72(Spec& spec, const std::vector<FabricParam>& params, Topology& t) {
  const ClusterSpec& c = t.cluster();
  const int radix = spec.get_int("radix", kDefaultRadix);
  const double o = spec.get_double("oversubscription", kDefaultOversubscription);
  const int domain = spec.get_int("domain", kDefaultNvlDomain);
  spec.finish(param_names(params));
  detail::validate_clos_params(radix, o);
  if (c.nics_per_server != c.gpus_per_server) {
    throw Error("", "fabric",
                fmt::format("nvl72 gives every GPU its own scale-out NIC: the cluster needs "
                            "nics_per_server = gpus_per_server, got {} NICs and {} GPUs",
                            c.nics_per_server, c.gpus_per_server));
  }
  if (domain < c.gpus_per_server || domain > kMaxPerServer) {
    throw Error("", "domain",
                fmt::format("must be the GPUs of one NVLink domain, at least gpus_per_server "
                            "({}, the GPUs the job uses) and at most {}, got {}",
                            c.gpus_per_server, kMaxPerServer, domain));
  }
  t.set_param("radix", param_text(radix));
  t.set_param("oversubscription", param_text(o));
  t.set_param("domain", param_text(domain));
  t.set_tiers(detail::build_eps_fat_tree(t, c.nics_per_server, radix, o));
}

}  // namespace

FabricKind nvl72_kind() {
  FabricKind kind;
  kind.params = {radix_param(),
                 oversubscription_param(),
                 {"domain", param_text(kDefaultNvlDomain),
                  "GPUs per NVLink domain; the cluster's gpus_per_server are the ones the job uses "
                  "(64 of 72), the spare GPUs' scale-out ports are charged in the cost"}};
  kind.traits.label = "nvl72";
  kind.traits.baseline_all_to_alls = electrical_all_to_alls();
  kind.build = [params = kind.params](Spec& spec, Topology& t) { build_nvl72(spec, params, t); };
  // The scale-out network is a fat-tree over one NIC per GPU of every whole domain.
  kind.paper_bills = [](const Topology& t, CostConvention) {
    const auto domain = static_cast<int>(t.param_number("domain"));
    const double o = t.param_number("oversubscription");
    return std::vector<RatedBill>{
        {t.cluster().link,
         paper_fat_tree_bill(std::int64_t{t.cluster().servers} * domain, o, /*core=*/true)}};
  };
  // The cluster's servers hold the GPUs the job uses; the scale-out ports of the spare GPUs of
  // each domain are charged in proportion (docs/cost-model.md).
  kind.scale_built_count = [](std::int64_t count, const Topology& t) {
    const auto domain = static_cast<std::int64_t>(t.param_number("domain"));
    const std::int64_t used = t.cluster().gpus_per_server;
    return (count * domain + used - 1) / used;
  };
  return kind;
}

}  // namespace mfabric::fabric::kinds
