#include "fabric/ocs_params.h"

#include <fmt/format.h>

#include "core/error.h"

namespace mfabric::fabric {

const char* to_string(OcsOptics o) {
  return o == OcsOptics::CoPackaged ? "co-packaged" : "pluggable";
}

std::optional<OcsOptics> parse_ocs_optics(const std::string& name) {
  if (name == "pluggable") return OcsOptics::Pluggable;
  if (name == "co-packaged") return OcsOptics::CoPackaged;
  return std::nullopt;
}

const char* to_string(SwitchRule r) {
  switch (r) {
    case SwitchRule::WhenFaster:
      return "when-faster";
    case SwitchRule::Every:
      return "every";
    case SwitchRule::Always:
      break;
  }
  return "always";
}

std::optional<SwitchRule> parse_switch_rule(const std::string& name) {
  if (name == "always") return SwitchRule::Always;
  if (name == "when-faster") return SwitchRule::WhenFaster;
  if (name == "every") return SwitchRule::Every;
  return std::nullopt;
}

void check_alpha(int alpha, int nics) {
  if (nics < 2) {
    throw Error("", "alpha",
                fmt::format("mfabric needs at least 2 NICs per server (one on the EPS, one on the "
                            "OCS); nics_per_server is {}",
                            nics));
  }
  if (nics > kMaxPerServer) {
    throw Error("", "alpha",
                fmt::format("mfabric takes at most {} NICs per server; nics_per_server is {}",
                            kMaxPerServer, nics));
  }
  if (alpha < 1 || alpha > nics - 1) {
    throw Error(
        "", "alpha",
        fmt::format("must be between 1 and nics_per_server - 1 ({}), got {}", nics - 1, alpha));
  }
}

}  // namespace mfabric::fabric
