#include "workload/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "core/error.h"
#include "workload/embedded_yaml.h"
#include "workload/parallelism.h"
#include "workload/tiny_model.h"

namespace mfabric::workload {
namespace {

const std::string kModelData = MFABRIC_TEST_DATA_DIR;

// The error parse_model / load_model throws, or a failure if none.
Error error_of(const std::string& yaml, const std::string& source = "test.yaml") {
  try {
    parse_model(yaml, source);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return Error("no error");
}

Error load_error(const std::string& name_or_path) {
  try {
    load_model(name_or_path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << name_or_path;
  return Error("no error");
}

// A valid model to mutate: every line is one field, so a test can replace one.
const std::string kBase = R"(name: base
layers: 4
hidden: 64
attention:
  kind: mha
  heads: 4
ffn_expert: 128
experts: 8
top_k: 2
vocab: 100
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(Zoo, NamesInFileOrderAndMatchFiles) {
  const std::vector<std::string> names = model_names();
  ASSERT_EQ(static_cast<int>(names.size()), detail::kModelZooSize);
  const std::set<std::string> expected = {"mixtral-8x7b", "mixtral-8x22b",     "qwen-moe",
                                          "qwen-moe-32",  "qwen1.5-moe-a2.7b", "llama-moe-6.7b",
                                          "deepseek-r1",  "qwen3-235b-a22b",   "qwen3-30b-a3b"};
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), expected);
  for (int i = 0; i < detail::kModelZooSize; ++i) {
    // One file per model, named after it, so that the zoo is easy to browse.
    EXPECT_EQ(std::string(detail::kModelZoo[i].file), names[static_cast<std::size_t>(i)] + ".yaml");
  }
}

TEST(Zoo, EveryModelLoadsWithCommonFields) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    const ModelSpec m = load_model(name);
    EXPECT_EQ(m.name, name);
    // Every model has a default job from a cited recipe.
    ASSERT_TRUE(m.recipe);
    EXPECT_FALSE(m.recipe->source.empty());
    EXPECT_EQ(m.dtype_bytes, 2);
    EXPECT_TRUE(m.gated_ffn);
    EXPECT_GT(m.total_params(), 1'000'000'000);
    EXPECT_LE(m.top_k, m.experts);
    EXPECT_LT(m.dense_layers, m.layers);
  }
  EXPECT_EQ(load_model("Mixtral-8x7B").name, "mixtral-8x7b");  // names are case-insensitive
  // An alias is the same architecture under the name asked for.
  const ModelSpec v3 = load_model("DeepSeek-V3");
  EXPECT_EQ(v3.name, "deepseek-v3");
  EXPECT_EQ(v3.total_params(), load_model("deepseek-r1").total_params());
}

// Each recipe's degrees lay out on the GPUs it was published for (or, without a count, on the
// fewest that hold one data replica), and its global batch splits into whole micro-batches.
TEST(Zoo, EveryRecipeIsAValidJob) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    const ModelSpec m = load_model(name);
    ASSERT_TRUE(m.recipe);
    const Recipe& r = *m.recipe;
    ParallelismSpec p = r.convention == "paper"
                            ? paper_parallelism(r.tp, r.pp, r.ep, 1)
                            : megatron_parallelism(r.tp, r.pp, r.ep, 1, r.etp, r.cp);
    p.split.first = r.first_stage_layers;
    p.split.last = r.last_stage_layers;
    p.split.embedding = r.embedding_in_split;
    p.split.loss = r.loss_in_split;
    const int gpus = r.gpus > 0 ? r.gpus : r.tp * r.cp * r.pp * std::max(1, r.ep * r.etp / r.tp);
    const ParallelismSpec resolved = resolve_parallelism(p, std::nullopt, gpus, m, 8);
    EXPECT_EQ(r.global_batch % (r.micro_batch * resolved.dp), 0);
    if (r.vp > 1) {
      EXPECT_EQ(r.schedule, "interleaved");
    }
  }
  // The published configurations, by hand.
  const Recipe q = *load_model("qwen3-235b-a22b").recipe;
  EXPECT_EQ(q.tp * q.pp * q.vp * q.ep, 2 * 8 * 4 * 32);
  EXPECT_TRUE(q.embedding_in_split && q.loss_in_split);  // 94 + 2 = 96 = 8 x 4 x 3
  EXPECT_EQ(q.routing_balance, "forced");
  const Recipe d = *load_model("deepseek-v3").recipe;
  EXPECT_EQ(d.precision, "fp8");
  EXPECT_EQ(d.schedule, "dualpipe");
  EXPECT_EQ(d.max_nodes_per_token, 4);
}

// Published totals: Qwen3-30B-A3B 30.5B, Qwen3-235B-A22B 235B (their model cards).
TEST(Zoo, Qwen3ParameterCounts) {
  EXPECT_NEAR(static_cast<double>(load_model("qwen3-30b-a3b").total_params()) / 1e9, 30.5, 0.1);
  EXPECT_NEAR(static_cast<double>(load_model("qwen3-235b-a22b").total_params()) / 1e9, 235.1, 0.5);
}

// A recipe's errors name the field under recipe.
TEST(ModelErrors, RecipeFieldsAreChecked) {
  const std::string base = testing::kTinyModelYaml;
  const auto field = [&](const std::string& recipe) {
    try {
      parse_model(base + "recipe: " + recipe + "\n", "m.yaml");
    } catch (const Error& e) {
      return e.field();
    }
    return std::string();
  };
  EXPECT_EQ(field("{source: x, global_batch: 8}"), "");
  EXPECT_EQ(field("{global_batch: 8}"), "recipe.source");
  EXPECT_EQ(field("{source: x}"), "recipe.global_batch");
  EXPECT_EQ(field("{source: x, global_batch: 8, ep: 3}"), "recipe.ep");  // 4 experts
  EXPECT_EQ(field("{source: x, global_batch: 8, tp: 0}"), "recipe.tp");
  EXPECT_EQ(field("{source: x, global_batch: 8, precision: fp4}"), "recipe.precision");
  EXPECT_EQ(field("{source: x, global_batch: 8, vp: 2, schedule: 1f1b}"), "recipe.vp");
  EXPECT_EQ(field("{source: x, global_batch: 8, convention: deepspeed}"), "recipe.convention");
  EXPECT_EQ(field("{source: x, global_batch: 8, routing: {balance: even}}"),
            "recipe.routing.balance");
  EXPECT_EQ(field("{source: x, global_batch: 8, colour: red}"), "recipe.colour");
  EXPECT_EQ(field("{source: x, global_batch: 8}\naliases: 3"), "aliases");
}

TEST(Zoo, DocumentedFields) {
  const ModelSpec a = load_model("mixtral-8x7b");
  EXPECT_EQ(a.layers, 32);
  EXPECT_EQ(a.hidden, 4096);
  EXPECT_EQ(a.attention.kind, "gqa");
  EXPECT_EQ(a.attention.heads, 32);
  EXPECT_EQ(a.attention.kv_heads, 8);
  EXPECT_EQ(a.attention.head_dim, 128);
  EXPECT_EQ(a.ffn_expert, 14336);
  EXPECT_EQ(a.experts, 8);
  EXPECT_EQ(a.top_k, 2);
  EXPECT_EQ(a.vocab, 32000);
  EXPECT_EQ(a.shared_experts, 0);
  EXPECT_EQ(a.dense_layers, 0);
  EXPECT_EQ(a.moe_layers(), 32);

  const ModelSpec b = load_model("mixtral-8x22b");
  EXPECT_EQ(b.layers, 56);
  EXPECT_EQ(b.hidden, 6144);
  EXPECT_EQ(b.attention.heads, 48);
  EXPECT_EQ(b.attention.kv_heads, 8);
  EXPECT_EQ(b.attention.head_dim, 128);
  EXPECT_EQ(b.ffn_expert, 16384);
  EXPECT_EQ(b.experts, 8);
  EXPECT_EQ(b.top_k, 2);
  EXPECT_EQ(b.vocab, 32768);

  const ModelSpec q = load_model("qwen-moe");
  EXPECT_EQ(q.layers, 24);
  EXPECT_EQ(q.hidden, 2048);
  EXPECT_EQ(q.attention.kind, "mha");
  EXPECT_EQ(q.attention.heads, 16);
  EXPECT_EQ(q.attention.kv_heads, 16);   // default for mha
  EXPECT_EQ(q.attention.head_dim, 128);  // default hidden / heads
  EXPECT_EQ(q.experts, 64);
  EXPECT_EQ(q.ffn_expert, 1408);
  EXPECT_EQ(q.top_k, 4);
  EXPECT_EQ(q.vocab, 151936);
  EXPECT_EQ(q.ffn_shared, 1408);  // default ffn_expert
  EXPECT_EQ(load_model("qwen-moe-32").experts, 32);

  const ModelSpec r = load_model("qwen1.5-moe-a2.7b");
  EXPECT_EQ(r.experts, 60);
  EXPECT_EQ(r.shared_experts, 4);
  EXPECT_EQ(r.ffn_shared, 1408);
  EXPECT_EQ(r.top_k, 4);

  const ModelSpec l = load_model("llama-moe-6.7b");
  EXPECT_EQ(l.layers, 32);
  EXPECT_EQ(l.hidden, 4096);
  EXPECT_EQ(l.attention.heads, 32);
  EXPECT_EQ(l.experts, 16);
  EXPECT_EQ(l.ffn_expert, 688);
  EXPECT_EQ(l.top_k, 4);

  const ModelSpec d = load_model("deepseek-r1");
  EXPECT_EQ(d.layers, 61);
  EXPECT_EQ(d.hidden, 7168);
  EXPECT_EQ(d.attention.kind, "mla");
  EXPECT_EQ(d.attention.heads, 128);
  EXPECT_EQ(d.attention.q_lora_rank, 1536);
  EXPECT_EQ(d.attention.kv_lora_rank, 512);
  EXPECT_EQ(d.attention.qk_nope_head_dim, 128);
  EXPECT_EQ(d.attention.qk_rope_head_dim, 64);
  EXPECT_EQ(d.attention.v_head_dim, 128);
  EXPECT_EQ(d.attention.head_dim, 192);  // derived: nope + rope
  EXPECT_EQ(d.dense_layers, 3);
  EXPECT_EQ(d.ffn_dense, 18432);
  EXPECT_EQ(d.experts, 256);
  EXPECT_EQ(d.top_k, 8);
  EXPECT_EQ(d.shared_experts, 1);
  EXPECT_EQ(d.ffn_shared, 2048);
  EXPECT_EQ(d.vocab, 129280);
  EXPECT_FALSE(d.is_moe_layer(2));
  EXPECT_TRUE(d.is_moe_layer(3));
  EXPECT_EQ(d.moe_layers(), 58);
}

double relative_error(std::int64_t value, double published) {
  return std::abs(static_cast<double>(value) - published) / published;
}

TEST(ModelParams, Mixtral8x7bByHand) {
  const ModelSpec m = load_model("mixtral-8x7b");
  // Attention: q and o 4096 x 4096 each, k and v 4096 x (8 x 128) each.
  EXPECT_EQ(m.attention_params_per_layer(), 2 * 4096LL * 4096 + 2 * 4096LL * 1024);
  EXPECT_EQ(m.expert_params(), 3 * 4096LL * 14336);  // gate, up, down
  EXPECT_EQ(m.router_params(), 4096 * 8);
  EXPECT_EQ(m.shared_expert_params(), 0);
  const std::int64_t layer =
      m.attention_params_per_layer() + 2 * 4096 + 8 * m.expert_params() + m.router_params();
  EXPECT_EQ(m.total_params(), 32 * layer + 2 * 32000LL * 4096 + 4096);
  EXPECT_EQ(m.total_params(), 46'702'792'704);
  EXPECT_LT(relative_error(m.total_params(), 46.7e9), 0.02);  // published: 46.7B
}

TEST(ModelParams, Mixtral8x22bByHand) {
  const ModelSpec m = load_model("mixtral-8x22b");
  EXPECT_EQ(m.attention_params_per_layer(), 2 * 6144LL * 6144 + 2 * 6144LL * 1024);
  EXPECT_EQ(m.expert_params(), 3 * 6144LL * 16384);
  EXPECT_EQ(m.total_params(), 140'630'071'296);
  EXPECT_LT(relative_error(m.total_params(), 141e9), 0.02);  // published: 141B
}

TEST(ModelParams, DeepSeekV3ByHand) {
  const ModelSpec m = load_model("deepseek-r1");
  const std::int64_t h = 7168;
  // q: 7168 -> 1536 (+ norm) -> 128 x 192; kv: 7168 -> 512 + 64 (+ norm), 512 -> 128 x (128 +
  // 128); o: 128 x 128 -> 7168.
  const std::int64_t attention =
      h * 1536 + 1536 + 1536LL * 128 * 192 + h * 576 + 512 + 512LL * 128 * 256 + 128LL * 128 * h;
  EXPECT_EQ(m.attention_params_per_layer(), attention);
  EXPECT_EQ(m.attention_params_per_layer(), 187'107'328);
  EXPECT_EQ(m.expert_params(), 3 * h * 2048);
  EXPECT_EQ(m.shared_expert_params(), 3 * h * 2048);
  EXPECT_EQ(m.dense_ffn_params(), 3 * h * 18432);
  EXPECT_EQ(m.router_params(), h * 256);
  const std::int64_t moe = 256 * m.expert_params() + m.shared_expert_params() + h * 256;
  EXPECT_EQ(m.total_params(),
            61 * (attention + 2 * h) + 3 * m.dense_ffn_params() + 58 * moe + 2 * 129280 * h + h);
  // Published: 671B (the 14B multi-token-prediction module excluded).
  EXPECT_LT(relative_error(m.total_params(), 671e9), 0.03);
}

TEST(ModelParams, OtherZooModelsMatchPublishedSizes) {
  EXPECT_LT(relative_error(load_model("qwen1.5-moe-a2.7b").total_params(), 14.3e9), 0.02);
  EXPECT_LT(relative_error(load_model("qwen-moe").total_params(), 14.3e9), 0.02);
  EXPECT_LT(relative_error(load_model("llama-moe-6.7b").total_params(), 6.7e9), 0.02);
}

TEST(ModelParams, PlainFfnHasTwoMatrices) {
  const ModelSpec m = parse_model(kBase + "gated_ffn: false\n", "t");
  EXPECT_FALSE(m.gated_ffn);
  EXPECT_EQ(m.expert_params(), 2 * 64 * 128);
}

TEST(ModelParse, TinyFileWithDefaults) {
  const ModelSpec m = load_model(kModelData + "/model_tiny.yaml");
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.description, "test model");
  EXPECT_EQ(m.attention.kv_heads, 2);
  EXPECT_EQ(m.attention.head_dim, 16);
  EXPECT_EQ(m.ffn_shared, 128);
  EXPECT_EQ(m.shared_experts, 0);
  EXPECT_EQ(m.dense_layers, 0);
  EXPECT_EQ(m.ffn_dense, 0);
  EXPECT_EQ(m.dtype_bytes, 2);
  EXPECT_TRUE(m.gated_ffn);
  // q, o: 64 x 64; k, v: 64 x 32.
  EXPECT_EQ(m.attention_params_per_layer(), 2 * 64 * 64 + 2 * 64 * 32);
}

TEST(ModelParse, UnknownKeyNamesSourceAndField) {
  const std::string path = kModelData + "/model_unknown_key.yaml";
  const Error e = load_error(path);
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.field(), "attention.kv_head");
  EXPECT_NE(e.message().find("did you mean 'kv_heads'"), std::string::npos) << e.what();

  const Error top = error_of(kBase + "hiden: 64\n");
  EXPECT_EQ(top.source(), "test.yaml");
  EXPECT_EQ(top.field(), "hiden");
  EXPECT_NE(top.message().find("unknown field"), std::string::npos);
}

TEST(ModelParse, MissingFieldIsNamed) {
  const std::string path = kModelData + "/model_missing_field.yaml";
  const Error e = load_error(path);
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.field(), "vocab");
  EXPECT_NE(e.message().find("required"), std::string::npos);
  EXPECT_EQ(error_of(replace(kBase, "name: base\n", "")).field(), "name");
  EXPECT_EQ(error_of(replace(kBase, "  kind: mha\n", "")).field(), "attention.kind");
  EXPECT_EQ(error_of(replace(kBase, "attention:\n  kind: mha\n  heads: 4\n", "")).field(),
            "attention");
}

TEST(ModelParse, TopKAboveExperts) {
  const std::string path = kModelData + "/model_top_k.yaml";
  const Error e = load_error(path);
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.field(), "top_k");
  EXPECT_NE(e.message().find("at most experts (4)"), std::string::npos) << e.what();
}

TEST(ModelParse, NegativeValue) {
  const std::string path = kModelData + "/model_negative.yaml";
  const Error e = load_error(path);
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.field(), "hidden");
  EXPECT_NE(e.message().find("-64"), std::string::npos);
  EXPECT_EQ(error_of(replace(kBase, "layers: 4", "layers: 0")).field(), "layers");
  EXPECT_EQ(error_of(kBase + "shared_experts: -1\n").field(), "shared_experts");
}

TEST(ModelParse, WrongType) {
  const std::string path = kModelData + "/model_wrong_type.yaml";
  const Error e = load_error(path);
  EXPECT_EQ(e.source(), path);
  EXPECT_EQ(e.field(), "ffn_expert");
  EXPECT_NE(e.message().find("expected an integer, got a list"), std::string::npos) << e.what();
  EXPECT_EQ(error_of(replace(kBase, "layers: 4", "layers: four")).field(), "layers");
  EXPECT_EQ(error_of(replace(kBase, "layers: 4", "layers: 4.5")).field(), "layers");
  EXPECT_EQ(error_of(replace(kBase, "layers: 4", "layers: 0x10")).field(), "layers");
  EXPECT_EQ(error_of(replace(kBase, "layers: 4", "layers: 99999999999")).field(), "layers");
  EXPECT_EQ(error_of(kBase + "gated_ffn: maybe\n").field(), "gated_ffn");
  EXPECT_EQ(error_of(replace(kBase, "name: base", "name: [a]")).field(), "name");
  EXPECT_EQ(error_of(replace(kBase, "name: base", "name: my model")).field(), "name");
  EXPECT_EQ(error_of("- a\n- b\n").field(), "");
  EXPECT_EQ(error_of("").field(), "");
}

TEST(ModelParse, MalformedYaml) {
  const std::string path = kModelData + "/model_malformed.yaml";
  const Error e = load_error(path);
  EXPECT_EQ(e.source(), path);
  EXPECT_NE(e.message().find("YAML syntax error at line "), std::string::npos) << e.what();
}

TEST(ModelParse, RepeatedKey) {
  const Error e = error_of(kBase + "layers: 5\n");
  EXPECT_EQ(e.field(), "layers");
  EXPECT_NE(e.message().find("twice"), std::string::npos);
}

TEST(ModelParse, AttentionRules) {
  // heads must divide hidden unless head_dim is given.
  EXPECT_EQ(error_of(replace(kBase, "heads: 4", "heads: 5")).field(), "attention.heads");
  EXPECT_EQ(
      parse_model(replace(kBase, "heads: 4", "heads: 5\n  head_dim: 16"), "t").attention.head_dim,
      16);
  // gqa needs kv_heads dividing heads.
  const std::string gqa = replace(kBase, "kind: mha", "kind: gqa");
  EXPECT_EQ(error_of(gqa).field(), "attention.kv_heads");
  EXPECT_EQ(error_of(replace(gqa, "heads: 4", "heads: 4\n  kv_heads: 3")).field(),
            "attention.kv_heads");
  EXPECT_EQ(
      parse_model(replace(gqa, "heads: 4", "heads: 4\n  kv_heads: 2"), "t").attention.kv_heads, 2);
  // mha with fewer kv heads is gqa.
  EXPECT_EQ(error_of(replace(kBase, "heads: 4", "heads: 4\n  kv_heads: 2")).field(),
            "attention.kv_heads");
  EXPECT_EQ(error_of(replace(kBase, "kind: mha", "kind: mqa")).field(), "attention.kind");
  // mla fields only for mla, and all of them for mla.
  EXPECT_EQ(error_of(replace(kBase, "heads: 4", "heads: 4\n  v_head_dim: 4")).field(),
            "attention.v_head_dim");
  const std::string mla =
      replace(kBase, "kind: mha\n  heads: 4",
              "kind: mla\n  heads: 4\n  q_lora_rank: 8\n  kv_lora_rank: 4\n  qk_nope_head_dim: 4\n"
              "  qk_rope_head_dim: 2\n  v_head_dim: 4");
  EXPECT_EQ(parse_model(mla, "t").attention.head_dim, 6);
  EXPECT_EQ(error_of(replace(mla, "  kv_lora_rank: 4\n", "")).field(), "attention.kv_lora_rank");
  EXPECT_EQ(error_of(replace(mla, "heads: 4", "heads: 4\n  head_dim: 8")).field(),
            "attention.head_dim");
}

TEST(ModelParse, LayerAndExpertRules) {
  EXPECT_EQ(error_of(kBase + "dense_layers: 4\nffn_dense: 256\n").field(), "dense_layers");
  EXPECT_EQ(error_of(kBase + "dense_layers: 1\n").field(), "ffn_dense");
  const ModelSpec m = parse_model(kBase + "dense_layers: 1\nffn_dense: 256\n", "t");
  EXPECT_EQ(m.moe_layers(), 3);
  EXPECT_EQ(error_of(kBase + "ffn_shared: 0\n").field(), "ffn_shared");
  EXPECT_EQ(error_of(kBase + "dtype_bytes: 3\n").field(), "dtype_bytes");
  // Counts are exact 64-bit integers; dimensions that would overflow them are rejected.
  // One dimension past 2^20 names its field; dimensions each in range can still multiply into
  // an implausible model.
  const Error wide = error_of(replace(kBase, "hidden: 64", "hidden: 2000000000"));
  EXPECT_EQ(wide.field(), "hidden");
  EXPECT_NE(wide.message().find("at most 1048576"), std::string::npos) << wide.what();
  const Error huge = error_of(
      replace(replace(kBase, "hidden: 64", "hidden: 1048576"), "layers: 4", "layers: 32767"));
  EXPECT_NE(huge.message().find("implausibly large"), std::string::npos) << huge.what();
}

TEST(ModelLoad, UnknownNameListsKnownModels) {
  const Error e = load_error("mixtral-9x9b");
  EXPECT_NE(e.message().find("unknown model 'mixtral-9x9b'"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("mixtral-8x7b"), std::string::npos);
  EXPECT_NE(e.message().find("deepseek-r1"), std::string::npos);
}

// A typo gets the nearest name or alias: a prefix, or the fewest edits.
TEST(ModelLoad, ATypoSuggestsTheNearestNameOrAlias) {
  EXPECT_NE(load_error("mixtral-8x7").message().find("; did you mean 'mixtral-8x7b'?"),
            std::string::npos);
  EXPECT_NE(load_error("deepseek-v4").message().find("; did you mean 'deepseek-v3'?"),
            std::string::npos)
      << load_error("deepseek-v4").what();
  EXPECT_EQ(load_error("gpt-oss-900x").message().find("did you mean"), std::string::npos);
}

TEST(ModelLoad, MissingOrUnreadableFileIsNamed) {
  const std::string missing = kModelData + "/model_does_not_exist.yaml";
  EXPECT_EQ(load_error(missing).source(), missing);
  EXPECT_EQ(load_error(kModelData).source(), kModelData);  // a directory
}

}  // namespace
}  // namespace mfabric::workload
