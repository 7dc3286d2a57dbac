// Optical circuits (docs/network.md, "Circuits"): links that appear and disappear between NICs
// on one optical switch (an mFabric region's OCS, TopoOpt's patch panel). A backend that models
// them offers this interface through Backend::circuits(); it is in NICs and links only, so the
// network layer knows nothing of regions or controllers.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "fabric/topology.h"

namespace mfabric::net {

class Circuits {
 public:
  virtual ~Circuits() = default;

  // Joins two NICs on one optical switch with a circuit that is up at once; returns its link id
  // (net/link_table.h). mfabric::Error for NICs that cannot be joined.
  virtual fabric::LinkId connect(fabric::NodeId nic_a, fabric::NodeId nic_b) = 0;
  // Tears a circuit down. Transfers crossing it pause: they keep the bytes they have left and
  // move nothing until resume_paused().
  virtual void disconnect(fabric::LinkId circuit) = 0;
  // Routes every paused transfer again over what is up now (new circuits or the electrical
  // fabric) and lets it go on.
  virtual void resume_paused() = 0;
  // The same for the paused transfers with either end on a server of one of these NICs (the
  // NICs whose circuits just came up; a transfer relayed for a server cut off from the EPS has
  // only one end there). In the order they paused.
  virtual void resume_paused(std::span<const fabric::NodeId> nics) = 0;
  virtual std::size_t paused_transfers() const = 0;
  // Moves the active transfers whose source GPU is on a server of one of these NICs to a
  // strictly cheaper route where one is up now (new circuits: bytes that went over the
  // electrical fabric while they switched move onto them). Bytes already sent stay sent.
  virtual void reroute(std::span<const fabric::NodeId> nics) = 0;
  // The NIC at the other end of the circuit at `nic`, or kNoNode.
  virtual fabric::NodeId circuit_peer(fabric::NodeId nic) const = 0;
};

// One flag per server of the topology: whether one of these NICs is on it. mfabric::Error for
// a node that is not a NIC.
std::vector<bool> servers_of_nics(const fabric::Topology& topology,
                                  std::span<const fabric::NodeId> nics);

}  // namespace mfabric::net
