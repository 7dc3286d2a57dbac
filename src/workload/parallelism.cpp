// Rank layout and the two parallelism conventions. See parallelism.h and docs/workload.md,
// "Parallelism conventions" and "Rank layout".
#include "workload/parallelism.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>

#include "core/error.h"

namespace mfabric::workload {

const char* to_string(ParallelConvention c) {
  return c == ParallelConvention::Paper ? "paper" : "megatron";
}

ParallelConvention parse_convention(const std::string& text) {
  if (text == "megatron") return ParallelConvention::Megatron;
  if (text == "paper") return ParallelConvention::Paper;
  throw Error(fmt::format("unknown parallelism convention '{}' (known: megatron, paper)", text));
}

ParallelismSpec paper_parallelism(int tp, int pp, int ep, int dp) {
  ParallelismSpec p;
  p.tp = tp;
  p.pp = pp;
  p.ep = ep;
  p.dp = dp;
  p.convention = ParallelConvention::Paper;
  return p;
}

ParallelismSpec megatron_parallelism(int tp, int pp, int ep, int dp, int etp, int cp) {
  ParallelismSpec p = paper_parallelism(tp, pp, ep, dp);
  p.etp = etp;
  p.cp = cp;
  p.convention = ParallelConvention::Megatron;
  return p;
}

std::string parallelism_text(const ParallelismSpec& p) {
  std::string s = fmt::format("tp {}, pp {}, ep {}", p.tp, p.pp, p.ep);
  if (!p.paper()) s += fmt::format(", etp {}", p.expert_tp());
  if (p.cp > 1) s += fmt::format(", cp {}", p.cp);
  s += fmt::format(", dp {}", p.dp);
  if (!p.paper()) s += fmt::format(" (expert-dp {})", p.expert_dp());
  return s + fmt::format(", {} convention", to_string(p.convention));
}

namespace {

// First layer of every stage and, after the last, the model's layer count, by the split.
std::vector<int> split_layers(const PipelineSplit& s, int pp, int layers) {
  if (s.first < 0 || s.last < 0) {
    throw Error("", s.first < 0 ? "pipeline.first" : "pipeline.last",
                fmt::format("expected a layer count >= 1, got {}", std::min(s.first, s.last)));
  }
  std::vector<int> count(static_cast<std::size_t>(pp), 0);
  if (s.first > 0 || s.last > 0) {
    if (s.embedding || s.loss) {
      throw Error("", "pipeline",
                  "give either the first and last stage's layers or count the embedding and the "
                  "loss as layers, not both (as Megatron-LM)");
    }
    const int fixed = (s.first > 0 ? 1 : 0) + (s.last > 0 ? 1 : 0);
    if (pp < fixed + (fixed == 1 ? 1 : 0) || pp < 2) {
      throw Error("", s.first > 0 ? "pipeline.first" : "pipeline.last",
                  fmt::format("fixing the first or last stage's layers needs more stages than pp "
                              "{}",
                              pp));
    }
    const int rest = layers - s.first - s.last;
    const int middle = pp - fixed;
    if (middle == 0 ? rest != 0 : rest < middle || rest % middle != 0) {
      throw Error(
          "", "pipeline",
          fmt::format("{} layers less {} on the first and {} on the last stage leave {} for {} "
                      "other stages: they must split evenly, at least one layer each",
                      layers, s.first, s.last, rest, middle));
    }
    std::fill(count.begin(), count.end(), middle > 0 ? rest / middle : 0);
    if (s.first > 0) count.front() = s.first;
    if (s.last > 0) count.back() = s.last;
  } else if (s.embedding || s.loss) {
    const int slots = layers + (s.embedding ? 1 : 0) + (s.loss ? 1 : 0);
    if (slots % pp != 0) {
      throw Error("", "pipeline",
                  fmt::format("{} layers with the {} counted as layers are {} slots, which do not "
                              "split evenly over pp {}",
                              layers,
                              s.embedding && s.loss ? "embedding and the loss"
                              : s.embedding         ? "embedding"
                                                    : "loss",
                              slots, pp));
    }
    std::fill(count.begin(), count.end(), slots / pp);
    if (s.embedding) --count.front();
    if (s.loss) --count.back();
  } else {
    for (int st = 0; st < pp; ++st)
      count[static_cast<std::size_t>(st)] = layers / pp + (st < layers % pp ? 1 : 0);
  }
  std::vector<int> first(static_cast<std::size_t>(pp) + 1, 0);
  for (int st = 0; st < pp; ++st) {
    if (count[static_cast<std::size_t>(st)] < 1) {
      throw Error(
          "", "pipeline",
          fmt::format("stage {} of {} would hold no layer of the model's {}", st, pp, layers));
    }
    first[static_cast<std::size_t>(st) + 1] =
        first[static_cast<std::size_t>(st)] + count[static_cast<std::size_t>(st)];
  }
  return first;
}

}  // namespace

RankLayout::RankLayout(const ParallelismSpec& p, const ModelSpec& model, int gpus_per_server,
                       int gpus)
    : p_(p), gpus_per_server_(gpus_per_server), stage_gpus_(1) {
  const auto positive = [](const char* field, int value, const char* what) {
    if (value < 1) {
      throw Error("", field, fmt::format("expected a positive {}, got {}", what, value));
    }
  };
  positive("tp", p.tp, "tensor-parallel degree");
  positive("pp", p.pp, "pipeline-parallel degree");
  positive("ep", p.ep, "expert-parallel degree");
  positive("dp", p.dp, "data-parallel degree");
  positive("cp", p.cp, "context-parallel degree");
  positive("vp", p.vp, "virtual-pipeline degree");
  if (p.etp < 0) {
    throw Error("", "etp",
                fmt::format("expected a positive expert-tensor-parallel degree, got {}", p.etp));
  }
  positive("gpus_per_server", gpus_per_server, "number of GPUs per server");
  if (gpus < 0) throw Error("", "gpus", fmt::format("expected a GPU count >= 0, got {}", gpus));
  if (p.paper()) {
    if (p.etp > 0 && p.etp != p.tp) {
      throw Error("", "etp",
                  fmt::format("etp {} under the paper's convention, which splits the experts like "
                              "the dense layers (etp = tp = {}); use the megatron convention",
                              p.etp, p.tp));
    }
    if (p.cp > 1) {
      throw Error("", "cp",
                  fmt::format("cp {} under the paper's convention, which has no context "
                              "parallelism; use the megatron convention",
                              p.cp));
    }
  }

  // TP all-reduces are meant for NVLink: a TP group never spans servers.
  if (gpus_per_server % p.tp != 0) {
    throw Error("", "tp",
                fmt::format("tp {} must divide the {} GPUs per server (TP stays inside a server)",
                            p.tp, gpus_per_server));
  }
  const int etp = p.expert_tp();
  // An EP group (EP ranks of ETP GPUs) is mFabric's region: whole servers, or a share of one.
  const std::int64_t group = std::int64_t{p.ep} * etp;
  const char* group_field = p.paper() ? "ep" : (p.etp > 1 ? "etp" : "ep");
  if (group % gpus_per_server != 0 && gpus_per_server % group != 0) {
    throw Error("", group_field,
                fmt::format("ep x {} = {} x {} = {} GPUs must be a multiple or a divisor of the {} "
                            "GPUs per server (an EP group fills whole servers or shares one)",
                            p.paper() ? "tp" : "etp", p.ep, etp, group, gpus_per_server));
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
  const std::int64_t stage = std::int64_t{p.tp} * p.cp * (p.paper() ? group / etp * p.dp : p.dp);
  if (stage * p.pp > INT_MAX) {
    throw Error("", "gpus", fmt::format("{} x pp {} is too many GPUs", parallelism_text(p), p.pp));
  }
  if (!p.paper() && stage % group != 0) {
    throw Error("", group_field,
                fmt::format("ep x etp = {} x {} = {} must divide tp x cp x dp = {} x {} x {} = {} "
                            "(the experts fold onto the dense layers' GPUs)",
                            p.ep, etp, group, p.tp, p.cp, p.dp, stage));
  }
  stage_gpus_ = static_cast<int>(stage);
  if (gpus > 0 && stage * p.pp != gpus) {
    throw Error(
        "", "gpus",
        fmt::format("{} is {} GPUs, not the job's {}", parallelism_text(p), stage * p.pp, gpus));
  }
  if (p.vp > 1 && p.pp < 2) {
    throw Error(
        "", "vp",
        fmt::format("vp {} interleaves model chunks over pipeline stages; it needs pp >= 2", p.vp));
  }
  if (std::int64_t{p.pp} * p.vp > model.layers) {
    throw Error("", "vp",
                fmt::format("pp x vp = {} x {} virtual stages exceed the {} layers of {}", p.pp,
                            p.vp, model.layers, model.name));
  }
  first_layer_ = split_layers(p.split, p.pp * p.vp, model.layers);
}

ParallelismSpec resolve_parallelism(ParallelismSpec given, std::optional<int> dp, int gpus,
                                    const ModelSpec& model, int gpus_per_server) {
  if (dp && *dp < 1) {
    throw Error("", "dp", fmt::format("expected a positive data-parallel degree, got {}", *dp));
  }
  if (gpus < 0) throw Error("", "gpus", fmt::format("must be at least 1, got {}", gpus));
  // The degrees on their own, with the smallest DP they allow: one replica under the paper's
  // convention, and under Megatron's the least DP whose GPUs hold whole EP groups.
  ParallelismSpec one = given;
  one.dp = 1;
  if (!one.paper()) {
    const std::int64_t group = std::int64_t{one.ep} * std::max(1, one.expert_tp());
    const std::int64_t tpcp = std::int64_t{std::max(1, one.tp)} * std::max(1, one.cp);
    one.dp = static_cast<int>(std::max<std::int64_t>(1, group / std::gcd(group, tpcp)));
  }
  RankLayout smallest(one, model, gpus_per_server);
  const std::int64_t per_dp = std::int64_t{one.tp} * one.cp * one.pp * (one.paper() ? one.ep : 1);
  const std::string product =
      one.paper() ? fmt::format("tp x pp x ep = {} x {} x {}", one.tp, one.pp, one.ep)
                  : fmt::format("tp x cp x pp = {} x {} x {}", one.tp, one.cp, one.pp);
  if (gpus == 0) {
    if (!dp)
      throw Error("", "gpus", "give the number of GPUs (or dp) so that the job size is known");
    given.dp = *dp;
  } else if (dp) {
    if (per_dp * *dp != gpus) {
      throw Error("", "dp",
                  fmt::format("dp x {} = {} x {} GPUs, but the job has {}", product, *dp, per_dp,
                              per_dp * *dp, gpus));
    }
    given.dp = *dp;
  } else if (gpus % per_dp != 0) {
    throw Error("", "gpus",
                fmt::format("{} GPUs are not a multiple of {} = {}, so they cannot be split into "
                            "data-parallel replicas",
                            gpus, product, per_dp));
  } else {
    given.dp = static_cast<int>(gpus / per_dp);
  }
  if (!given.paper()) {
    const std::int64_t group = std::int64_t{given.ep} * given.expert_tp();
    const std::int64_t stage = std::int64_t{given.tp} * given.cp * given.dp;
    if (stage % group != 0) {
      throw Error("", dp ? "dp" : "gpus",
                  fmt::format("{} GPUs give dp {}, and ep x etp = {} x {} = {} must divide tp x cp "
                              "x dp = {} x {} x {} = {} (the experts fold onto the dense layers' "
                              "GPUs): use a multiple of {} GPUs",
                              per_dp * given.dp, given.dp, given.ep, given.expert_tp(), group,
                              given.tp, given.cp, given.dp, stage, per_dp * one.dp));
    }
  }
  RankLayout all(given, model, gpus_per_server);  // the product's range
  return given;
}

int RankLayout::gpu(int stage, int local) const {
  if (stage < 0 || stage >= p_.pp || local < 0 || local >= stage_gpus_) {
    throw Error("", "rank",
                fmt::format("(stage {}, GPU {} of the stage) is outside pp {} x {} GPUs", stage,
                            local, p_.pp, stage_gpus_));
  }
  return local + stage_gpus_ * stage;
}

int RankLayout::gpu(const RankCoord& c) const {
  const int ddp = p_.dense_dp();
  if (c.tp < 0 || c.tp >= p_.tp || c.cp < 0 || c.cp >= p_.cp || c.dp < 0 || c.dp >= ddp ||
      c.pp < 0 || c.pp >= p_.pp) {
    throw Error("", "rank",
                fmt::format("coordinate (tp {}, cp {}, dp {}, pp {}) is outside tp {} x cp {} x "
                            "dp {} x pp {}",
                            c.tp, c.cp, c.dp, c.pp, p_.tp, p_.cp, ddp, p_.pp));
  }
  return gpu(c.pp, c.tp + p_.tp * (c.cp + p_.cp * c.dp));
}

RankCoord RankLayout::coord(int g) const {
  if (g < 0 || g >= gpus()) {
    throw Error("", "gpu", fmt::format("GPU {} is outside 0..{}", g, gpus() - 1));
  }
  RankCoord c;
  c.pp = g / stage_gpus_;
  int l = g % stage_gpus_;
  c.tp = l % p_.tp;
  l /= p_.tp;
  c.cp = l % p_.cp;
  c.dp = l / p_.cp;
  return c;
}

ExpertCoord RankLayout::expert_coord(int g) const {
  if (g < 0 || g >= gpus()) {
    throw Error("", "gpu", fmt::format("GPU {} is outside 0..{}", g, gpus() - 1));
  }
  const int etp = p_.expert_tp();
  int l = g % stage_gpus_;
  ExpertCoord c;
  c.etp = l % etp;
  l /= etp;
  c.ep = l % p_.ep;
  c.edp = l / p_.ep;
  return c;
}

std::vector<int> RankLayout::tp_group(int g) const {
  RankCoord c = coord(g);
  std::vector<int> out;
  for (c.tp = 0; c.tp < p_.tp; ++c.tp)
    out.push_back(gpu(c));
  return out;
}

std::vector<int> RankLayout::cp_group(int g) const {
  RankCoord c = coord(g);
  std::vector<int> out;
  for (c.cp = 0; c.cp < p_.cp; ++c.cp)
    out.push_back(gpu(c));
  return out;
}

std::vector<int> RankLayout::ep_group(int g) const {
  const ExpertCoord c = expert_coord(g);
  const int etp = p_.expert_tp();
  const int stage = g / stage_gpus_;
  std::vector<int> out;
  for (int ep = 0; ep < p_.ep; ++ep)
    out.push_back(gpu(stage, c.etp + etp * (ep + p_.ep * c.edp)));
  return out;
}

std::vector<int> RankLayout::dense_dp_group(int g) const {
  const int stage = g / stage_gpus_;
  std::vector<int> out;
  // Every GPU of the stage with this TP rank: ascending ids.
  for (int l = g % stage_gpus_ % p_.tp; l < stage_gpus_; l += p_.tp)
    out.push_back(gpu(stage, l));
  return out;
}

std::vector<int> RankLayout::expert_dp_group(int g) const {
  const ExpertCoord c = expert_coord(g);
  const int etp = p_.expert_tp();
  const int stage = g / stage_gpus_;
  std::vector<int> out;
  for (int edp = 0; edp < p_.expert_dp(); ++edp)
    out.push_back(gpu(stage, c.etp + etp * (c.ep + p_.ep * edp)));
  return out;
}

int RankLayout::region_servers() const {
  const int region_gpus = p_.ep_group_gpus();
  return region_gpus <= gpus_per_server_ ? 1 : region_gpus / gpus_per_server_;
}

int RankLayout::chunk_layers(int v) const {
  if (v < 0 || v >= virtual_stages()) {
    throw Error("", "stage",
                fmt::format("virtual stage {} is outside 0..{}", v, virtual_stages() - 1));
  }
  return first_layer_[static_cast<std::size_t>(v) + 1] - first_layer_[static_cast<std::size_t>(v)];
}

int RankLayout::chunk_first_layer(int v) const {
  if (v < 0 || v >= virtual_stages()) {
    throw Error("", "stage",
                fmt::format("virtual stage {} is outside 0..{}", v, virtual_stages() - 1));
  }
  return first_layer_[static_cast<std::size_t>(v)];
}

int RankLayout::stage_layers(int stage) const {
  if (stage < 0 || stage >= p_.pp) {
    throw Error("", "stage", fmt::format("stage {} is outside 0..{}", stage, p_.pp - 1));
  }
  int n = 0;
  for (int c = 0; c < p_.vp; ++c)
    n += chunk_layers(c * p_.pp + stage);
  return n;
}

std::vector<int> RankLayout::layers_of_stage(int stage) const {
  if (stage < 0 || stage >= p_.pp) {
    throw Error("", "stage", fmt::format("stage {} is outside 0..{}", stage, p_.pp - 1));
  }
  std::vector<int> layers;
  for (int c = 0; c < p_.vp; ++c) {
    const int v = c * p_.pp + stage;
    for (int l = chunk_first_layer(v); l < chunk_first_layer(v) + chunk_layers(v); ++l)
      layers.push_back(l);
  }
  return layers;
}

}  // namespace mfabric::workload
