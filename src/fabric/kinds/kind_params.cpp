#include "fabric/kinds/kind_params.h"

#include <fmt/format.h>

#include "fabric/clos.h"

namespace mfabric::fabric::kinds {

std::string param_text(double v) {
  return fmt::format("{}", v);
}

std::string param_text(int v) {
  return fmt::format("{}", v);
}

std::vector<std::string> param_names(const std::vector<FabricParam>& params) {
  std::vector<std::string> names;
  for (const auto& p : params) {
    names.push_back(p.name);
  }
  return names;
}

FabricParam radix_param() {
  return {"radix", param_text(kDefaultRadix),
          "ports per electrical switch (even, at least 4); decides 1, 2 or 3 tiers"};
}

FabricParam oversubscription_param() {
  return {"oversubscription", param_text(kDefaultOversubscription),
          "leaf down:up port ratio, at least 1 (1 = non-blocking, 3 = 3:1); above the leaves the "
          "Clos is non-blocking"};
}

ClosParams read_clos_params(Spec& spec, const std::vector<FabricParam>& params, Topology& t) {
  const int radix = spec.get_int("radix", kDefaultRadix);
  const double o = spec.get_double("oversubscription", kDefaultOversubscription);
  spec.finish(param_names(params));
  detail::validate_clos_params(radix, o);
  t.set_param("radix", param_text(radix));
  t.set_param("oversubscription", param_text(o));
  return {radix, o};
}

}  // namespace mfabric::fabric::kinds
