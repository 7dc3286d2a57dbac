// What the failure tests share (tests/config/failures_test.cpp, tests/sim/failures_test.cpp):
// a failures list from YAML on a default cluster, the field an error names, an mFabric of
// regions of four servers.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/failures.h"
#include "core/error.h"
#include "core/spec.h"
#include "fabric/builders.h"

namespace mfabric::testing {

inline std::vector<config::Failure> parse(const std::string& yaml) {
  return config::parse_failures(YAML::Load(yaml), "t.yaml", fabric::ClusterSpec{});
}

// The field an Error names, or "" when `fn` does not throw one.
template <typename Fn>
std::string error_field(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

inline fabric::Topology mfabric_fabric(int servers = 8) {
  fabric::ClusterSpec c;
  c.servers = servers;
  return fabric::build_fabric(Spec{"mfabric", {{"region", "4"}}}, c);
}

}  // namespace mfabric::testing
