// The experiment the packet-settings tests vary (tests/config/packet_settings_test.cpp and
// tests/sim/packet_settings_sim_test.cpp).
#pragma once

#include <string>

namespace mfabric::testing {

// Four hosts of one GPU and one 100G NIC: a 4160-byte packet (4096 + 64 header) takes 332.8 ns
// on every network link.
inline std::string packet_experiment(const std::string& simulation,
                                     const std::string& bytes = "1MiB") {
  return "cluster: {servers: 4, gpus_per_server: 1, nics_per_server: 1, link: 100G}\n"
         "fabric: fat-tree\n"
         "workload: {collective: all-to-all, bytes: " +
         bytes + ", group: all}\nsimulation: {backend: packet, " + simulation + "}\n";
}

}  // namespace mfabric::testing
