// What the fabric kinds share about their parameters: the text a parameter is recorded as, the
// electrical switches' radix and oversubscription (described once, read and checked once).
#pragma once

#include <string>
#include <vector>

#include "core/spec.h"
#include "fabric/fabric_kind.h"
#include "fabric/topology.h"

namespace mfabric::fabric::kinds {

inline constexpr int kDefaultRadix = 64;
inline constexpr double kDefaultOversubscription = 1.0;

// A parameter as text exactly as a user could write it back ("3", "1.5").
std::string param_text(double v);
std::string param_text(int v);

// The names of `params`, for Spec::finish.
std::vector<std::string> param_names(const std::vector<FabricParam>& params);

FabricParam radix_param();
FabricParam oversubscription_param();

struct ClosParams {
  int radix;
  double oversubscription;
};
// Reads, checks and records radix and oversubscription, the only parameters of the fat-tree and
// rail-optimized kinds; `params` are the kind's (Spec::finish refuses any other key).
ClosParams read_clos_params(Spec& spec, const std::vector<FabricParam>& params, Topology& t);

}  // namespace mfabric::fabric::kinds
