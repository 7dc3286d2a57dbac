// Rank layout: gpu = tp + TP x (ep + EP x (dp + DP x pp)). See parallelism.h and
// docs/workload.md, "Rank layout".
#include "workload/parallelism.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/error.h"

namespace mfabric::workload {

RankLayout::RankLayout(const ParallelismSpec& p, const ModelSpec& model, int gpus_per_server,
                       int gpus)
    : p_(p), gpus_per_server_(gpus_per_server), layers_(model.layers) {
  const auto positive = [](const char* field, int value, const char* what) {
    if (value < 1) {
      throw Error("", field, fmt::format("expected a positive {}, got {}", what, value));
    }
  };
  positive("tp", p.tp, "tensor-parallel degree");
  positive("pp", p.pp, "pipeline-parallel degree");
  positive("ep", p.ep, "expert-parallel degree");
  positive("dp", p.dp, "data-parallel degree");
  positive("gpus_per_server", gpus_per_server, "number of GPUs per server");
  if (gpus < 0) throw Error("", "gpus", fmt::format("expected a GPU count >= 0, got {}", gpus));

  // TP all-reduces are meant for NVLink: a TP group never spans servers.
  if (gpus_per_server % p.tp != 0) {
    throw Error("", "tp",
                fmt::format("tp {} must divide the {} GPUs per server (TP stays inside a server)",
                            p.tp, gpus_per_server));
  }
  // An EP group x TP is mFabric's region: whole servers, or a share of one server.
  const std::int64_t ep_tp = std::int64_t{p.ep} * p.tp;
  if (ep_tp % gpus_per_server != 0 && gpus_per_server % ep_tp != 0) {
    throw Error("", "ep",
                fmt::format("ep x tp = {} x {} = {} GPUs must be a multiple or a divisor of the {} "
                            "GPUs per server (an EP group fills whole servers or shares one)",
                            p.ep, p.tp, ep_tp, gpus_per_server));
  }
  if (model.experts % p.ep != 0) {
    throw Error(
        "", "ep",
        fmt::format("ep {} must divide the {} experts of {}", p.ep, model.experts, model.name));
  }
  if (p.pp > model.layers) {
    throw Error("", "pp",
                fmt::format("pp {} exceeds the {} layers of {} (every stage needs a layer)", p.pp,
                            model.layers, model.name));
  }
  const std::int64_t product = ep_tp * p.pp * p.dp;
  if (product > INT_MAX) {
    throw Error("", "gpus",
                fmt::format("tp x pp x ep x dp = {} x {} x {} x {} is too many GPUs", p.tp, p.pp,
                            p.ep, p.dp));
  }
  if (gpus > 0 && product != gpus) {
    throw Error("", "gpus",
                fmt::format("tp x pp x ep x dp = {} x {} x {} x {} = {} must equal the {} GPUs",
                            p.tp, p.pp, p.ep, p.dp, product, gpus));
  }
}

ParallelismSpec resolve_parallelism(int tp, int pp, int ep, std::optional<int> dp, int gpus,
                                    const ModelSpec& model, int gpus_per_server) {
  if (dp && *dp < 1) {
    throw Error("", "dp", fmt::format("expected a positive data-parallel degree, got {}", *dp));
  }
  if (gpus < 0) throw Error("", "gpus", fmt::format("must be at least 1, got {}", gpus));
  // The degrees on their own, with one replica.
  RankLayout one_replica(ParallelismSpec{.tp = tp, .pp = pp, .ep = ep, .dp = 1}, model,
                         gpus_per_server);
  const std::int64_t per_replica = std::int64_t{tp} * pp * ep;
  if (gpus == 0) {
    if (!dp)
      throw Error("", "gpus", "give the number of GPUs (or dp) so that the job size is known");
  } else if (dp) {
    if (per_replica * *dp != gpus) {
      throw Error("", "dp",
                  fmt::format("dp x tp x pp x ep = {} x {} x {} x {} = {} GPUs, but the job has {}",
                              *dp, tp, pp, ep, per_replica * *dp, gpus));
    }
  } else if (gpus % per_replica != 0) {
    throw Error("", "gpus",
                fmt::format("{} GPUs are not a multiple of tp x pp x ep = {} x {} x {} = {}, so "
                            "they cannot be split into data-parallel replicas",
                            gpus, tp, pp, ep, per_replica));
  }
  const ParallelismSpec p{
      .tp = tp, .pp = pp, .ep = ep, .dp = dp ? *dp : static_cast<int>(gpus / per_replica)};
  RankLayout all(p, model, gpus_per_server);  // the product's range
  return p;
}

int RankLayout::gpu(const RankCoord& c) const {
  if (c.tp < 0 || c.tp >= p_.tp || c.ep < 0 || c.ep >= p_.ep || c.dp < 0 || c.dp >= p_.dp ||
      c.pp < 0 || c.pp >= p_.pp) {
    throw Error("", "rank",
                fmt::format("coordinate (tp {}, ep {}, dp {}, pp {}) is outside tp {} x ep {} x "
                            "dp {} x pp {}",
                            c.tp, c.ep, c.dp, c.pp, p_.tp, p_.ep, p_.dp, p_.pp));
  }
  return c.tp + p_.tp * (c.ep + p_.ep * (c.dp + p_.dp * c.pp));
}

RankCoord RankLayout::coord(int gpu) const {
  if (gpu < 0 || gpu >= gpus()) {
    throw Error("", "gpu", fmt::format("GPU {} is outside 0..{}", gpu, gpus() - 1));
  }
  RankCoord c;
  c.tp = gpu % p_.tp;
  gpu /= p_.tp;
  c.ep = gpu % p_.ep;
  gpu /= p_.ep;
  c.dp = gpu % p_.dp;
  c.pp = gpu / p_.dp;
  return c;
}

std::vector<int> RankLayout::tp_group(int gpu_id) const {
  RankCoord c = coord(gpu_id);
  std::vector<int> out;
  for (c.tp = 0; c.tp < p_.tp; ++c.tp)
    out.push_back(gpu(c));
  return out;
}

std::vector<int> RankLayout::ep_group(int gpu_id) const {
  RankCoord c = coord(gpu_id);
  std::vector<int> out;
  for (c.ep = 0; c.ep < p_.ep; ++c.ep)
    out.push_back(gpu(c));
  return out;
}

std::vector<int> RankLayout::dense_dp_group(int gpu_id) const {
  RankCoord c = coord(gpu_id);
  std::vector<int> out;
  // dp outer, ep inner: ascending GPU ids, since ep is the faster-varying index.
  for (c.dp = 0; c.dp < p_.dp; ++c.dp) {
    for (c.ep = 0; c.ep < p_.ep; ++c.ep)
      out.push_back(gpu(c));
  }
  return out;
}

std::vector<int> RankLayout::expert_dp_group(int gpu_id) const {
  RankCoord c = coord(gpu_id);
  std::vector<int> out;
  for (c.dp = 0; c.dp < p_.dp; ++c.dp)
    out.push_back(gpu(c));
  return out;
}

int RankLayout::region_servers() const {
  const int region_gpus = p_.ep * p_.tp;
  return region_gpus <= gpus_per_server_ ? 1 : region_gpus / gpus_per_server_;
}

int RankLayout::stage_layers(int stage) const {
  if (stage < 0 || stage >= p_.pp) {
    throw Error("", "stage", fmt::format("stage {} is outside 0..{}", stage, p_.pp - 1));
  }
  return layers_ / p_.pp + (stage < layers_ % p_.pp ? 1 : 0);
}

int RankLayout::first_layer(int stage) const {
  if (stage < 0 || stage >= p_.pp) {
    throw Error("", "stage", fmt::format("stage {} is outside 0..{}", stage, p_.pp - 1));
  }
  // Stages before `stage` hold layers / pp layers each, plus one for each of them that is among
  // the first layers mod pp.
  return stage * (layers_ / p_.pp) + std::min(stage, layers_ % p_.pp);
}

}  // namespace mfabric::workload
