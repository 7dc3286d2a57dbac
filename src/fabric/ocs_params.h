// mFabric's optical parameters, typed (docs/cli.md, "Fabric names", mfabric; the optics' cost in
// docs/cost-model.md, the switching rule in docs/control-plane.md): read and checked once by the
// builder, carried on the Topology (Topology::ocs()), and read from there by the cost model and
// the control plane. The text of Topology::params() is written from them, for the outputs.
#pragma once

#include <optional>
#include <string>

#include "core/units.h"
#include "fabric/topology.h"

namespace mfabric::fabric {

// How the OCS NICs connect: pluggable transceivers, or optics co-packaged with the NIC (no NIC
// to buy for the OCS ports, docs/cost-model.md).
enum class OcsOptics { Pluggable, CoPackaged };
const char* to_string(OcsOptics o);
std::optional<OcsOptics> parse_ocs_optics(const std::string& name);  // nullopt: another name

// When a region puts a new plan up and what it switches: Always, the circuits that differ (a plan
// equal to the one in force costs nothing); WhenFaster, the same but only when the new plan
// saves more than the delay; Every, every circuit of the region for every new plan, identical or
// not, as the paper's own simulator does (docs/control-plane.md, "paper-sim").
enum class SwitchRule { Always, WhenFaster, Every };
const char* to_string(SwitchRule r);
std::optional<SwitchRule> parse_switch_rule(const std::string& name);  // nullopt: another name

// The most OCS NICs per server: every NIC of the largest server but the one on the EPS.
inline constexpr int kMaxAlpha = kMaxPerServer - 1;

// The one range of alpha: at least one NIC on the EPS (DP/PP traffic and the all-to-all
// fallback) and one on the OCS, so 1 <= alpha <= nics - 1 with 2 <= nics <= kMaxPerServer.
// mfabric::Error naming the field "alpha" otherwise.
void check_alpha(int alpha, int nics);

struct OcsParams {
  int alpha = 0;      // OCS NICs per server
  int region = 0;     // servers per region
  int ocs_ports = 0;  // ports per OCS device
  Time reconfiguration;
  Rate eps_link;  // the EPS NICs' and fat-tree's rate
  Rate ocs_link;  // the OCS NICs' and circuits' rate
  OcsOptics optics = OcsOptics::Pluggable;
  SwitchRule switching = SwitchRule::Always;
  // Names in the control plane's registries (control::planner_names(), the policies of sim/),
  // which the layers above fabric check when they make a controller (sim::make_control_plane).
  std::string planner;
  std::string policy;
};

}  // namespace mfabric::fabric
