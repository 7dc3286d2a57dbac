// The collective lowerings by name: one line each (a new algorithm is a Lowering in its own
// file, collective/<name>.cpp, plus a line here).
#include <memory>

#include "collective/lowering.h"
#include "collective/lowering_impl.h"

namespace mfabric::collective {

LoweringRegistry& lowerings() {
  static LoweringRegistry registry(
      "collective algorithm",
      {
          {"ring", "pipelined ring (NCCL's chunked ring): all-reduce, reduce-scatter, all-gather",
           make_as<Lowering, detail::RingLowering>},
          {"hierarchical",
           "two levels: NVSwitch inside servers, rings (all-reduce) or a rail-aligned exchange "
           "(all-to-all) across them",
           make_as<Lowering, detail::HierarchicalLowering>},
          {"direct", "all-to-all(v) as one transfer per GPU pair; the router picks each path",
           make_as<Lowering, detail::DirectLowering>},
          {"proxy",
           "mFabric's 5-step all-to-all(v): gather to the GPUs whose NICs reach each destination "
           "server (a circuit, else the EPS), exchange, scatter",
           make_as<Lowering, detail::ProxyLowering>},
          {"pxn",
           "NCCL's PXN all-to-all(v): bytes move to the sender's GPU on the destination's rail "
           "over the NVSwitch first",
           make_as<Lowering, detail::PxnLowering>},
      });
  return registry;
}

std::vector<std::string> lowering_names() {
  return lowerings().names();
}

std::unique_ptr<Lowering> make_lowering(const std::string& name) {
  return lowerings().at(name).factory();
}

}  // namespace mfabric::collective
