#include "workload/calibration.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/yaml_fields.h"
#include "workload/embedded_yaml.h"
#include "workload/tiny_model.h"
#include "workload/training.h"

namespace mfabric::workload {
namespace {

Calibration parse(const std::string& yaml) {
  return parse_calibration(parse_yaml(yaml, "test.yaml")["calibration"], "test.yaml", "calibration",
                           "");
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Calibration, ShippedNamesAreTheirFileNamesAndEachParses) {
  const std::vector<std::string> names = calibration_names();
  ASSERT_EQ(static_cast<int>(names.size()), detail::kCalibrationsSize);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    EXPECT_EQ(load_calibration(name).name, name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "paper-measurement"), names.end());
}

TEST(Calibration, RooflineIsWhatTheModelAssumesWithoutOne) {
  const Calibration shipped = load_calibration("roofline");
  const Calibration built_in;
  EXPECT_EQ(shipped.compute.attention, built_in.compute.attention);
  EXPECT_EQ(shipped.compute.dense_gemm, built_in.compute.dense_gemm);
  EXPECT_EQ(shipped.compute.expert_gemm, built_in.compute.expert_gemm);
  EXPECT_EQ(shipped.generic, built_in.generic);
  EXPECT_FALSE(shipped.optimizer);
  EXPECT_TRUE(shipped.replay.empty());
  EXPECT_TRUE(shipped.collectives.is_free());
  EXPECT_EQ(Efficiency{}.expert_gemm, 0.5);
}

TEST(Calibration, NamesAreCaseInsensitive) {
  EXPECT_EQ(load_calibration("Paper-Measurement").name, "paper-measurement");
}

TEST(Calibration, BaseThenOwnFieldsAndEachKindWinsOverTheShared) {
  const Calibration c = parse(R"(
calibration:
  base: paper-measurement
  compute: {attention: 0.3, optimizer: 0.8}
  collectives:
    efficiency: 0.9
    overhead: 20us
    all_to_all: {efficiency: 0.7}
    p2p: {overhead: 5us}
)");
  EXPECT_EQ(c.compute.attention, 0.3);
  EXPECT_EQ(c.compute.expert_gemm, load_calibration("paper-measurement").compute.expert_gemm);
  EXPECT_EQ(c.compute.dense_gemm, 0.6);
  ASSERT_TRUE(c.optimizer);
  EXPECT_EQ(*c.optimizer, 0.8);
  EXPECT_EQ(c.collectives.all_reduce.efficiency, 0.9);
  EXPECT_EQ(c.collectives.all_reduce.overhead, Time::microseconds(20));
  EXPECT_EQ(c.collectives.all_to_all.efficiency, 0.7);
  EXPECT_EQ(c.collectives.all_to_all.overhead, Time::microseconds(20));
  EXPECT_EQ(c.collectives.p2p.efficiency, 0.9);
  EXPECT_EQ(c.collectives.p2p.overhead, Time::microseconds(5));
  EXPECT_EQ(&c.collectives.of(CollectiveKind::Barrier), &c.collectives.all_reduce);
  EXPECT_EQ(&c.collectives.of(CollectiveKind::AllToAll), &c.collectives.all_to_all);
  EXPECT_EQ(c.name, "paper-measurement+");
}

TEST(Calibration, BadValuesNameTheFieldAndTheRange) {
  EXPECT_EQ(error_of("calibration: {compute: {expert_gemm: 0}}"),
            "test.yaml: calibration.compute.expert_gemm: expected a fraction of peak FLOP/s in "
            "(0, 1], got 0");
  EXPECT_EQ(error_of("calibration: {compute: {attention: 1.5}}"),
            "test.yaml: calibration.compute.attention: expected a fraction of peak FLOP/s in "
            "(0, 1], got 1.5");
  EXPECT_EQ(error_of("calibration: {compute: {optimizer: -1}}"),
            "test.yaml: calibration.compute.optimizer: expected a fraction of HBM bandwidth in "
            "(0, 1], got -1");
  EXPECT_EQ(error_of("calibration: {collectives: {efficiency: 0.001}}"),
            "test.yaml: calibration.collectives.efficiency: expected at least 0.01 of the line "
            "rate, got 0.001");
  EXPECT_EQ(error_of("calibration: {collectives: {all_to_all: {overhead: 2s}}}"),
            "test.yaml: calibration.collectives.all_to_all.overhead: expected a time from 0 to 1s "
            "per step, got 2s");
  EXPECT_NE(error_of("calibration: {collectives: {overhead: 20}}")
                .find("test.yaml: calibration.collectives.overhead:"),
            std::string::npos);
  EXPECT_NE(error_of("calibration: {compute: {expert_gem: 0.2}}")
                .find("test.yaml: calibration.compute.expert_gem: unknown field"),
            std::string::npos);
  EXPECT_EQ(error_of("calibration: {base: nope}"),
            "test.yaml: calibration.base: unknown calibration 'nope' (known: h100-measured, "
            "h200-measured, h800-measured, paper-measurement, roofline; or a .yaml file)");
  EXPECT_EQ(error_of("calibration: [1, 2]"),
            "test.yaml: calibration: expected a calibration name such as 'paper-measurement' or "
            "a map {base, compute, collectives, kernels}, got a list");
}

TEST(Calibration, ExpertTimeAsMeasuredIsOneOfTwoFormsInRange) {
  const Calibration c =
      parse_calibration(YAML::Load("{base: h200-measured, compute: {expert_layer_busiest: 150ms}}"),
                        "t.yaml", "calibration", "");
  EXPECT_EQ(c.expert_layer_busiest, Time::milliseconds(150));
  EXPECT_TRUE(c.kernels);  // the base's tables stay for the other ops
  EXPECT_NE(error_of("calibration: {compute: {expert_per_token: 1us, expert_layer_busiest: 1ms}}")
                .find("not both"),
            std::string::npos);
  EXPECT_NE(error_of("calibration: {compute: {expert_per_token: 2ms}}")
                .find("calibration.compute.expert_per_token: expected a time above 0 and at most "
                      "1ms, got 2ms"),
            std::string::npos);
  EXPECT_NE(error_of("calibration: {compute: {expert_layer_busiest: 0s}}")
                .find("calibration.compute.expert_layer_busiest"),
            std::string::npos);
}

TEST(Calibration, AStatedEfficiencyWinsOverMeasuredTablesAndTimes) {
  // A sweep of compute.expert_gemm must move the experts on any base: the stated efficiency
  // replaces the base's measured expert table and its measured time per token; the other ops
  // keep their tables.
  const Calibration measured =
      parse_calibration(YAML::Load("{base: h800-measured, compute: {expert_gemm: 0.25}}"), "t.yaml",
                        "calibration", "");
  ASSERT_TRUE(measured.kernels);
  EXPECT_FALSE(measured.kernels->find(KernelOp::Expert));
  EXPECT_TRUE(measured.kernels->find(KernelOp::Attention));
  EXPECT_TRUE(measured.kernels->find(KernelOp::Permute));
  EXPECT_TRUE(load_calibration("h800-measured").kernels->find(KernelOp::Expert));  // not changed
  EXPECT_EQ(measured.compute.expert_gemm, 0.25);
  const Calibration paper =
      parse_calibration(YAML::Load("{base: paper-measurement, compute: {expert_gemm: 0.25}}"),
                        "t.yaml", "calibration", "");
  EXPECT_FALSE(paper.expert_per_token);
  EXPECT_EQ(paper.compute.expert_gemm, 0.25);
  // Both in one file: the measured time is the statement that wins.
  const Calibration both =
      parse_calibration(YAML::Load("{compute: {expert_gemm: 0.25, expert_per_token: 1us}}"),
                        "t.yaml", "calibration", "");
  EXPECT_EQ(both.expert_per_token, Time::microseconds(1));
}

TEST(Calibration, AFileBasedOnItselfIsOneError) {
  const auto dir = std::filesystem::temp_directory_path() / "mfabric_calibration_cycle";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "loop.yaml").string();
  std::ofstream(path) << "name: loop\nbase: " << path << "\n";
  try {
    load_calibration(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is based on itself"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Calibration, AFilesReplayIsRelativeToTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / "mfabric_calibration_file";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "mine.yaml").string();
  std::ofstream(path) << "name: mine\ncompute: {replay: measured.csv}\n";
  EXPECT_EQ(load_calibration(path).replay, (dir / "measured.csv").string());
  std::ofstream(dir / "nameless.yaml") << "compute: {attention: 0.5}\n";
  try {
    load_calibration((dir / "nameless.yaml").string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("name: a calibration file needs a name"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

// The optimizer step, by hand: the tiny model on one stage (PP 1), TP 1, EP 2. Parameters a GPU
// holds: 4 layers of attention (q, k, v, o: 4 x 64 x 64), 3 routers (64 x 4 experts), the dense
// layer's gated FFN (3 x 64 x 128), input and output embeddings (2 x 1000 x 64), and 2 local
// experts in each of 3 MoE layers (3 x 64 x 32 each).
TEST(Calibration, OptimizerStepMovesThirtyBytesPerParameterAtTheCalibratedBandwidth) {
  TrainingSpec spec = testing::tiny_job(paper_parallelism(1, 1, 2, 1), 2, 2, 16, 4);
  spec.optimizer_efficiency = 0.5;
  const double params =
      4 * 4 * 64 * 64 + 3 * 64 * 4 + 3 * 64 * 128 + 2 * 1000 * 64 + 3 * 2 * (3 * 64 * 32);
  const Time expected = Time::from_seconds(params * 30 / (3.35e12 * 0.5));
  const TaskGraph g = build_training_graph(spec, synthetic_trace_for(spec, {}, 1));
  int steps = 0;
  for (TaskId id = 0; id < static_cast<TaskId>(g.size()); ++id) {
    const Task& t = g.task(id);
    if (t.op != Op::Optimizer) continue;
    ++steps;
    EXPECT_EQ(t.kind, TaskKind::Compute);
    EXPECT_EQ(t.phase, Phase::Update);
    EXPECT_EQ(t.duration(), expected);
    // After the gradient all-reduces of its GPU.
    bool after_reduce = false;
    for (TaskId d : g.deps(id))
      after_reduce |= g.task(d).op == Op::ExpertGradAllReduce || g.task(d).traffic == Traffic::DP;
    EXPECT_TRUE(after_reduce || spec.parallelism.dp == 1);
  }
  EXPECT_EQ(steps, 2);
  spec.optimizer_efficiency.reset();
  const TaskGraph none = build_training_graph(spec, synthetic_trace_for(spec, {}, 1));
  for (const Task& t : none.tasks())
    EXPECT_NE(t.op, Op::Optimizer);
}

}  // namespace
}  // namespace mfabric::workload
