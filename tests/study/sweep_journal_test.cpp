// The sweep's resume journal (study/sweep_journal.h, docs/sweep.md "Outputs and
// resuming"): every record read strictly, a torn last line dropped and cut off, the journal
// created only by a point that finished, and an interrupted sweep resuming to the results of
// one that was not.
#include "study/sweep_journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/json_text.h"
#include "mpi/world.h"
#include "scratch_dir.h"
#include "study/sweep_driver.h"
#include "test_text.h"

namespace mfabric::study {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::error_text;
using testing::slurp;

// Two points on 2 servers: each runs in a few milliseconds.
const char* const kJournalSweep = R"(
experiment:
  cluster: {servers: 2, link: 400G}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 4, global_batch: 8}
grid:
  cluster.link: [100G, 200G, 400G]
)";

// A record as a finished mFabric point writes it.
json good_record(const SweepSpec& spec) {
  SweepRun run;
  run.index = 1;
  run.fingerprint = point_fingerprint(spec, 1);
  CompareRun& f = run.figures;
  f.model = "mixtral-8x7b";
  f.link_gbps = 200;
  f.fabric = "mfabric";
  f.fabric_spec = "mfabric:alpha=6";
  f.gpus = 16;
  f.iteration_time_s = 0.25;
  f.tokens_per_s = 1.5e6;
  f.tokens_per_s_per_gpu = 1.5e6 / 16;
  f.model_tflops_per_gpu = 123.5;
  f.mfu = 0.125;
  f.busiest_expert_over_mean = 2.25;
  f.cost_built.nics = 1000;
  f.cost_paper.nics = 2000;
  f.cost_paper.fibres = 0.5;
  ReconfigurationSummary r;
  r.policy = "block";
  r.planner = "greedy";
  r.count = 3;
  r.time_s = 75e-3;
  r.held_time_s = 1e-6;
  r.circuit_bytes = 1e12;
  r.eps_bytes = 4e9;
  r.critical_holds = 2;
  r.critical_held_s = 0.5e-6;
  f.reconfiguration = r;
  f.wall_time_s = 0.01;
  run.timeline = {{0, 25e-3, true}, {25e-3, 0.1, false}};
  return sweep_run_json(spec, run);
}

class SweepJournalTest : public testing::ScratchDirTest {
 protected:
  SweepJournalTest() : ScratchDirTest("mfabric_sweep_journal_test") {}
  // A journal of a good record (line 1) and `second` (line 2); the error reading it.
  std::string read_error(const SweepSpec& spec, const std::string& second) {
    const std::string path =
        write("points.jsonl", json_text(good_record(spec), -1) + "\n" + second + "\n");
    return error_text([&] { read_journal(path, spec); });
  }
};

TEST_F(SweepJournalTest, AGoodRecordIsResumed) {
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  const std::string path =
      write("points.jsonl", "\n" + json_text(good_record(spec), -1) + "\n  \n");
  const JournalContents j = read_journal(path, spec);
  ASSERT_EQ(j.points.size(), 1u);  // blank lines are skipped
  EXPECT_EQ(j.points.at(1).figures.gpus, 16);
  EXPECT_EQ(j.points.at(1).figures.reconfiguration->count, 3);
  EXPECT_EQ(j.points.at(1).figures.tokens_per_s_per_gpu, 1.5e6 / 16);
  EXPECT_EQ(j.points.at(1).figures.model_tflops_per_gpu, 123.5);
  EXPECT_EQ(j.points.at(1).figures.mfu, 0.125);
  EXPECT_EQ(j.points.at(1).figures.busiest_expert_over_mean, 2.25);
  // What a comparison's journal adds: the critical holds and the timeline, exactly.
  EXPECT_EQ(j.points.at(1).figures.reconfiguration->critical_holds, 2);
  EXPECT_EQ(j.points.at(1).figures.reconfiguration->critical_held_s, 0.5e-6);
  ASSERT_EQ(j.points.at(1).timeline.size(), 2u);
  EXPECT_EQ(j.points.at(1).timeline[0].end_s, 25e-3);
  EXPECT_TRUE(j.points.at(1).timeline[0].reconfiguration);
  EXPECT_EQ(j.points.at(1).timeline[1].start_s, 25e-3);
  EXPECT_FALSE(j.points.at(1).timeline[1].reconfiguration);
  EXPECT_EQ(j.torn_line, 0u);
}

// Every member is checked: a record edited by hand or corrupted on disk is one line naming the
// journal, the line and the member, never a value taken on trust (1e30 GPUs is undefined
// behaviour when converted to an int, a negative time a wrong table, a denormal a failed plot).
TEST_F(SweepJournalTest, EveryMemberOfARecordIsChecked) {
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  struct Case {
    std::string pointer;  // JSON pointer into the record
    json value;
    std::string field;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"/gpus", 1e30, "gpus", "expected a whole number from 0 to 2147483647, got 1e+30"},
      {"/gpus", -1, "gpus", "whole number"},
      {"/gpus", 2.5, "gpus", "whole number"},
      {"/gpus", "16", "gpus", "whole number"},
      {"/index", 100000, "index", "from 0 to 99999"},
      {"/index", -3, "index", "whole number"},
      {"/fingerprint", "ABC", "fingerprint", "16 hexadecimal digits"},
      {"/iteration_time_s", -5, "iteration_time_s", "expected a time in seconds"},
      {"/iteration_time_s", 1e-13, "iteration_time_s", "1e-12 (1 ps)"},
      {"/iteration_time_s", 1e7, "iteration_time_s", "to 9223372"},
      {"/iteration_time_s", "0.5", "iteration_time_s", "expected a number"},
      {"/tokens_per_s", 5e-324, "tokens_per_s", "from 1e-30 to 1e+30"},
      {"/tokens_per_s", 1e31, "tokens_per_s", "from 1e-30 to 1e+30"},
      {"/link_gbps", -400, "link_gbps", "from 1e-30"},
      {"/mfu", -0.5, "mfu", "from 1e-30"},
      {"/busiest_expert_over_mean", "2", "busiest_expert_over_mean", "expected a number"},
      {"/model_tflops_per_gpu", "5", "model_tflops_per_gpu", "expected a number"},
      {"/tokens_per_s_per_gpu", 1e31, "tokens_per_s_per_gpu", "from 1e-30 to 1e+30"},
      {"/tokens_per_s_per_musd", -1, "tokens_per_s_per_musd", "expected a non-negative number"},
      {"/cost_usd/paper", -5, "cost_usd.paper", "expected a non-negative number"},
      {"/cost_usd/built", "5", "cost_usd.built", "expected a number"},
      {"/cost_paper_usd_by_component/nics", -1, "cost_paper_usd_by_component.nics", "from 1e-30"},
      {"/cost_built_usd_by_component/fibres", nullptr, "cost_built_usd_by_component.fibres",
       "expected a number"},
      {"/cost_built_usd_by_component/gpus", 1, "cost_built_usd_by_component.gpus",
       "is not a member"},
      {"/reconfiguration/count", -1, "reconfiguration.count", "whole number"},
      {"/reconfiguration/time_s", -1e-3, "reconfiguration.time_s", "time in seconds"},
      {"/reconfiguration/held_time_s", 1e300, "reconfiguration.held_time_s", "time in seconds"},
      {"/reconfiguration/eps_bytes", -1, "reconfiguration.eps_bytes", "from 1e-30"},
      {"/reconfiguration/policy", 3, "reconfiguration.policy", "expected a string"},
      {"/reconfiguration", "block", "reconfiguration", "expected an object"},
      {"/reconfiguration/critical_holds", 4, "reconfiguration.critical_holds", "from 0 to 3"},
      {"/reconfiguration/critical_held_s", -1, "reconfiguration.critical_held_s",
       "time in seconds"},
      {"/timeline", "spans", "timeline", "expected an array"},
      {"/timeline/1", json::array({0.2, 0.1, false}), "timeline[1]", "start_s <= end_s"},
      {"/timeline/0", json::array({0, -1, true}), "timeline[0]", "start_s <= end_s"},
      {"/timeline/0", json::array({0, 1, 1}), "timeline[0]", "a true or false"},
      {"/wall_time_s", -0.5, "wall_time_s", "from 1e-30"},
      {"/error", "", "error", "empty string"},
      {"/model", 7, "model", "expected a string"},
      {"/fields/cluster.link", 100, "fields.cluster.link", "expected a string"},
      {"/fields", json::array(), "fields", "expected an object"},
      {"/bogus", 1, "bogus", "is not a member of a sweep point's record"},
      {"/" + std::string(100000, 'k'), 1, std::string(61, 'k') + "...", "is not a member"},
  };
  for (const Case& c : cases) {
    json record = good_record(spec);
    record[json::json_pointer(c.pointer)] = c.value;
    const std::string e = read_error(spec, json_text(record, -1));
    const std::string prefix = (dir_ / "points.jsonl").string() + ": line 2: " + c.field + ": ";
    EXPECT_EQ(e.rfind(prefix, 0), 0u) << c.pointer << "\n" << e;
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.pointer << "\n" << e;
  }
  json missing = good_record(spec);
  missing.erase("model");
  EXPECT_NE(read_error(spec, json_text(missing, -1)).find("line 2: model: is missing"),
            std::string::npos);
}

TEST_F(SweepJournalTest, ALineThatIsNotARecordIsRefused) {
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  EXPECT_NE(read_error(spec, "not json").find("line 2: invalid JSON: parse error at column 2"),
            std::string::npos)
      << read_error(spec, "not json");
  EXPECT_NE(read_error(spec, "[1, 2]").find("line 2: expected an object"), std::string::npos);
  EXPECT_NE(read_error(spec, "{\"gpus\": 1e999}").find("line 2: gpus: number 1e999"),
            std::string::npos)
      << read_error(spec, "{\"gpus\": 1e999}");
  EXPECT_NE(read_error(spec, "{\"gpus\": 1, \"gpus\": 2}")
                .find("line 2: gpus: this key appears "
                      "twice"),
            std::string::npos);
}

TEST_F(SweepJournalTest, ATornLastLineIsDroppedAndCutOff) {
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  const std::string whole = json_text(good_record(spec), -1) + "\n";
  // Killed while writing line 2: its first half, no newline. Even a bad one is not trusted.
  const std::string path = write("points.jsonl", whole + whole.substr(0, 40));
  const JournalContents j = read_journal(path, spec);
  EXPECT_EQ(j.points.size(), 1u);
  EXPECT_EQ(j.records, 1u);
  EXPECT_EQ(j.torn_line, 2u);
  EXPECT_EQ(j.intact_bytes, whole.size());
  drop_torn_line(path, j);
  EXPECT_EQ(slurp(path), whole);
  // A file that changed size since it was read (another writer) is left alone.
  write("points.jsonl", whole + "{\"ind");
  const JournalContents torn = read_journal(path, spec);
  write("points.jsonl", whole + "{\"index\": 1");
  drop_torn_line(path, torn);
  EXPECT_EQ(slurp(path), whole + "{\"index\": 1");
}

TEST_F(SweepJournalTest, CreatedByTheFirstRecordOnlyAndOnlyAsARegularFile) {
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  SweepRun run = sweep_run_from_json(good_record(spec), "", "");
  const fs::path path = dir_ / "out" / "sub" / "points.jsonl";
  {
    SweepJournal journal(path.string());
    EXPECT_FALSE(fs::exists(dir_ / "out"));  // nothing before the first record
    journal.append(spec, run);
    journal.append(spec, run);
  }
  EXPECT_EQ(read_journal(path.string(), spec).records, 2u);
  // A FIFO would block a writer, a symbolic link would be followed: both refused, at once.
  const fs::path fifo = dir_ / "fifo.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  SweepJournal to_fifo(fifo.string());
  EXPECT_NE(error_text([&] { to_fifo.append(spec, run); }).find(fifo.string()), std::string::npos);
  fs::create_symlink(path, dir_ / "link.jsonl");
  SweepJournal to_link((dir_ / "link.jsonl").string());
  EXPECT_NE(error_text([&] { to_link.append(spec, run); }).find("link.jsonl"), std::string::npos);
  EXPECT_EQ(read_journal(path.string(), spec).records, 2u);
}

class SweepResumeTest : public testing::ScratchDirTest {
 protected:
  SweepResumeTest() : ScratchDirTest("mfabric_sweep_resume_test") {}
};

std::string results_text(const SweepSpec& spec, const SweepResult& r) {
  std::string out;
  for (const SweepRun& run : r.runs)
    out += json_text(sweep_run_json(spec, run, false), -1) + "\n";
  return out;
}

// The journal sweep run whole on one thread, without a journal: what a resumed run must give.
SweepResult run_whole(const SweepSpec& spec, mpi::World& world) {
  SweepOptions clean;
  clean.jobs = 1;
  return run_sweep(spec, clean, world);
}

// A sweep killed while writing its third record resumes from the whole ones and gives the
// results of a sweep that was never stopped; the journal holds every point once after it.
TEST_F(SweepResumeTest, AnInterruptedSweepResumesToTheSameResults) {
  mpi::World world = sweep_world();
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  const SweepResult expected = run_whole(spec, world);
  ASSERT_EQ(expected.runs.size(), 3u);
  for (const SweepRun& run : expected.runs)
    ASSERT_TRUE(run.figures.error.empty()) << run.figures.error;

  const std::string line0 = json_text(sweep_run_json(spec, expected.runs[0]), -1) + "\n";
  const std::string line2 = json_text(sweep_run_json(spec, expected.runs[2]), -1) + "\n";
  const std::string journal = write("points.jsonl", line0 + line2.substr(0, line2.size() / 2));
  SweepOptions resume;
  resume.jobs = 2;
  resume.journal = journal;
  const SweepResult resumed = run_sweep(spec, resume, world);
  EXPECT_EQ(resumed.resumed, 1u);
  ASSERT_EQ(resumed.notes.size(), 1u);
  EXPECT_NE(resumed.notes[0].find("points.jsonl: line 2 was cut short"), std::string::npos)
      << resumed.notes[0];
  EXPECT_EQ(results_text(spec, resumed), results_text(spec, expected));
  // The torn half is gone; the two points run since follow the resumed one, one per line.
  const JournalContents after = read_journal(journal, spec);
  EXPECT_EQ(after.torn_line, 0u);
  EXPECT_EQ(after.records, 3u);
  EXPECT_EQ(after.points.size(), 3u);
  EXPECT_EQ(slurp(journal).rfind(line0, 0), 0u);
}

// A record of an mfabric before the per-GPU figures (tokens/s, model TFLOP/s and MFU per GPU)
// resumes with them worked out from its point: the results are those of a sweep run whole.
TEST_F(SweepResumeTest, ARecordWithoutThePerGpuFiguresGetsThemFromItsPoint) {
  mpi::World world = sweep_world();
  const SweepSpec spec = parse_sweep(kJournalSweep, "s.yaml");
  const SweepResult expected = run_whole(spec, world);
  ASSERT_EQ(expected.runs.size(), 3u);
  ASSERT_TRUE(expected.runs[0].figures.error.empty()) << expected.runs[0].figures.error;
  EXPECT_GT(expected.runs[0].figures.mfu, 0);
  json old = sweep_run_json(spec, expected.runs[0]);
  for (const char* key : {"tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu"})
    ASSERT_EQ(old.erase(key), 1u) << key;
  SweepOptions resume;
  resume.jobs = 1;
  resume.journal = write("points.jsonl", json_text(old, -1) + "\n");
  const SweepResult resumed = run_sweep(spec, resume, world);
  EXPECT_EQ(resumed.resumed, 1u);
  EXPECT_EQ(results_text(spec, resumed), results_text(spec, expected));
}

// Points that fail are not journaled: a sweep whose every point fails creates nothing.
TEST_F(SweepResumeTest, ASweepWhoseEveryPointFailsWritesNoJournal) {
  mpi::World world = sweep_world();
  // 1 server of 8 GPUs for a job of TP 4 x EP 8: every point fails when it runs.
  const SweepSpec spec = parse_sweep(R"(
experiment:
  cluster: {servers: 1, link: 400G}
  workload: {model: mixtral-8x7b, convention: paper, tp: 4, ep: 8, global_batch: 8}
grid:
  seed: [1, 2]
)",
                                     "f.yaml");
  SweepOptions options;
  options.journal = (dir_ / "out" / "points.jsonl").string();
  const SweepResult r = run_sweep(spec, options, world);
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_FALSE(r.runs[0].figures.error.empty());
  EXPECT_FALSE(r.runs[1].figures.error.empty());
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace
}  // namespace mfabric::study
