// The `recipe` of a model file (docs/workload.md, "Recipes"): read and checked against the model.
// Internal to model.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "workload/model.h"

namespace mfabric::workload::detail {

// Throws mfabric::Error(source, "recipe.<field>", ...) for an unknown or repeated field, a
// missing source or global batch, a degree below 1, an unknown convention, precision or
// schedule, a virtual pipeline without the interleaved schedule, or an EP that does not divide
// the model's experts.
Recipe parse_recipe(const YAML::Node& node, const std::string& source, const ModelSpec& model);

}  // namespace mfabric::workload::detail
