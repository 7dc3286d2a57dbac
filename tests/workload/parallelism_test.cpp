#include "workload/parallelism.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/error.h"

namespace mfabric::workload {
namespace {

ParallelismSpec par(int tp, int pp, int ep, int dp) {
  ParallelismSpec p;
  p.tp = tp;
  p.pp = pp;
  p.ep = ep;
  p.dp = dp;
  return p;
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

TEST(RankLayout, FormulaAndRoundTrip) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const ParallelismSpec configs[] = {par(1, 1, 1, 1), par(2, 3, 4, 2), par(4, 4, 8, 1),
                                     par(8, 8, 8, 2), par(1, 4, 8, 4), par(4, 2, 2, 3)};
  for (const ParallelismSpec& p : configs) {
    const RankLayout layout(p, m, 8);
    SCOPED_TRACE(::testing::Message()
                 << "tp " << p.tp << " pp " << p.pp << " ep " << p.ep << " dp " << p.dp);
    ASSERT_EQ(layout.gpus(), p.tp * p.pp * p.ep * p.dp);
    for (int g = 0; g < layout.gpus(); ++g) {
      const RankCoord c = layout.coord(g);
      EXPECT_EQ(layout.gpu(c), g);
      EXPECT_EQ(g, c.tp + p.tp * (c.ep + p.ep * (c.dp + p.dp * c.pp)));
    }
  }
  const RankLayout layout(par(2, 3, 4, 2), m, 8);
  // tp 1, ep 3, dp 1, pp 2 -> 1 + 2 x (3 + 4 x (1 + 2 x 2)) = 47.
  const RankCoord c = layout.coord(47);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.ep, 3);
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(c.pp, 2);
  EXPECT_EQ(layout.gpu({1, 3, 1, 2}), 47);
  EXPECT_THROW(layout.coord(layout.gpus()), Error);
  EXPECT_THROW(layout.coord(-1), Error);
  EXPECT_THROW(layout.gpu({2, 0, 0, 0}), Error);
}

TEST(RankLayout, GroupsShareTheRightCoordinates) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const RankLayout layout(par(2, 3, 4, 2), m, 8);
  for (int g = 0; g < layout.gpus(); ++g) {
    const RankCoord c = layout.coord(g);
    const auto tp = layout.tp_group(g);
    ASSERT_EQ(tp.size(), 2u);
    for (std::size_t i = 0; i < tp.size(); ++i) {
      const RankCoord o = layout.coord(tp[i]);
      EXPECT_EQ(o.tp, static_cast<int>(i));
      EXPECT_EQ(o.ep, c.ep);
      EXPECT_EQ(o.dp, c.dp);
      EXPECT_EQ(o.pp, c.pp);
    }
    const auto ep = layout.ep_group(g);
    ASSERT_EQ(ep.size(), 4u);
    for (std::size_t i = 0; i < ep.size(); ++i) {
      const RankCoord o = layout.coord(ep[i]);
      EXPECT_EQ(o.ep, static_cast<int>(i));
      EXPECT_EQ(o.tp, c.tp);
      EXPECT_EQ(o.dp, c.dp);
      EXPECT_EQ(o.pp, c.pp);
    }
    const auto dense = layout.dense_dp_group(g);
    ASSERT_EQ(dense.size(), 8u);
    EXPECT_TRUE(std::is_sorted(dense.begin(), dense.end()));  // dp-major, then ep
    for (std::size_t i = 0; i < dense.size(); ++i) {
      const RankCoord o = layout.coord(dense[i]);
      EXPECT_EQ(o.dp, static_cast<int>(i) / 4);
      EXPECT_EQ(o.ep, static_cast<int>(i) % 4);
      EXPECT_EQ(o.tp, c.tp);
      EXPECT_EQ(o.pp, c.pp);
    }
    const auto expert = layout.expert_dp_group(g);
    ASSERT_EQ(expert.size(), 2u);
    for (std::size_t i = 0; i < expert.size(); ++i) {
      const RankCoord o = layout.coord(expert[i]);
      EXPECT_EQ(o.dp, static_cast<int>(i));
      EXPECT_EQ(o.tp, c.tp);
      EXPECT_EQ(o.ep, c.ep);
      EXPECT_EQ(o.pp, c.pp);
    }
    // Every group contains the GPU itself.
    for (const auto* group : {&tp, &ep, &dense, &expert})
      EXPECT_NE(std::find(group->begin(), group->end(), g), group->end());
  }
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
    EXPECT_EQ(ds.first_layer(s), total) << s;
    total += ds.stage_layers(s);
  }
  EXPECT_EQ(total, 61);
  EXPECT_EQ(ds.first_layer(13), 52);
  EXPECT_EQ(ds.first_layer(15), 58);
  EXPECT_THROW(ds.stage_layers(16), Error);
  EXPECT_THROW(ds.first_layer(-1), Error);

  const RankLayout mx(par(8, 8, 8, 2), load_model("mixtral-8x22b"), 8);
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(mx.stage_layers(s), 7);
    EXPECT_EQ(mx.first_layer(s), 7 * s);
  }
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
