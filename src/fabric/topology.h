// The physical fabric: servers (GPUs, NVSwitch, NICs), electrical switches, optical circuit
// switches (OCS) and patch panels, and the links between them. A Topology is plain data; the
// builders in builders.h make one from a FabricSpec, the cost model counts its bill of materials,
// and (later) the network backends turn its links into channels.
//
// Conventions:
//  - Node ids and link ids are dense indices into nodes() and links().
//  - A Link is one full-duplex physical connection (a cable, or an internal server path);
//    backends model each direction separately.
//  - Inside a server: each GPU has an NvLink link to the server's NVSwitch node at the NVSwitch
//    bandwidth, and a Pcie link to its NIC(s) at the NIC link rate with zero latency.
//    With n NICs and g GPUs per server: if n is a multiple of g, NIC j hangs off GPU j mod g;
//    else if n > g, off GPU floor(j*g/n); otherwise GPU k uses NIC floor(k*n/g). A builder may
//    give some NICs another rate (set_nic_rate: mFabric's eps_link and ocs_link); a NIC's
//    cable then has its rate too.
//  - NICs are split evenly over numa() NUMA nodes: NIC j is on NUMA node floor(j*numa/n).
//  - Every Cable link is a fibre with transceivers at its electrical ends (NIC, switch); OCS and
//    patch-panel ends are passive.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/units.h"

namespace mfabric::fabric {

struct OcsParams;  // fabric/ocs_params.h

using NodeId = std::int32_t;
using LinkId = std::int32_t;
inline constexpr NodeId kNoNode = -1;

enum class NodeKind { Gpu, NvSwitch, Nic, Switch, Ocs, PatchPanel };
// Where a NIC's cable goes.
enum class NicRole { None, Eps, Ocs, PatchPanel };
enum class LinkKind { NvLink, Pcie, Cable };

const char* to_string(NodeKind k);
const char* to_string(NicRole r);
const char* to_string(LinkKind k);

struct Node {
  NodeKind kind = NodeKind::Gpu;
  int server = -1;  // Gpu, NvSwitch, Nic: the server; -1 otherwise
  int index = 0;    // Gpu/Nic: local index in the server; Switch: index among the switches of
                    // its tier; Ocs/PatchPanel: index among nodes of that kind
  NicRole role = NicRole::None;  // Nic only
  int numa = -1;                 // Nic only
  int tier = 0;                  // Switch: 1 = leaf/edge, 2 = spine/aggregation, 3 = core
  int group = -1;                // Switch: rail (rail fabrics) or pod; Nic on an OCS: its region
  int radix = 0;                 // Switch: ports available; Ocs/PatchPanel: ports available
};

struct Link {
  NodeId a = kNoNode;
  NodeId b = kNoNode;
  Rate rate;
  Time latency;
  LinkKind kind = LinkKind::Cable;
};

// The OCS ports a region owns: ports [first_port, first_port + ports) of OCS `ocs`, and the
// servers [first_server, first_server + servers). Circuits may only join NICs of one region.
struct Region {
  int id = 0;
  int first_server = 0;
  int servers = 0;
  NodeId ocs = kNoNode;
  int first_port = 0;
  int ports = 0;
};

// Ranges of ClusterSpec (docs/experiment.md): wide enough for any real cluster, narrow enough
// that the topology fits in memory and transfer times fit the picosecond clock.
inline constexpr int kMaxServers = 65536;
inline constexpr int kMaxPerServer = 1024;
inline constexpr Rate kMinLinkRate = Rate::bits_per_second(1e6);   // 1 Mbps
inline constexpr Rate kMaxLinkRate = Rate::bits_per_second(1e15);  // 1 Pbps
inline constexpr Time kMaxLinkLatency = Time::milliseconds(1000);
// Ports of one electrical switch (radix) or OCS device: 4x the largest on sale (512-port switch
// ASICs, 1,008-port OCS); beyond it a "switch" is no device and its bill of materials means
// nothing.
inline constexpr int kMaxSwitchPorts = 4096;
// The default limit on a topology's estimated memory (the experiment's simulation.max_memory
// and --max-memory replace it), as for a job (workload::kDefaultMaxJobMemory).
inline constexpr std::int64_t kDefaultMaxTopologyMemory = std::int64_t{8} << 30;  // 8 GiB

struct ClusterSpec {
  int servers = 128;
  int gpus_per_server = 8;
  int nics_per_server = 8;
  int numa_nodes = 0;  // 0 = automatic: 2, or 1 with a single NIC per server
  // The NUMA node count in force (numa_nodes, or the automatic choice).
  int numa() const { return numa_nodes > 0 ? numa_nodes : (nics_per_server >= 2 ? 2 : 1); }
  Rate link = Rate::gbps(400);
  Time link_latency = Time::microseconds(1);
  Rate nvswitch = Rate::bytes_per_second(900e9);  // per GPU, each direction

  // Throws mfabric::Error naming the field on out-of-range values.
  void validate() const;
};

// Memory a topology of `cluster` takes at most, whatever the fabric: its nodes (GPUs, NVSwitch,
// NICs, and switches up to one per host NIC), its links (NVLink, PCIe, up to three cables per
// NIC for three tiers) and their adjacency lists, estimated before anything is built.
std::int64_t estimate_topology_bytes(const ClusterSpec& cluster);

class Topology {
 public:
  // kind: "fat-tree", "mfabric", ...; spec: the canonical text the user gave
  // ("fat-tree:oversubscription=3").
  Topology(std::string kind, std::string spec, ClusterSpec cluster);

  // --- construction (used by builders) ---
  NodeId add_node(const Node& node);
  LinkId add_link(NodeId a, NodeId b, Rate rate, Time latency, LinkKind kind);
  // Adds GPUs, an NVSwitch and NICs for every server, with their internal links. NIC roles
  // start as None; builders set them with set_nic_role().
  void add_servers();
  void set_nic_role(NodeId nic, NicRole role);
  // The NIC's rate: its PCIe link(s) to its GPU(s); builders give its cable the same rate.
  void set_nic_rate(NodeId nic, Rate rate);
  void set_group(NodeId node, int group);
  void add_region(const Region& r) { regions_.push_back(r); }
  void set_tiers(int tiers) { tiers_ = tiers; }
  void set_circuit_degree(int d) { circuit_degree_ = d; }
  // mFabric's optical parameters (fabric/ocs_params.h), checked by the builder.
  void set_ocs(const OcsParams& ocs);
  // Records a builder parameter with its resolved value (defaults included), as text.
  void set_param(const std::string& key, const std::string& value) { params_[key] = value; }

  // --- queries ---
  const std::string& kind() const { return kind_; }
  const std::string& spec() const { return spec_; }
  // Every builder parameter with its resolved value, e.g. {"oversubscription": "3", "radix": "64"}.
  const std::map<std::string, std::string>& params() const { return params_; }
  // A resolved parameter as a number; throws if the builder did not record it.
  double param_number(const std::string& key) const;
  const ClusterSpec& cluster() const { return cluster_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Node& node(NodeId id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const Link& link(LinkId id) const { return links_[static_cast<std::size_t>(id)]; }
  // Links attached to a node.
  const std::vector<LinkId>& links_of(NodeId id) const {
    return adjacency_[static_cast<std::size_t>(id)];
  }
  NodeId other_end(LinkId l, NodeId from) const;

  NodeId gpu(int server, int local) const;
  NodeId nic(int server, int local) const;
  // The rate of a NIC (its PCIe link): the cluster's link rate unless the builder set another.
  Rate nic_rate(NodeId nic) const;
  NodeId nvswitch(int server) const;

  int count(NodeKind kind) const;
  // Electrical switching tiers (0 when the fabric has no electrical switch).
  int tiers() const { return tiers_; }
  const std::vector<Region>& regions() const { return regions_; }
  // Optical links per server that a circuit plan may use (TopoOpt: all NICs; mFabric: alpha).
  int circuit_degree() const;
  // OCS switching time; zero for fabrics without an OCS.
  Time reconfiguration_delay() const;
  // mFabric's optical parameters; null for fabrics without an OCS.
  const OcsParams* ocs() const { return ocs_.get(); }

  // "s3.gpu5", "s3.nic1", "s3.nvswitch", "leaf12", "spine3" (or "agg3" in a 3-tier fabric),
  // "core7", "ocs0", "panel0".
  std::string name(NodeId id) const;

 private:
  std::string kind_;
  std::string spec_;
  std::map<std::string, std::string> params_;
  ClusterSpec cluster_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> adjacency_;
  std::vector<Region> regions_;
  // First node id of each server's block: [gpus..., nvswitch, nics...].
  std::vector<NodeId> server_base_;
  int tiers_ = 0;
  int circuit_degree_ = 0;
  std::shared_ptr<const OcsParams> ocs_;  // shared: a Topology is copied, its OCS never changes
};

}  // namespace mfabric::fabric
