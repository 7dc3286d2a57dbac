#include "workload/parallelism.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/error.h"

namespace mfabric::workload {
namespace {

ParallelismSpec par(int tp, int pp, int ep, int dp) {
  return paper_parallelism(tp, pp, ep, dp);
}

// The field of the error the layout throws, or "" if none.
std::string error_field(const ParallelismSpec& p, const ModelSpec& m, int gpus_per_server,
                        int gpus) {
  try {
    RankLayout layout(p, m, gpus_per_server, gpus);
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

// Layouts under both conventions, each valid for Mixtral 8x7B (8 experts) on 8-GPU servers.
std::vector<ParallelismSpec> layouts() {
  return {par(1, 1, 1, 1),
          par(2, 3, 4, 2),
          par(4, 4, 8, 1),
          par(8, 8, 8, 2),
          par(1, 4, 8, 4),
          par(4, 2, 2, 3),
          megatron_parallelism(2, 8, 8, 8),        // EP 8 of TP 2 x DP 8: expert-DP 2
          megatron_parallelism(4, 2, 8, 4, 2),     // ETP 2: EP x ETP 16 of 16
          megatron_parallelism(2, 2, 4, 4, 1, 2),  // CP 2: 16 GPUs a stage, expert-DP 4
          megatron_parallelism(1, 1, 2, 2)};       // EP groups of 2 share a server
}

std::string text(const ParallelismSpec& p) {
  return parallelism_text(p);
}

TEST(RankLayout, FormulaAndRoundTrip) {
  const ModelSpec m = load_model("mixtral-8x7b");
  for (const ParallelismSpec& p : layouts()) {
    const RankLayout layout(p, m, 8);
    SCOPED_TRACE(text(p));
    const int stage = p.tp * p.cp * p.dense_dp();
    ASSERT_EQ(layout.stage_gpus(), stage);
    ASSERT_EQ(layout.gpus(), stage * p.pp);
    for (int g = 0; g < layout.gpus(); ++g) {
      const RankCoord c = layout.coord(g);
      EXPECT_EQ(layout.gpu(c), g);
      EXPECT_EQ(g, c.tp + p.tp * (c.cp + p.cp * c.dp) + stage * c.pp);
      const ExpertCoord x = layout.expert_coord(g);
      const int etp = p.expert_tp();
      EXPECT_EQ(g % stage, x.etp + etp * (x.ep + p.ep * x.edp));
      EXPECT_LT(x.edp, p.expert_dp());
      if (p.paper()) {
        // The paper's order, tp + TP x (ep + EP x (dp + DP x pp)).
        EXPECT_EQ(x.etp, c.tp);
        EXPECT_EQ(g, c.tp + p.tp * (x.ep + p.ep * (x.edp + p.dp * c.pp)));
      }
    }
  }
  const RankLayout layout(par(2, 3, 4, 2), m, 8);
  // tp 1, ep 3, dp 1, pp 2 -> 1 + 2 x (3 + 4 x (1 + 2 x 2)) = 47: dense DP index 3 + 4 x 1.
  const RankCoord c = layout.coord(47);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.dp, 7);
  EXPECT_EQ(c.pp, 2);
  EXPECT_EQ(layout.expert_coord(47).ep, 3);
  EXPECT_EQ(layout.expert_coord(47).edp, 1);
  EXPECT_EQ(layout.gpu(RankCoord{.tp = 1, .cp = 0, .dp = 7, .pp = 2}), 47);
  EXPECT_THROW(layout.coord(layout.gpus()), Error);
  EXPECT_THROW(layout.coord(-1), Error);
  EXPECT_THROW(layout.gpu(RankCoord{.tp = 2, .cp = 0, .dp = 0, .pp = 0}), Error);
  EXPECT_THROW(layout.gpu(3, 0), Error);
}

TEST(RankLayout, GroupsShareTheRightCoordinates) {
  const ModelSpec m = load_model("mixtral-8x7b");
  for (const ParallelismSpec& p : layouts()) {
    const RankLayout layout(p, m, 8);
    SCOPED_TRACE(text(p));
    for (int g = 0; g < layout.gpus(); ++g) {
      const RankCoord c = layout.coord(g);
      const ExpertCoord x = layout.expert_coord(g);
      const auto tp = layout.tp_group(g);
      ASSERT_EQ(tp.size(), static_cast<std::size_t>(p.tp));
      for (std::size_t i = 0; i < tp.size(); ++i) {
        const RankCoord o = layout.coord(tp[i]);
        EXPECT_EQ(o.tp, static_cast<int>(i));
        EXPECT_EQ(o.cp, c.cp);
        EXPECT_EQ(o.dp, c.dp);
        EXPECT_EQ(o.pp, c.pp);
      }
      const auto cp = layout.cp_group(g);
      ASSERT_EQ(cp.size(), static_cast<std::size_t>(p.cp));
      for (std::size_t i = 0; i < cp.size(); ++i) {
        const RankCoord o = layout.coord(cp[i]);
        EXPECT_EQ(o.cp, static_cast<int>(i));
        EXPECT_EQ(o.tp, c.tp);
        EXPECT_EQ(o.dp, c.dp);
      }
      const auto ep = layout.ep_group(g);
      ASSERT_EQ(ep.size(), static_cast<std::size_t>(p.ep));
      for (std::size_t i = 0; i < ep.size(); ++i) {
        const ExpertCoord o = layout.expert_coord(ep[i]);
        EXPECT_EQ(o.ep, static_cast<int>(i));
        EXPECT_EQ(o.etp, x.etp);
        EXPECT_EQ(o.edp, x.edp);
        EXPECT_EQ(layout.coord(ep[i]).pp, c.pp);
      }
      // An EP group lies in one block of EP x ETP consecutive GPUs: mFabric's region.
      const int block = p.ep_group_gpus();
      EXPECT_EQ(ep.front() / block, ep.back() / block);
      const auto dense = layout.dense_dp_group(g);
      ASSERT_EQ(dense.size(), static_cast<std::size_t>(p.dense_dp() * p.cp));
      EXPECT_TRUE(std::is_sorted(dense.begin(), dense.end()));
      for (int o : dense) {
        EXPECT_EQ(layout.coord(o).tp, c.tp);
        EXPECT_EQ(layout.coord(o).pp, c.pp);
      }
      const auto expert = layout.expert_dp_group(g);
      ASSERT_EQ(expert.size(), static_cast<std::size_t>(p.expert_dp()));
      for (std::size_t i = 0; i < expert.size(); ++i) {
        const ExpertCoord o = layout.expert_coord(expert[i]);
        EXPECT_EQ(o.edp, static_cast<int>(i));
        EXPECT_EQ(o.etp, x.etp);
        EXPECT_EQ(o.ep, x.ep);
        EXPECT_EQ(layout.coord(expert[i]).pp, c.pp);
      }
      // Every group contains the GPU itself.
      for (const auto* group : {&tp, &cp, &ep, &dense, &expert})
        EXPECT_NE(std::find(group->begin(), group->end(), g), group->end());
    }
  }
}

// Under Megatron's convention with ETP 1, an EP group of 8 is one server's GPUs, whatever TP is:
// the all-to-all stays on NVSwitch, where the paper's convention spreads it over TP x EP GPUs.
TEST(RankLayout, MegatronEpGroupOfEightIsOneServer) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const RankLayout megatron(megatron_parallelism(4, 4, 8, 8), m, 8, 128);
  EXPECT_EQ(megatron.region_servers(), 1);
  EXPECT_EQ(megatron.ep_group(0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(megatron.expert_dp_group(0), (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(megatron.tp_group(5), (std::vector<int>{4, 5, 6, 7}));
  const RankLayout paper(par(4, 4, 8, 1), m, 8, 128);
  EXPECT_EQ(paper.region_servers(), 4);
  EXPECT_EQ(paper.ep_group(0), (std::vector<int>{0, 4, 8, 12, 16, 20, 24, 28}));
}

TEST(RankLayout, Mixtral8x22bEpGroupIsOneGpuPerServerOfEightServers) {
  const ModelSpec m = load_model("mixtral-8x22b");
  const RankLayout layout(par(8, 8, 8, 2), m, 8, 1024);  // the paper's 1024 GPUs
  EXPECT_EQ(layout.region_servers(), 8);
  std::set<std::vector<int>> seen;
  for (int g = 0; g < layout.gpus(); ++g) {
    const auto group = layout.ep_group(g);
    ASSERT_EQ(group.size(), 8u);
    std::set<int> servers;
    for (int member : group)
      servers.insert(member / 8);
    EXPECT_EQ(servers.size(), 8u);                       // one GPU per server
    EXPECT_EQ(*servers.rbegin() - *servers.begin(), 7);  // a contiguous block
    EXPECT_EQ(*servers.begin() % 8, 0);                  // aligned: region = servers [8k, 8k+8)
    for (int member : group)
      EXPECT_EQ(member % 8, g % 8);  // the same local GPU index (tp rank) on each server
    seen.insert(group);
  }
  EXPECT_EQ(seen.size(), 1024u / 8);
  EXPECT_EQ(layout.ep_group(0), (std::vector<int>{0, 8, 16, 24, 32, 40, 48, 56}));
  EXPECT_EQ(layout.tp_group(9), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(layout.expert_dp_group(0), (std::vector<int>{0, 64}));
  EXPECT_EQ(layout.dense_dp_group(0).size(), 16u);
}

TEST(RankLayout, RegionServers) {
  EXPECT_EQ(RankLayout(par(8, 8, 8, 2), load_model("mixtral-8x22b"), 8).region_servers(), 8);
  EXPECT_EQ(RankLayout(par(4, 4, 8, 1), load_model("mixtral-8x7b"), 8).region_servers(), 4);
  EXPECT_EQ(RankLayout(par(1, 4, 16, 1), load_model("qwen-moe"), 8).region_servers(), 2);
  EXPECT_EQ(RankLayout(par(1, 4, 32, 1), load_model("qwen-moe-32"), 8).region_servers(), 4);
  EXPECT_EQ(RankLayout(par(1, 16, 64, 1), load_model("deepseek-r1"), 8).region_servers(), 8);
  // Two EP groups share a server.
  EXPECT_EQ(RankLayout(par(1, 1, 4, 2), load_model("mixtral-8x7b"), 8).region_servers(), 1);
}

TEST(RankLayout, StageSplit) {
  const RankLayout ds(par(1, 16, 64, 1), load_model("deepseek-r1"), 8, 1024);
  int total = 0;
  for (int s = 0; s < 16; ++s) {
    EXPECT_EQ(ds.stage_layers(s), s < 13 ? 4 : 3) << s;
    EXPECT_EQ(ds.chunk_first_layer(s), total) << s;
    total += ds.stage_layers(s);
  }
  EXPECT_EQ(total, 61);
  EXPECT_EQ(ds.chunk_first_layer(13), 52);
  EXPECT_EQ(ds.chunk_first_layer(15), 58);
  EXPECT_THROW(ds.stage_layers(16), Error);
  EXPECT_THROW(ds.chunk_first_layer(-1), Error);

  const RankLayout mx(par(8, 8, 8, 2), load_model("mixtral-8x22b"), 8);
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(mx.stage_layers(s), 7);
    EXPECT_EQ(mx.chunk_first_layer(s), 7 * s);
  }
}

// Megatron-LM's uneven splits, by hand: DeepSeek-V3's 61 layers with the embedding and the loss
// counted are 63 slots, on PP 9 seven each: the first stage 6 layers, the last 6, the rest 7.
TEST(RankLayout, PipelineSplitCountsTheEmbeddingAndTheLoss) {
  const ModelSpec ds = load_model("deepseek-r1");
  ParallelismSpec p = par(1, 9, 8, 1);
  p.split.embedding = p.split.loss = true;
  const RankLayout layout(p, ds, 8);
  std::vector<int> layers;
  for (int s = 0; s < 9; ++s)
    layers.push_back(layout.stage_layers(s));
  EXPECT_EQ(layers, (std::vector<int>{6, 7, 7, 7, 7, 7, 7, 7, 6}));
  EXPECT_EQ(layout.chunk_first_layer(1), 6);
  EXPECT_EQ(layout.chunk_first_layer(8), 55);
  // First and last stage fixed, the rest even: 61 - 4 - 5 = 52 over 4 middle stages, 13 each.
  ParallelismSpec q = par(1, 6, 8, 1);
  q.split.first = 4;
  q.split.last = 5;
  const RankLayout fixed(q, ds, 8);
  EXPECT_EQ(fixed.stage_layers(0), 4);
  EXPECT_EQ(fixed.stage_layers(1), 13);
  EXPECT_EQ(fixed.stage_layers(4), 13);
  EXPECT_EQ(fixed.stage_layers(5), 5);
  EXPECT_EQ(fixed.chunk_first_layer(5), 56);
  // Only the first fixed: 61 - 1 = 60 over the other 5 stages.
  q.split.last = 0;
  q.split.first = 1;
  EXPECT_EQ(RankLayout(q, ds, 8).stage_layers(5), 12);
}

TEST(RankLayout, PipelineSplitErrorsNameTheField) {
  const ModelSpec ds = load_model("deepseek-r1");
  const auto field = [&](int pp, PipelineSplit split) {
    ParallelismSpec p = par(1, pp, 8, 1);
    p.split = split;
    return error_field(p, ds, 8, 0);
  };
  EXPECT_EQ(field(8, {.embedding = true, .loss = true}), "pipeline");  // 63 slots over 8
  EXPECT_EQ(field(8, {.first = 5, .last = 5}), "pipeline");            // 51 over 6 stages
  EXPECT_EQ(field(1, {.first = 5}), "pipeline.first");                 // one stage
  EXPECT_EQ(field(8, {.first = -1}), "pipeline.first");
  EXPECT_EQ(field(8, {.first = 5, .embedding = true}), "pipeline");  // both ways at once
  EXPECT_EQ(field(2, {.first = 61}), "pipeline");                    // nothing left for stage 1
  EXPECT_EQ(field(7, {.embedding = true, .loss = true}), "");        // 63 slots, 9 a stage
}

TEST(ParallelismValidation, ErrorsNameTheField) {
  const ModelSpec m = load_model("mixtral-8x7b");
  EXPECT_EQ(error_field(par(4, 4, 8, 1), m, 8, 128), "");
  EXPECT_EQ(error_field(par(4, 4, 8, 1), m, 8, 256), "gpus");  // product != gpus
  EXPECT_EQ(error_field(par(4, 4, 16, 1), load_model("qwen-moe"), 8, 0), "");
  EXPECT_EQ(error_field(par(1, 4, 16, 1), m, 8, 0), "ep");  // 8 experts % 16
  EXPECT_EQ(error_field(par(1, 4, 3, 1), m, 8, 0), "ep");   // 8 experts % 3 (and 3 vs 8 GPUs)
  EXPECT_EQ(error_field(par(3, 1, 1, 1), m, 8, 0), "tp");   // 3 does not divide 8
  EXPECT_EQ(error_field(par(16, 1, 1, 1), m, 8, 0), "tp");  // TP across servers
  EXPECT_EQ(error_field(par(1, 33, 1, 1), m, 8, 0), "pp");  // 32 layers
  EXPECT_EQ(error_field(par(0, 1, 1, 1), m, 8, 0), "tp");
  EXPECT_EQ(error_field(par(1, 0, 1, 1), m, 8, 0), "pp");
  EXPECT_EQ(error_field(par(1, 1, -1, 1), m, 8, 0), "ep");
  EXPECT_EQ(error_field(par(1, 1, 1, 0), m, 8, 0), "dp");
  EXPECT_EQ(error_field(par(1, 1, 1, 1), m, 0, 0), "gpus_per_server");
  EXPECT_EQ(error_field(par(1, 1, 1, 1), m, 8, -8), "gpus");
  EXPECT_EQ(error_field(par(2, 1, 6, 1), load_model("qwen1.5-moe-a2.7b"), 8, 0), "ep");  // 12 GPUs
  EXPECT_EQ(error_field(par(8, 61, 256, 100000), load_model("deepseek-r1"), 8, 0),
            "gpus");  // overflows int

  try {
    RankLayout(par(1, 4, 16, 1), m, 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("16 must divide the 8 experts of mixtral-8x7b"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mfabric::workload
