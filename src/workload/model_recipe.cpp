#include "workload/model_recipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/yaml_fields.h"

namespace mfabric::workload::detail {
namespace {

const std::vector<std::string> kRecipeFields = {
    "source",     "gpu",       "gpus",     "convention", "tp",          "pp",
    "vp",         "ep",        "etp",      "cp",         "micro_batch", "global_batch",
    "seq",        "precision", "schedule", "pipeline",   "routing",     "distributed_optimizer",
    "dispatcher", "recompute"};

// One of `known`, or an error naming the field and listing them.
std::string one_of(const Fields& f, const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& known) {
  const std::string value = f.optional_string(key).value_or(fallback);
  if (std::find(known.begin(), known.end(), value) == known.end()) {
    throw Error(f.source(), f.field(key), fmt::format("expected {}, got '{}'", join(known), value));
  }
  return value;
}

}  // namespace

Recipe parse_recipe(const YAML::Node& node, const std::string& source, const ModelSpec& model) {
  const Fields f(node, source, "recipe", kRecipeFields);
  Recipe r;
  const auto text = f.optional_string("source");
  if (!text || text->empty()) {
    throw Error(source, f.field("source"), "is required: the public recipe or report it follows");
  }
  r.source = *text;
  r.gpu = f.optional_string("gpu").value_or("");
  const auto positive = [&](const char* key, int fallback) {
    const int v = f.optional_int(key).value_or(fallback);
    if (v < 1) throw Error(source, f.field(key), fmt::format("expected >= 1, got {}", v));
    return v;
  };
  if (f.has("gpus")) r.gpus = positive("gpus", 1);
  r.convention = one_of(f, "convention", r.convention, {"megatron", "paper"});
  r.tp = positive("tp", 1);
  r.pp = positive("pp", 1);
  r.vp = positive("vp", 1);
  r.ep = positive("ep", 1);
  r.etp = positive("etp", r.convention == "paper" ? r.tp : 1);
  r.cp = positive("cp", 1);
  r.micro_batch = positive("micro_batch", 1);
  if (!f.has("global_batch")) {
    throw Error(source, f.field("global_batch"), "is required: the recipe's sequences per step");
  }
  r.global_batch = positive("global_batch", 1);
  r.seq = positive("seq", r.seq);
  r.precision = one_of(f, "precision", r.precision, {"bf16", "fp8"});
  r.distributed_optimizer = f.optional_bool("distributed_optimizer").value_or(false);
  r.dispatcher = one_of(f, "dispatcher", r.dispatcher, {"alltoall", "deepep"});
  r.recompute = one_of(f, "recompute", r.recompute, {"none", "selective", "full"});
  r.schedule = one_of(f, "schedule", r.vp > 1 ? "interleaved" : r.schedule,
                      {"1f1b", "gpipe", "interleaved", "dualpipe"});
  if (r.vp > 1 && r.schedule != "interleaved") {
    throw Error(source, f.field("vp"),
                fmt::format("a virtual pipeline (vp {}) runs the interleaved schedule, not {}",
                            r.vp, r.schedule));
  }
  if (model.experts % r.ep != 0) {
    throw Error(source, f.field("ep"),
                fmt::format("ep {} must divide the model's {} experts", r.ep, model.experts));
  }
  if (f.has("pipeline")) {
    const Fields p(f.get("pipeline"), source, "recipe.pipeline",
                   {"first", "last", "embedding", "loss"});
    r.first_stage_layers = p.optional_int("first").value_or(0);
    r.last_stage_layers = p.optional_int("last").value_or(0);
    for (const char* key : {"first", "last"}) {
      if (p.has(key) && *p.optional_int(key) < 1) {
        throw Error(source, p.field(key), "expected a layer count >= 1");
      }
    }
    r.embedding_in_split = p.optional_bool("embedding").value_or(false);
    r.loss_in_split = p.optional_bool("loss").value_or(false);
  }
  if (f.has("routing")) {
    const Fields p(f.get("routing"), source, "recipe.routing", {"balance", "max_nodes"});
    r.routing_balance = one_of(p, "balance", "", {"", "forced"});
    r.max_nodes_per_token = p.optional_int("max_nodes").value_or(0);
    if (r.max_nodes_per_token < 0) {
      throw Error(source, p.field("max_nodes"), "expected a node count >= 1");
    }
  }
  return r;
}

}  // namespace mfabric::workload::detail
