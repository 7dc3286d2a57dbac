// A sweep's surprises (sweep_surprises.h): points that should be faster than their neighbour
// along one field and are not, from hand-made points.
#include "report/sweep_surprises.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mfabric::report {
namespace {

study::SweepRun point(std::size_t index, double seconds, std::int64_t reconfigurations) {
  study::SweepRun run;
  run.index = index;
  run.figures.iteration_time_s = seconds;
  run.figures.reconfiguration = study::ReconfigurationSummary{};
  run.figures.reconfiguration->count = reconfigurations;
  return run;
}

TEST(SweepSurprises, AFasterOcsThatIsSlowerIsNamedWithItsCauses) {
  study::SweepSpec spec;
  spec.fields = {"fabric.reconfiguration", "cluster.link"};
  const auto at = [](const char* delay, const char* link) {
    return study::SweepPoint{{{"fabric.reconfiguration", delay}, {"cluster.link", link}}};
  };
  // At 400G: 1ms, 10us, 100us (out of order on purpose); at 100G: 10us and 100us.
  spec.points = {at("1ms", "400G"), at("10us", "400G"), at("100us", "400G"), at("10us", "100G"),
                 at("100us", "100G")};
  study::SweepResult r;
  r.runs = {point(0, 12.0, 100), point(1, 11.5, 140), point(2, 11.0, 120), point(3, 20.0, 90),
            point(4, 20.01, 90)};
  const std::vector<SweepSurprise> x = sweep_surprises(spec, r);
  // 10us slower than 100us at 400G (by 4.5%): a surprise. At 100G 20.0 against 20.01 is not
  // one (faster), and the links: 400G is faster than 100G everywhere.
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0].field, "fabric.reconfiguration");
  EXPECT_EQ(x[0].point, 1u);
  EXPECT_EQ(x[0].than, 2u);
  EXPECT_NEAR(x[0].slower_by, 11.5 / 11.0 - 1, 1e-12);
  EXPECT_EQ(sweep_surprise_text(spec, x[0]),
            "point 1 (fabric.reconfiguration=10us cluster.link=400G) is 4.5% slower than point 2 "
            "(fabric.reconfiguration=100us cluster.link=400G), though the OCS switches faster; "
            "what the runs show: more reconfigurations (140 vs 120).");
  // A slower link made faster is one too; a failed point is left out.
  r.runs[3].figures.iteration_time_s = 10;  // 100G faster than 400G at 10us
  r.runs[2].figures.error = "failed";
  const std::vector<SweepSurprise> y = sweep_surprises(spec, r);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].field, "cluster.link");
  EXPECT_EQ(y[0].point, 1u);
  EXPECT_EQ(y[0].than, 3u);
  EXPECT_EQ(y[0].expected, "the links are faster");
}

TEST(SweepSurprises, FieldsThatDoNotReadOrAreNotSweptAreLeftAlone) {
  study::SweepSpec spec;
  spec.fields = {"fabric.alpha", "seed"};
  spec.points = {study::SweepPoint{{{"fabric.alpha", "4"}, {"seed", "1"}}},
                 study::SweepPoint{{{"fabric.alpha", "six"}, {"seed", "1"}}},
                 study::SweepPoint{{{"fabric.alpha", "8"}, {"seed", "2"}}}};
  study::SweepResult r;
  r.runs = {point(0, 10, 0), point(1, 12, 0), point(2, 12, 0)};
  EXPECT_TRUE(sweep_surprises(spec, r).empty());  // different seeds: not neighbours
  spec.points[2].fields[1].value = "1";
  ASSERT_EQ(sweep_surprises(spec, r).size(), 1u);
  EXPECT_EQ(sweep_surprises(spec, r)[0].causes, std::vector<std::string>{});
  EXPECT_NE(sweep_surprise_text(spec, sweep_surprises(spec, r)[0]).find("show no cause"),
            std::string::npos);
}

}  // namespace
}  // namespace mfabric::report
