#include "config/failures.h"

#include <fmt/format.h>

#include <yaml-cpp/yaml.h>
#include <map>

#include <algorithm>

#include "core/error.h"
#include "core/yaml_fields.h"

namespace mfabric::config {
namespace {

const std::vector<std::string> kFailureFields = {"kind", "server", "index", "at"};

bool has_ocs(const fabric::Topology& t) {
  return !t.regions().empty();
}

}  // namespace

std::string failure_field(std::size_t k) {
  return fmt::format("failures[{}]", k);
}

int first_ocs_nic(const fabric::Topology& t) {
  return t.cluster().nics_per_server - t.circuit_degree();
}

const char* to_string(FailureKind k) {
  switch (k) {
    case FailureKind::Nic:
      return "nic";
    case FailureKind::OcsPort:
      return "ocs-port";
    case FailureKind::Gpu:
      return "gpu";
    case FailureKind::Server:
      return "server";
  }
  return "?";
}

std::vector<Failure> parse_failures(const YAML::Node& node, const std::string& source,
                                    const fabric::ClusterSpec& cluster) {
  if (!node.IsSequence()) {
    throw Error(source, "failures",
                fmt::format("expected a list such as [{{kind: nic, server: 3, index: 0, at: "
                            "start}}], got {}",
                            describe(node)));
  }
  // Each part fails at most once, so a longer list is wrong before any entry is read.
  const std::int64_t parts =
      std::int64_t{cluster.servers} * (1 + cluster.gpus_per_server + cluster.nics_per_server);
  if (static_cast<std::int64_t>(node.size()) > parts) {
    throw Error(source, "failures",
                fmt::format("lists {} failures, more than the {} parts of the cluster (servers, "
                            "GPUs and NICs) that can fail, each once",
                            node.size(), parts));
  }
  std::vector<Failure> out;
  out.reserve(node.size());
  std::size_t k = 0;
  for (const YAML::Node& item : node) {
    const Fields f(item, source, failure_field(k++), kFailureFields);
    Failure x;
    if (!f.has("kind")) {
      throw Error(source, f.field("kind"), "is required: one of nic, ocs-port, gpu, server");
    }
    const std::string kind = *f.optional_string("kind");
    if (kind == "nic") {
      x.kind = FailureKind::Nic;
    } else if (kind == "ocs-port") {
      x.kind = FailureKind::OcsPort;
    } else if (kind == "gpu") {
      x.kind = FailureKind::Gpu;
    } else if (kind == "server") {
      x.kind = FailureKind::Server;
    } else {
      throw Error(source, f.field("kind"),
                  fmt::format("unknown kind '{}' (known: nic, ocs-port, gpu, server)", kind));
    }
    x.server = f.required_int("server");
    if (x.server < 0) {
      throw Error(source, f.field("server"),
                  fmt::format("must be a server number, 0 or more, got {}", x.server));
    }
    if (x.kind == FailureKind::Server) {
      if (f.has("index")) {
        throw Error(source, f.field("index"),
                    "does not apply to a server failure (the whole server fails)");
      }
    } else {
      if (!f.has("index")) {
        throw Error(source, f.field("index"),
                    fmt::format("is required: the {} within the server, from 0",
                                x.kind == FailureKind::Gpu       ? "GPU"
                                : x.kind == FailureKind::OcsPort ? "OCS port"
                                                                 : "NIC"));
      }
      x.index = f.required_int("index");
      if (x.index < 0) {
        throw Error(source, f.field("index"), fmt::format("must be 0 or more, got {}", x.index));
      }
    }
    if (f.has("at") && f.optional_string("at") != "start") {
      const Time t = *f.optional_time("at");
      if (t < Time::zero()) {
        throw Error(source, f.field("at"),
                    fmt::format("must be 'start' or a time of 0 or more, got {}", to_string(t)));
      }
      x.at = t;
    }
    out.push_back(x);
  }
  return out;
}

void check_failures(const std::vector<Failure>& failures, const fabric::Topology& topology,
                    const std::string& source) {
  const fabric::ClusterSpec& c = topology.cluster();
  std::vector<int> server_failed(static_cast<std::size_t>(c.servers), -1);
  // (server, local index) -> k; maps, so that a long list is checked in n log n, not n^2.
  std::map<std::pair<int, int>, std::size_t> nics_seen;
  std::map<std::pair<int, int>, std::size_t> gpus_seen;
  for (std::size_t k = 0; k < failures.size(); ++k) {
    const Failure& f = failures[k];
    const std::string at = failure_field(k);
    if (f.server >= c.servers) {
      throw Error(source, at + ".server",
                  fmt::format("server {} does not exist: the cluster has servers 0 to {}", f.server,
                              c.servers - 1));
    }
    if (f.at && (f.kind == FailureKind::Gpu || f.kind == FailureKind::Server)) {
      throw Error(source, at + ".at",
                  fmt::format("a {} fails at 'start' only: one that fails mid-run stops the job, "
                              "which resumes from its last checkpoint with a spare in its place; "
                              "a run with the failure at start simulates that (got {})",
                              to_string(f.kind), to_string(*f.at)));
    }
    switch (f.kind) {
      case FailureKind::Nic:
        if (f.index >= c.nics_per_server) {
          throw Error(source, at + ".index",
                      fmt::format("NIC {} does not exist: servers have NICs 0 to {}", f.index,
                                  c.nics_per_server - 1));
        }
        if (topology.node(topology.nic(f.server, f.index)).role == fabric::NicRole::PatchPanel) {
          throw Error(source, at + ".kind",
                      "a NIC on a patch panel (TopoOpt) cannot fail in a run: TopoOpt plans its "
                      "topology once and has no controller to replan around it");
        }
        break;
      case FailureKind::OcsPort:
        if (!has_ocs(topology)) {
          throw Error(
              source, at + ".kind",
              fmt::format("fabric {} has no OCS ports (only mfabric has)", topology.spec()));
        }
        if (f.index >= topology.circuit_degree()) {
          throw Error(
              source, at + ".index",
              fmt::format("OCS port {} does not exist: servers have OCS ports 0 to {} "
                          "(alpha = {})",
                          f.index, topology.circuit_degree() - 1, topology.circuit_degree()));
        }
        break;
      case FailureKind::Gpu:
        if (f.index >= c.gpus_per_server) {
          throw Error(source, at + ".index",
                      fmt::format("GPU {} does not exist: servers have GPUs 0 to {}", f.index,
                                  c.gpus_per_server - 1));
        }
        break;
      case FailureKind::Server:
        break;
    }
  }
  // Each part fails once, and not also through its server or GPU.
  for (std::size_t k = 0; k < failures.size(); ++k) {
    if (failures[k].kind == FailureKind::Server) {
      const int s = failures[k].server;
      if (server_failed[static_cast<std::size_t>(s)] >= 0) {
        throw Error(source, failure_field(k),
                    fmt::format("server {} already fails in failures[{}]", s,
                                server_failed[static_cast<std::size_t>(s)]));
      }
      server_failed[static_cast<std::size_t>(s)] = static_cast<int>(k);
    }
  }
  for (std::size_t k = 0; k < failures.size(); ++k) {
    const Failure& f = failures[k];
    if (f.kind == FailureKind::Server) continue;
    if (const int s = server_failed[static_cast<std::size_t>(f.server)]; s >= 0) {
      throw Error(source, failure_field(k),
                  fmt::format("server {} fails as a whole in failures[{}], with all its parts",
                              f.server, s));
    }
    if (f.kind == FailureKind::Gpu) {
      if (const auto [it, fresh] = gpus_seen.try_emplace({f.server, f.index}, k); !fresh) {
        throw Error(source, failure_field(k),
                    fmt::format("GPU {} of server {} already fails in failures[{}]", f.index,
                                f.server, it->second));
      }
      continue;
    }
    const int nic = f.kind == FailureKind::OcsPort ? first_ocs_nic(topology) + f.index : f.index;
    if (const auto [it, fresh] = nics_seen.try_emplace({f.server, nic}, k); !fresh) {
      throw Error(source, failure_field(k),
                  fmt::format("NIC {} of server {} (its OCS port) already fails in "
                              "failures[{}]",
                              nic, f.server, it->second));
    }
  }
  // A GPU's failure takes its NICs with it (failed_nics): a failure of one of them as well is
  // the same part twice.
  for (const auto& [gpu, k] : gpus_seen) {
    for (const fabric::NodeId n : failed_nics(failures[k], topology)) {
      const int local = topology.node(n).index;
      if (const auto it = nics_seen.find({gpu.first, local}); it != nics_seen.end()) {
        throw Error(source, failure_field(it->second),
                    fmt::format("NIC {} of server {} already fails with its GPU {} in "
                                "failures[{}]",
                                local, gpu.first, gpu.second, k));
      }
    }
  }
}

std::vector<fabric::NodeId> failed_nics(const Failure& f, const fabric::Topology& topology) {
  const fabric::ClusterSpec& c = topology.cluster();
  switch (f.kind) {
    case FailureKind::Nic:
      return {topology.nic(f.server, f.index)};
    case FailureKind::OcsPort:
      return {topology.nic(f.server, first_ocs_nic(topology) + f.index)};
    case FailureKind::Gpu: {
      std::vector<fabric::NodeId> out;
      const fabric::NodeId gpu = topology.gpu(f.server, f.index);
      for (const fabric::LinkId l : topology.links_of(gpu)) {
        if (topology.link(l).kind == fabric::LinkKind::Pcie)
          out.push_back(topology.other_end(l, gpu));
      }
      return out;
    }
    case FailureKind::Server: {
      std::vector<fabric::NodeId> out;
      for (int j = 0; j < c.nics_per_server; ++j)
        out.push_back(topology.nic(f.server, j));
      return out;
    }
  }
  return {};
}

}  // namespace mfabric::config
