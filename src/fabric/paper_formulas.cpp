#include "fabric/paper_formulas.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace mfabric::fabric {

std::int64_t paper_uplinks(std::int64_t down_ports, double oversubscription) {
  // Dividing (rather than multiplying by 1/oversubscription) keeps exact quotients exact: 300 /
  // 3.0 is exactly 100, while 300 * (1 / 3.0) may land just above 100 and round up to 101. The
  // small slack covers ratios that are not exact in binary (e.g. 2.2).
  const double up = static_cast<double>(down_ports) / oversubscription;
  // Converting a double outside the int64 range is undefined; a ratio so small that the uplink
  // count leaves the range where doubles count exactly (2^53) is an input error, not a count.
  if (!(up <= 9007199254740992.0)) {
    throw Error("", "oversubscription",
                fmt::format("expected a positive down:up ratio such as 1 or 3, got {} (too small: "
                            "{} down ports would need {:g} uplinks)",
                            oversubscription, down_ports, up));
  }
  return static_cast<std::int64_t>(std::ceil(up - 1e-9 * up));
}

std::int64_t paper_fat_tree_switch_ports(std::int64_t edge_down, double oversubscription,
                                         bool core) {
  const std::int64_t edge_up = paper_uplinks(edge_down, oversubscription);
  const std::int64_t aggregation = 2 * edge_up;
  return edge_down + edge_up + aggregation + (core ? aggregation : 0);
}

std::int64_t paper_fibres_for(std::int64_t transceivers) {
  return (transceivers + 1) / 2;
}

BillOfMaterials paper_fat_tree_bill(std::int64_t nics, double oversubscription, bool core) {
  if (!(oversubscription > 0) || !std::isfinite(oversubscription)) {
    throw Error(
        "", "oversubscription",
        fmt::format("expected a positive down:up ratio such as 1 or 3, got {}", oversubscription));
  }
  BillOfMaterials bom;
  bom.nics = nics;
  bom.switch_ports = paper_fat_tree_switch_ports(nics, oversubscription, core);
  bom.transceivers = bom.switch_ports + nics;
  bom.fibres = paper_fibres_for(bom.transceivers);
  return bom;
}

}  // namespace mfabric::fabric
