// Outputs of `mfabric simulate` (report/simulation_report.h): every JSON output parses back with
// valid UTF-8 whatever the names hold, the streamed Perfetto trace carries one event per task and
// member GPU with the span's times (only the filter's GPUs when filtered), the CSVs have their
// columns, and --out is written as a set of the files asked for.
#include "report/simulation_report.h"
#include "test_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "core/error.h"
#include "core/output_text.h"
#include "sim/load_experiment.h"

namespace mfabric::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kFffd = "\xEF\xBF\xBD";

// A run small enough for a unit test with compute, collectives and p2p tasks (TP, EP, DP, PP).
constexpr const char* kTrainingYaml = R"(
seed: 3
cluster: {servers: 2, gpus_per_server: 4, nics_per_server: 4, link: 400G}
fabric: fat-tree
workload: {model: mixtral-8x7b, convention: paper, tp: 2, pp: 2, ep: 2, global_batch: 4, micro_batch: 1, seq: 256}
)";

using SimRun = sim::Simulation;

// As simulate --out runs it: spans, flows and the links' bytes per time bin.
SimRun simulate_with_spans(config::Experiment e) {
  sim::SimulationOptions options;
  options.record_spans = true;
  options.record_flows = true;
  options.timeline = net::TimelineOptions{};
  return sim::simulate(std::move(e), options);
}

// An experiment "file" named with byte 0xff, as a user's file system may hold.
const SimRun& training_run() {
  static const SimRun run =
      simulate_with_spans(sim::parse_experiment(kTrainingYaml, "exp\xFF.yaml"));
  return run;
}

// RFC 4180 fields of one CSV line (no quoted line breaks in these files).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

TEST(ResultsJson, InvalidUtf8NamesGiveValidJson) {
  const SimulationReport r = report_of(training_run());
  const std::string text = json_text(results_json(r));
  EXPECT_TRUE(is_valid_utf8(text));
  const json back = json::parse(text);
  EXPECT_EQ(back.at("experiment"), "exp" + kFffd + ".yaml");
  EXPECT_EQ(back.at("schema"), kResultsSchema);
  EXPECT_EQ(back.at("gpus"), 8);
}

TEST(ResultsJson, CommunicationHasOneKeyPerEngineTrafficClass) {
  const json j = results_json(report_of(training_run()));
  std::set<std::string> keys;
  for (const auto& [key, value] : j.at("comm_time_s").items())
    keys.insert(key);
  std::set<std::string> expected;
  for (workload::Traffic t : sim::kTrafficClasses)
    expected.insert(workload::to_string(t));
  EXPECT_EQ(keys, expected);
  EXPECT_TRUE(keys.count("tp") && keys.count("ep") && keys.count("dp") && keys.count("pp"));
}

TEST(ResultsJson, PacketRunsNameTheirTransportAndItsVariant) {
  const SimRun run = sim::simulate(sim::parse_experiment(R"(
cluster: {servers: 2, gpus_per_server: 1, nics_per_server: 1, link: 100G}
fabric: fat-tree
workload: {collective: all-to-all, bytes: 1MiB}
simulation: {backend: packet, transport: roce-dcqcn, dcqcn: {variant: ns3-rdma}}
)",
                                                         "packet.yaml"));
  const json p = results_json(report_of(run)).at("packet");
  EXPECT_EQ(p.at("transport"), "roce-dcqcn");
  EXPECT_EQ(p.at("variant"), "ns3-rdma");
  EXPECT_EQ(p.at("pfc"), true);
  EXPECT_EQ(p.at("packets_sent"), p.at("packets_delivered"));
  EXPECT_GT(p.at("packets_sent").get<std::int64_t>(), 0);
}

TEST(ResultsText, NamesCannotBreakTheText) {
  SimRun run = training_run();
  run.experiment.source = "line\nbreak\xFF\x1B[31m.yaml";
  const std::string text = results_text(report_of(run));
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(text.find('\x1B'), std::string::npos);
  const std::string first = lines_of(text).front();
  EXPECT_NE(first.find("line\\nbreak" + kFffd + "\\x1B[31m.yaml"), std::string::npos) << first;
  for (workload::Traffic t : sim::kTrafficClasses) {
    // Context parallelism's row is there only for a job that has it.
    if (t == workload::Traffic::CP) continue;
    std::string label = workload::to_string(t);
    // "TP" for the parallelism classes, a capitalised word ("Other") otherwise.
    for (std::size_t i = 0; i < label.size(); ++i) {
      if (i == 0 || label.size() <= 2) {
        label[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[i])));
      }
    }
    EXPECT_NE(text.find(label + " communication (per GPU)"), std::string::npos) << label;
  }
}

// The trace, parsed back: metadata for each GPU, then one complete event per compute task, two
// per p2p task and one per member of a collective, with the span's start and duration in
// microseconds rounded to the nanosecond.
TEST(TraceJson, ParsesBackToOneEventPerTaskAndMember) {
  const SimRun& run = training_run();
  const json doc = json::parse(trace_json(report_of(run)));
  EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
  const json& events = doc.at("traceEvents");
  const int gpus = run.graph.gpus();
  std::size_t expected = 3 * static_cast<std::size_t>(gpus);
  for (const sim::TaskSpan& span : run.result.spans) {
    const workload::Task& t = run.graph.task(span.task);
    expected += t.kind == workload::TaskKind::Compute ? 1
                : t.kind == workload::TaskKind::P2P   ? 2
                                                      : run.graph.group(t.group()).size();
  }
  ASSERT_EQ(events.size(), expected);
  for (int g = 0; g < gpus; ++g) {
    const json& p = events[static_cast<std::size_t>(3 * g)];
    EXPECT_EQ(p, json({{"name", "process_name"},
                       {"ph", "M"},
                       {"pid", g},
                       {"args", {{"name", "GPU " + std::to_string(g)}}}}));
    EXPECT_EQ(events[static_cast<std::size_t>(3 * g + 1)].at("args").at("name"), "compute");
    EXPECT_EQ(events[static_cast<std::size_t>(3 * g + 2)].at("tid"), 1);
  }
  // The first span's first event, field by field.
  const sim::TaskSpan& span = run.result.spans.front();
  const workload::Task& t = run.graph.task(span.task);
  const json& e = events[static_cast<std::size_t>(3 * gpus)];
  EXPECT_EQ(e.size(), 7u);
  EXPECT_EQ(e.at("ph"), "X");
  EXPECT_NEAR(e.at("ts").get<double>(), static_cast<double>(span.start.ps()) / 1e6, 0.0005);
  EXPECT_NEAR(e.at("dur").get<double>(), static_cast<double>((span.end - span.start).ps()) / 1e6,
              0.0005);
  EXPECT_EQ(e.at("name").get<std::string>().rfind(workload::to_string(t.op), 0), 0u);
  std::set<std::string> categories;
  for (std::size_t i = 3 * static_cast<std::size_t>(gpus); i < events.size(); ++i) {
    categories.insert(events[i].at("cat").get<std::string>());
    EXPECT_GE(events[i].at("dur").get<double>(), 0.0);
  }
  EXPECT_TRUE(categories.count("compute"));
  EXPECT_TRUE(categories.count("tp") && categories.count("pp")) << json(categories);
}

// The trace of the training run (TP 2 x EP 2 x PP 2 on 8 GPUs) cut to some GPUs: only their
// processes and events; a stage is the GPUs of its ranks (stage 1: GPUs 4-7).
std::set<int> traced_pids(const json& doc) {
  std::set<int> pids;
  for (const json& e : doc.at("traceEvents"))
    pids.insert(e.at("pid").get<int>());
  return pids;
}

TEST(TraceJson, AFilterKeepsOnlyItsGpusTracks) {
  const SimRun& run = training_run();
  ASSERT_EQ(run.graph.gpus(), 8);
  const SimulationReport r = report_of(run);
  const json all = json::parse(trace_json(r));
  EXPECT_EQ(traced_pids(all), (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));

  TraceFilter gpus;
  gpus.gpus = parse_gpu_list("1,5-6");
  const json some = json::parse(trace_json(r, gpus));
  EXPECT_EQ(traced_pids(some), (std::set<int>{1, 5, 6}));
  // Every event of those GPUs is kept: the same events as the whole trace's with those pids.
  std::size_t kept = 0;
  for (const json& e : all.at("traceEvents")) {
    const int pid = e.at("pid").get<int>();
    kept += pid == 1 || pid == 5 || pid == 6 ? 1 : 0;
  }
  EXPECT_EQ(some.at("traceEvents").size(), kept);

  TraceFilter stage;
  stage.stage = 1;
  EXPECT_EQ(traced_pids(json::parse(trace_json(r, stage))), (std::set<int>{4, 5, 6, 7}));
  stage.gpus = parse_gpu_list("0-4");  // both conditions: GPU 4 alone
  EXPECT_EQ(traced_pids(json::parse(trace_json(r, stage))), std::set<int>{4});
}

TEST(Csv, EveryRowHasTheHeadersColumns) {
  const SimulationReport r = report_of(training_run());
  for (const std::string& text : {links_csv(r), collectives_csv(r)}) {
    // The first line is the provenance comment.
    EXPECT_EQ(text.rfind("# mfabric ", 0), 0u) << text.substr(0, 80);
    const auto lines = lines_of(mfabric::testing::csv_body(text));
    ASSERT_GT(lines.size(), 1u);
    const std::size_t columns = csv_fields(lines.front()).size();
    EXPECT_TRUE(columns == 9 || columns == 14) << lines.front();  // links, collectives
    for (const std::string& line : lines)
      EXPECT_EQ(csv_fields(line).size(), columns) << line;
  }
}

class SimulationOutputSet : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("mfabric-simulation-outputs-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::set<std::string> entries(const fs::path& dir) const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
      names.insert(entry.path().filename().string());
    return names;
  }
  fs::path root_;
};

TEST_F(SimulationOutputSet, WritesWhatWasAskedForAsASet) {
  const SimulationReport r = report_of(training_run());
  const fs::path dir = root_ / "out";
  check_simulation_outputs(dir.string());
  SimulationOutputs everything;
  everything.trace = true;
  everything.flows = true;
  everything.link_utilisation = true;
  const std::vector<std::string> all = write_simulation_outputs(r, dir.string(), everything);
  EXPECT_EQ(all, std::vector<std::string>(std::begin(kSimulationOutputFiles),
                                          std::end(kSimulationOutputFiles)));
  EXPECT_EQ(entries(dir), std::set<std::string>(all.begin(), all.end()));
  std::ifstream trace(dir / "trace.json");
  EXPECT_EQ(json::parse(trace), json::parse(trace_json(r)));
  // Replacing that set with the default one: no trace, flows or per-link file is left behind.
  check_simulation_outputs(dir.string());
  const std::vector<std::string> written = write_simulation_outputs(r, dir.string());
  EXPECT_EQ(written, (std::vector<std::string>{"results.json", "links.csv", "collectives.csv",
                                               "utilisation.csv", "report.html"}));
  EXPECT_EQ(entries(dir), std::set<std::string>(written.begin(), written.end()));
  EXPECT_EQ(entries(root_), std::set<std::string>{"out"});
  std::ifstream results(dir / "results.json");
  const json j = json::parse(results);
  EXPECT_EQ(j.at("experiment"), "exp" + kFffd + ".yaml");
  EXPECT_FALSE(j.contains("wall_time_s"));
  // Every CSV written has rows, not a header alone.
  for (const std::string& name : written) {
    if (!name.ends_with(".csv")) continue;
    std::ifstream in(dir / name);
    std::string header, row;
    EXPECT_TRUE(std::getline(in, header) && std::getline(in, row)) << name;
  }
  // The page embeds the figure, with a line per link class named in its key.
  std::ifstream page(dir / "report.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("NVLink (GPU-NVSwitch)"), std::string::npos);
  EXPECT_NE(html.find("utilisation.csv"), std::string::npos);
}

TEST_F(SimulationOutputSet, WithoutATimelineThereIsNoUtilisationFileOrPage) {
  SimRun run = training_run();
  run.result.timeline.reset();
  const fs::path dir = root_ / "out";
  EXPECT_EQ(write_simulation_outputs(report_of(run), dir.string()),
            (std::vector<std::string>{"results.json", "links.csv", "collectives.csv"}));
  EXPECT_EQ(entries(dir), (std::set<std::string>{"results.json", "links.csv", "collectives.csv"}));
}

TEST_F(SimulationOutputSet, ADirectoryWithOtherFilesIsLeftAlone) {
  const fs::path dir = root_ / "out";
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "mine";
  EXPECT_THROW(check_simulation_outputs(dir.string()), Error);
  EXPECT_THROW(write_simulation_outputs(report_of(training_run()), dir.string()), Error);
  EXPECT_EQ(entries(dir), std::set<std::string>{"notes.txt"});
  EXPECT_EQ(entries(root_), std::set<std::string>{"out"});
}

}  // namespace
}  // namespace mfabric::report
