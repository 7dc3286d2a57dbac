// Step 5 of Algorithm 1: circuits on NICs -> the region's OCS port configuration -> the
// cross-connect commands that move the OCS from its current configuration to the new one
// (docs/control-plane.md).
//
// One OCS port per OCS NIC, full duplex (as fabric::build_mfabric cables them, and as the paper
// counts ports: 48 per region of 8 servers x 6): a circuit is one cross-connect of two ports.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "control/nic_mapping.h"

namespace mfabric::control {

// Where a region's OCS NICs land on its OCS: server s's k-th OCS NIC (local NIC
// nics - alpha + k) on port first_port + s * alpha + k, servers region-local.
struct RegionPorts {
  int first_port = 0;
  int servers = 1;
  ServerNics nics;

  int port(int server, int nic) const {
    return first_port + server * nics.alpha + (nic - nics.first_ocs_nic());
  }
  int ports() const { return servers * nics.alpha; }
};

// Which OCS port is cross-connected to which.
class OcsConfiguration {
 public:
  // `ports` ports, none connected. mfabric::Error unless 0 <= ports <= kMaxOcsPorts.
  explicit OcsConfiguration(int ports = 0);

  int ports() const { return static_cast<int>(peer_.size()); }
  // The port cross-connected to `port`, or -1.
  int peer(int port) const { return peer_[static_cast<std::size_t>(port)]; }
  // mfabric::Error (field "ports") unless a != b are both in range and unconnected.
  void connect(int a, int b);
  // Connections as (a, b) with a < b, in increasing a.
  std::vector<std::pair<int, int>> connections() const;
  bool operator==(const OcsConfiguration&) const = default;

 private:
  std::vector<int> peer_;
};

// Ports an OcsConfiguration may have: far above any OCS (Table 2's largest has 1008).
inline constexpr int kMaxOcsPorts = 1 << 20;

// The configuration of an OCS of `ocs_ports` ports holding `circuits`, placed by `region`.
// mfabric::Error when a NIC is not an OCS NIC of its server, a server is outside the region, the
// region's ports do not fit the OCS, or two circuits share a NIC.
OcsConfiguration configuration_of(const std::vector<PortCircuit>& circuits,
                                  const RegionPorts& region, int ocs_ports);

struct CrossConnect {
  enum class Action { Disconnect, Connect };
  Action action = Action::Connect;
  int a = 0;  // a < b
  int b = 0;
  bool operator==(const CrossConnect&) const = default;
};

// The commands that turn `from` into `to`, touching only what changed: every connection of
// `from` that `to` does not hold is disconnected, then every connection of `to` that `from` does
// not hold is connected (disconnects first, so that a port is free before it is connected
// again); each group in increasing port order. mfabric::Error when the port counts differ.
std::vector<CrossConnect> reconfiguration(const OcsConfiguration& from, const OcsConfiguration& to);

// How commands are written. Placeholders: {a} and {b}, the two ports of the cross-connect as
// numbered by the device (port + port_base), and {ctag}, a correlation tag counting up from
// first_ctag; "{{" and "}}" stand for braces. Defaults: Polatis TL1 (ENT-PATCH joins two ports,
// DLT-PATCH on one port of a patch removes it), ports numbered from 1.
struct Tl1Syntax {
  std::string connect = "ENT-PATCH::{a},{b}:{ctag}:;";
  std::string disconnect = "DLT-PATCH::{a}:{ctag}:;";
  int port_base = 1;
  int first_ctag = 1;
};

// One command line per cross-connect. mfabric::Error (field "tl1.connect" or
// "tl1.disconnect") naming an unknown placeholder or an unmatched brace.
std::vector<std::string> tl1_commands(const std::vector<CrossConnect>& changes,
                                      const Tl1Syntax& syntax = {});

}  // namespace mfabric::control
