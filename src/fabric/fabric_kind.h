// A fabric kind as a plug-in: everything mfabric knows about one kind of fabric lives in its own
// unit (src/fabric/kinds/<kind>.{h,cpp}) and is reached through this description, so that the
// cost model, the simulator, the collectives, `compare` and the reports ask the kind what it is
// and never compare its name. Adding a fabric is one new unit plus one line in the registry
// (fabric/fabric_kinds.cpp); docs/architecture.md, "Adding a fabric kind", walks through one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/spec.h"
#include "fabric/cost.h"
#include "fabric/topology.h"

namespace mfabric::fabric {

// One parameter of a fabric spec (NAME:key=value,...), for help and docs.
struct FabricParam {
  std::string name;
  std::string default_value;
  std::string meaning;  // with units
  // The registry whose names the value takes ("planner", "policy"): the help lists them from
  // there (the registries are above fabric/, so the kind cannot name them itself).
  std::string choices = {};
};

// What the layers above ask of a kind instead of its name.
struct FabricTraits {
  // Circuits are re-planned during training by a controller per region (mFabric): the runs of
  // such a fabric are the ones a comparison gives a verdict on.
  bool reconfigurable = false;
  // The all-to-all lowering that `all_to_all: auto` picks on this fabric (collective/lowering.h):
  // "direct", "pxn" (NCCL's default on rails), "proxy" (mFabric's 5-step all-to-all).
  std::string all_to_all = "direct";
  // The simulator's controller for this fabric (sim/fabric_controllers.h), by name: "mfabric"
  // (a region controller per OCS region), "topoopt" (one topology planned from the job, connected
  // before training); empty for a fabric nothing controls.
  std::string controller = {};
  // How reports and verdicts name the fabric ("fat-tree", "mFabric"); empty: the kind's name.
  std::string label = {};
  // A fabric whose regions each hold one expert-parallel group: the parameter that sets servers
  // per region ("region") and its value when the spec names none (at most the cluster's servers).
  std::string region_param = {};
  int default_region = 0;
  // Transfers are forwarded through other servers' NICs (TopoOpt's patch-panel topology): the
  // fast solver and coflows do not hold their bounds there (measured: docs/shortcuts.md), so
  // neither is used.
  bool host_forwarding = false;
  // The all-to-all algorithms a fair comparison tries on this fabric as a baseline, keeping the
  // fastest (compare's strongest baseline, docs/compare.md, "The strongest baseline"): the
  // electrical fabrics, on which an operator would pick NCCL's direct all-to-all, PXN or a
  // hierarchical one by what is fastest; empty: the fabric's own (`all_to_all`) only.
  std::vector<std::string> baseline_all_to_alls = {};
};

// What an electrical fabric's operator can choose between for its all-to-alls
// (FabricTraits::baseline_all_to_alls).
inline const std::vector<std::string>& electrical_all_to_alls() {
  static const std::vector<std::string> algorithms{"direct", "pxn", "hierarchical"};
  return algorithms;
}

// What the paper's cost formulas (docs/cost-model.md) take.
struct PaperCostInputs {
  int servers = 0;
  int nics_per_server = 0;
  int alpha = 0;                  // OCS NICs per server (mFabric)
  double oversubscription = 1.0;  // down:up, e.g. 3 for 3:1 (fat-tree, rail-optimized)
};

struct FabricKind {
  // Help and docs: the parameters a spec of this kind accepts.
  std::vector<FabricParam> params;
  FabricTraits traits;
  // Reads the kind's parameters from `spec` (Spec::finish refuses any other), checks each
  // (mfabric::Error naming it and what it expects), records them (Topology::set_param) and
  // builds the fabric on `t`, whose servers are already there.
  std::function<void(Spec& spec, Topology& t)> build;
  // The paper's formulas for this kind (paper and calculator conventions); null when they do not
  // cover it.
  std::function<BillOfMaterials(const PaperCostInputs&, CostConvention)> paper_formula = {};
  // A built topology's bill under the paper's formulas, by rate. Null: paper_formula over the
  // cluster at its link rate (with the oversubscription parameter, if the kind has one).
  std::function<std::vector<RatedBill>(const Topology&, CostConvention)> paper_bills = {};
  // Scales each item of the built count (NVL72: the spare GPUs' scale-out ports of each
  // domain); null: the count as built.
  std::function<std::int64_t(std::int64_t count, const Topology&)> scale_built_count = {};

  // traits.label, or `name` when it is empty.
  const std::string& label_or(const std::string& name) const {
    return traits.label.empty() ? name : traits.label;
  }
  bool takes(const std::string& param) const {
    for (const FabricParam& p : params) {
      if (p.name == param) return true;
    }
    return false;
  }
};

}  // namespace mfabric::fabric
