// What a lowering may know of the optical circuits that are up when a collective starts: the
// proxy all-to-all (docs/collectives.md) sends each server's traffic for another server through
// the GPUs whose NICs have a circuit to it. The network backend owns the circuits; the engine
// hands a view of them to the lowering.
#pragma once

#include "fabric/topology.h"

namespace mfabric::collective {

class CircuitView {
 public:
  virtual ~CircuitView() = default;
  // The NIC at the other end of the circuit at `nic`, or fabric::kNoNode when it has none.
  virtual fabric::NodeId circuit_peer(fabric::NodeId nic) const = 0;
  // False for a GPU or NIC that has failed (config/failures.h): a lowering never picks it as a
  // proxy.
  virtual bool usable(fabric::NodeId /*node*/) const { return true; }
};

}  // namespace mfabric::collective
