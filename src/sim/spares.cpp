#include "sim/spares.h"

#include <fmt/format.h>

#include <string>

#include "core/error.h"

namespace mfabric::sim {
namespace {

// The region of a server on mFabric, -1 elsewhere.
int region_of_server(const fabric::Topology& t, int server) {
  if (t.regions().empty()) return -1;
  return server / t.regions().front().servers;
}

}  // namespace

SparePlacement place_spares(const std::vector<config::Failure>& failures,
                            const fabric::Topology& topology, int job_gpus,
                            const std::string& source) {
  const fabric::ClusterSpec& c = topology.cluster();
  const int per = c.gpus_per_server;
  const int all = c.servers * per;
  SparePlacement p;
  p.gpu_of.resize(static_cast<std::size_t>(job_gpus));
  for (int g = 0; g < job_gpus; ++g)
    p.gpu_of[static_cast<std::size_t>(g)] = g;
  // A GPU is free when the job does not use it and it has not failed.
  std::vector<bool> free(static_cast<std::size_t>(all), false);
  for (int g = job_gpus; g < all; ++g)
    free[static_cast<std::size_t>(g)] = true;
  for (const config::Failure& f : failures) {
    if (f.kind == config::FailureKind::Gpu)
      free[static_cast<std::size_t>(f.server * per + f.index)] = false;
    if (f.kind == config::FailureKind::Server) {
      for (int k = 0; k < per; ++k)
        free[static_cast<std::size_t>(f.server * per + k)] = false;
    }
  }
  const auto server_free = [&](int s) {
    for (int k = 0; k < per; ++k) {
      if (!free[static_cast<std::size_t>(s * per + k)]) return false;
    }
    return true;
  };
  const auto move = [&](std::size_t k, int from, int to) {
    free[static_cast<std::size_t>(to)] = false;
    if (from < job_gpus) {
      p.gpu_of[static_cast<std::size_t>(from)] = to;
      p.moves.push_back({static_cast<int>(k), from, to});
    }
  };
  const std::string idle_hint = fmt::format(
      "the job uses {} of the cluster's {} GPUs; give the cluster more servers than the job "
      "needs (cluster.servers) and workload.dp, so that some are left as spares",
      job_gpus, all);
  // Servers first, so that a whole idle server is not taken apart by a GPU's spare before.
  for (std::size_t k = 0; k < failures.size(); ++k) {
    const config::Failure& f = failures[k];
    if (f.kind != config::FailureKind::Server) continue;
    if (f.server * per >= job_gpus) continue;  // an idle server: nothing to move
    const int region = region_of_server(topology, f.server);
    int spare = -1;
    for (int pass = 0; pass < 2 && spare < 0; ++pass) {
      for (int s = 0; s < c.servers && spare < 0; ++s) {
        if (pass == 0 && (region < 0 || region_of_server(topology, s) != region)) continue;
        if (server_free(s)) spare = s;
      }
    }
    if (spare < 0) {
      throw Error(source, config::failure_field(k),
                  fmt::format("server {} fails and no whole server is idle to take its ranks: {}",
                              f.server, idle_hint));
    }
    for (int j = 0; j < per; ++j)
      move(k, f.server * per + j, spare * per + j);
  }
  for (std::size_t k = 0; k < failures.size(); ++k) {
    const config::Failure& f = failures[k];
    if (f.kind != config::FailureKind::Gpu) continue;
    const int from = f.server * per + f.index;
    if (from >= job_gpus) continue;
    const int region = region_of_server(topology, f.server);
    int spare = -1;
    for (int pass = 0; pass < 2 && spare < 0; ++pass) {
      for (int g = 0; g < all && spare < 0; ++g) {
        if (pass == 0 && (region < 0 || region_of_server(topology, g / per) != region)) continue;
        if (free[static_cast<std::size_t>(g)]) spare = g;
      }
    }
    if (spare < 0) {
      throw Error(source, config::failure_field(k),
                  fmt::format("GPU {} of server {} fails and no GPU is idle to take its rank: {}",
                              f.index, f.server, idle_hint));
    }
    move(k, from, spare);
  }
  return p;
}

}  // namespace mfabric::sim
