// Which GPUs a filtered trace keeps (report/trace_filter.h): the list syntax, the checks made
// before a run, and stages by rank with spares.
#include "report/trace_filter.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "sim/load_experiment.h"

namespace mfabric::report {
namespace {

std::vector<std::pair<int, int>> ranges(const std::string& text) {
  std::vector<std::pair<int, int>> out;
  for (const GpuRange& r : parse_gpu_list(text))
    out.emplace_back(r.first, r.last);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(GpuList, NumbersAndRanges) {
  EXPECT_EQ(ranges("0-7,64"), (std::vector<std::pair<int, int>>{{0, 7}, {64, 64}}));
  EXPECT_EQ(ranges("3"), (std::vector<std::pair<int, int>>{{3, 3}}));
  EXPECT_EQ(ranges("5,1-2,5"), (std::vector<std::pair<int, int>>{{5, 5}, {1, 2}, {5, 5}}));
  for (const char* bad : {"", "a", "1,", ",1", "1-", "-1", "1-2-3", "1 ,2", "0x10", "99999999999"})
    EXPECT_NE(error_of([&] { parse_gpu_list(bad); }).find("such as 0-7,64"), std::string::npos)
        << bad;
  EXPECT_NE(error_of([&] { parse_gpu_list("7-3"); }).find("runs backwards"), std::string::npos);
}

config::Experiment training(int pp) {
  return sim::parse_experiment(
      "cluster: {servers: 2, gpus_per_server: 4, nics_per_server: 4}\nfabric: fat-tree\n"
      "workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: " +
          std::to_string(pp) + ", ep: 2, global_batch: 4, micro_batch: 1, seq: 256}\n",
      "t.yaml");
}

TEST(TraceFilterChecks, GpusOfTheClusterAndStagesOfTheJob) {
  const config::Experiment e = training(2);
  EXPECT_NO_THROW(check_traced_gpus(parse_gpu_list("0-7"), e));
  EXPECT_NE(error_of([&] {
              check_traced_gpus(parse_gpu_list("2,8"), e);
            }).find("GPU 8 is not in the cluster, whose GPUs are 0 to 7"),
            std::string::npos);
  EXPECT_NO_THROW(check_traced_stage(1, e));
  EXPECT_NE(error_of([&] { check_traced_stage(2, e); }).find("2 pipeline stages"),
            std::string::npos);
  const config::Experiment micro = sim::parse_experiment(
      "cluster: {servers: 2}\nfabric: fat-tree\nworkload: {collective: all-reduce, bytes: 1MiB}\n",
      "m.yaml");
  EXPECT_NE(error_of([&] { check_traced_stage(0, micro); }).find("training job"),
            std::string::npos);
}

TEST(TracedGpus, AStageIsItsRanksAndASpareTakesItsRank) {
  const config::Experiment e = training(2);
  workload::TaskGraph graph(8);
  TraceFilter stage;
  stage.stage = 0;
  EXPECT_EQ(traced_gpus(e, graph, {}, stage),
            (std::vector<bool>{true, true, true, true, false, false, false, false}));
  // Rank 2 moved from GPU 2 to spare GPU 7 (a 4 + 4 cluster of a 4-GPU job would have it):
  // GPU 7 is in stage 0, GPU 2 in none.
  workload::TaskGraph moved(8);
  const std::vector<sim::SpareMove> spares = {{0, 2, 7}};
  EXPECT_EQ(traced_gpus(e, moved, spares, stage),
            (std::vector<bool>{true, true, false, true, false, false, false, true}));
  TraceFilter some;
  some.gpus = parse_gpu_list("6-9");  // beyond the graph's GPUs: ignored
  EXPECT_EQ(traced_gpus(e, graph, {}, some),
            (std::vector<bool>{false, false, false, false, false, false, true, true}));
}

}  // namespace
}  // namespace mfabric::report
