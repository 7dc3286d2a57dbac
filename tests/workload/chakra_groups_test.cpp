// Chakra reader, process groups: ASTRA-sim's communicator-group file, PyTorch's process-group
// metadata node, and the traffic class of communication (docs/chakra.md, "Process groups and
// membership" and "Traffic class").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "workload/chakra_test_util.h"

namespace mfabric::workload {
namespace {

using namespace chakra_testing;

ChakraOptions with_groups(const std::string& path) {
  ChakraOptions o;
  o.comm_groups = path;
  return o;
}

std::vector<std::vector<std::int32_t>> groups_of(const TaskGraph& g, CollectiveKind kind) {
  std::vector<std::vector<std::int32_t>> out;
  for (const Task& t : g.tasks()) {
    if (t.kind == TaskKind::Collective && t.collective == kind) out.push_back(g.group(t.group()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// --- ASTRA-sim's communicator-group file ---------------------------------------------------

// Four ranks: an all-reduce on group "0" (everyone), then an all-gather on group "1" (ranks 0
// and 2) or "2" (ranks 1 and 3), named by number as ASTRA-sim's traces do.
void write_numeric_groups(const std::string& prefix) {
  for (int r = 0; r < 4; ++r) {
    const std::string pair = r % 2 == 0 ? "1" : "2";
    write_rank(prefix, r,
               {coll(1, pb::ALL_REDUCE, 64, "0"), coll(2, pb::ALL_GATHER, 8, pair, {1})});
  }
}

TEST(ChakraGroups, CommGroupFileNamesTheMembersOfNumericGroups) {
  TempDir dir;
  write_numeric_groups(dir.prefix());
  // Group "1" listed as [2, 0]: the file's order is the group's member order.
  write_bytes(dir.path("groups.json"), R"({"0": [0, 1, 2, 3], "1": [2, 0], "2": [1, 3]})");
  const TaskGraph g = read_chakra(dir.prefix(), with_groups(dir.path("groups.json")));
  EXPECT_EQ(groups_of(g, CollectiveKind::AllReduce),
            (std::vector<std::vector<std::int32_t>>{{0, 1, 2, 3}}));
  EXPECT_EQ(groups_of(g, CollectiveKind::AllGather),
            (std::vector<std::vector<std::int32_t>>{{1, 3}, {2, 0}}));
  for (const Task& t : g.tasks()) {
    EXPECT_EQ(t.traffic, Traffic::Other);  // numbers say no parallelism
    if (t.collective == CollectiveKind::AllGather) {
      EXPECT_EQ(t.bytes(), Bytes(16));  // 2 x 8
    }
  }
}

TEST(ChakraGroups, CommGroupFileMembersMustAllTakePart) {
  // The file puts rank 3 in group "1" too, but rank 3 has no collective on it.
  TempDir dir;
  write_numeric_groups(dir.prefix());
  write_bytes(dir.path("groups.json"), R"({"0": [0, 1, 2, 3], "1": [0, 2, 3], "2": [1, 3]})");
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"process group '1'", "no counterpart on member rank 3"},
               with_groups(dir.path("groups.json")));
}

TEST(ChakraGroups, CommGroupFileErrors) {
  TempDir dir;
  write_numeric_groups(dir.prefix());
  struct Case {
    const char* json;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {R"({"0": [0, 1)", {"invalid JSON"}},
      {R"({"0": [0, 1], "1": [0, 1e999]})", {"1[1]", "1e999", "out of range"}},
      {R"({"0": [0, -1]})", {"group \"0\"", "rank -1 is not a rank of the trace (ranks 0..3)"}},
      {R"({"0": [0, 4]})", {"group \"0\"", "rank 4 is not a rank of the trace"}},
      {R"({"0": [18446744073709551615]})", {"group \"0\"", "out of range"}},
      {R"({"0": [1, 2, 1]})", {"group \"0\"", "rank 1 is listed twice"}},
      {R"({"0": [0.5]})", {"group \"0\"", "expected an integer rank"}},
      {R"({"0": ["1"]})", {"group \"0\"", "expected an integer rank"}},
      {R"({"0": 3})", {"group \"0\"", "expected a list of ranks"}},
      {R"({"0": []})", {"group \"0\"", "lists no ranks"}},
      {R"({"0": [0], "0": [1]})", {": 0: ", "appears twice"}},
      {R"([[0, 1], [2, 3]])", {"expected a JSON object"}},
      {"", {"invalid JSON"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    write_bytes(dir.path("groups.json"), c.json);
    try {
      read_chakra(dir.prefix(), with_groups(dir.path("groups.json")));
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.source(), dir.path("groups.json")) << what;
      for (const std::string& f : c.fragments)
        EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
    }
  }
}

TEST(ChakraGroups, CommGroupFileThatIsNotAFile) {
  TempDir dir;
  write_numeric_groups(dir.prefix());
  expect_error(dir.prefix(), dir.path("absent.json"), {"not found"},
               with_groups(dir.path("absent.json")));
  fs::create_directory(dir.path("groups.d"));
  expect_error(dir.prefix(), dir.path("groups.d"), {"directory"},
               with_groups(dir.path("groups.d")));
}

TEST(ChakraGroups, CommGroupFileMustAgreeWithGlobalMetadata) {
  TempDir dir;
  pb::GlobalMetadata meta = default_metadata();
  auto* a = meta.add_attr();
  a->set_name("pg_ranks:1");
  for (std::int64_t r : {0, 2})
    a->mutable_int64_list()->add_values(r);
  for (int r = 0; r < 4; ++r) {
    const std::string pair = r % 2 == 0 ? "1" : "2";
    write_rank(dir.prefix(), r,
               {coll(1, pb::ALL_REDUCE, 64, "0"), coll(2, pb::ALL_GATHER, 8, pair, {1})}, false,
               &meta);
  }
  // The same ranks in another order agree (the GlobalMetadata's order wins).
  write_bytes(dir.path("same.json"), R"({"1": [2, 0]})");
  const TaskGraph g = read_chakra(dir.prefix(), with_groups(dir.path("same.json")));
  EXPECT_EQ(groups_of(g, CollectiveKind::AllGather),
            (std::vector<std::vector<std::int32_t>>{{0, 2}, {1, 3}}));
  write_bytes(dir.path("other.json"), R"({"1": [0, 1, 2]})");
  expect_error(dir.prefix(), dir.path("other.json"),
               {"group \"1\"", "[0, 1, 2]", "pg_ranks:1", rank_file(dir.prefix(), 0)},
               with_groups(dir.path("other.json")));
}

// --- PyTorch's process-group metadata -----------------------------------------------------

// The JSON PyTorch records for rank r of 4 (TP pairs {0,1} {2,3}, DP pairs {0,2} {1,3}): its
// groups only, the default group with no ranks (all of them).
std::string pytorch_groups_json(int r) {
  const std::string tp =
      r < 2
          ? R"({"pg_name": "1", "pg_desc": "TENSOR_MODEL_PARALLEL_GROUP", "backend_config": "cuda:nccl", "ranks": [0, 1], "group_size": 2, "group_count": 5})"
          : R"({"pg_name": "2", "pg_desc": "TENSOR_MODEL_PARALLEL_GROUP", "backend_config": "cuda:nccl", "ranks": [2, 3], "group_size": 2, "group_count": 5})";
  const std::string dp =
      r % 2 == 0
          ? R"({"pg_name": "3", "pg_desc": "DATA_PARALLEL_GROUP", "backend_config": "cuda:nccl", "ranks": [0, 2], "group_size": 2, "group_count": 5})"
          : R"({"pg_name": "4", "pg_desc": "DATA_PARALLEL_GROUP", "backend_config": "cuda:nccl", "ranks": [1, 3], "group_size": 2, "group_count": 5})";
  return R"([{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "ranks": [], "group_size": 4, "group_count": 5}, )" +
         tp + ", " + dp + "]";
}

pb::Node pg_metadata(std::uint64_t id, const std::string& values) {
  pb::Node n = make(id, pb::METADATA_NODE, {}, "## process_group:init ##");
  n.mutable_inputs()->set_values(values);
  return n;
}

// Python's str() of a one-string list, as Chakra's converter writes inputs.values.
std::string python_list_of(const std::string& text) {
  std::string out = "['";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "']";
}

void write_pytorch_trace(const std::string& prefix,
                         const std::function<std::string(const std::string&)>& wrap) {
  for (int r = 0; r < 4; ++r) {
    const std::string tp = r < 2 ? "1" : "2";
    const std::string dp = r % 2 == 0 ? "3" : "4";
    write_rank(
        prefix, r,
        {pg_metadata(1, wrap(pytorch_groups_json(r))), coll(2, pb::ALL_REDUCE, 1024, tp, {1}),
         coll(3, pb::ALL_REDUCE, 2048, dp, {2}), coll(4, pb::ALL_GATHER, 100, "0", {3})});
  }
}

void check_pytorch_trace(const TaskGraph& g) {
  ASSERT_EQ(g.size(), 4u + 2 + 2 + 1);  // 4 metadata nodes (zero time), 5 collectives
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::Collective) continue;
    const auto& members = g.group(t.group());
    if (t.collective == CollectiveKind::AllGather) {
      EXPECT_EQ(members, (std::vector<std::int32_t>{0, 1, 2, 3}));  // "ranks": [] is everyone
      EXPECT_EQ(t.traffic, Traffic::Other);                         // default_pg
      EXPECT_EQ(t.bytes(), Bytes(400));
    } else if (t.bytes() == Bytes(1024)) {
      EXPECT_EQ(t.traffic, Traffic::TP);  // from pg_desc
      EXPECT_TRUE(members == (std::vector<std::int32_t>{0, 1}) ||
                  members == (std::vector<std::int32_t>{2, 3}));
    } else {
      EXPECT_EQ(t.traffic, Traffic::DP);
      EXPECT_TRUE(members == (std::vector<std::int32_t>{0, 2}) ||
                  members == (std::vector<std::int32_t>{1, 3}));
    }
  }
}

TEST(ChakraGroups, PytorchProcessGroupMetadataAsTheConverterWritesIt) {
  TempDir dir;
  write_pytorch_trace(dir.prefix(), python_list_of);
  check_pytorch_trace(read_chakra(dir.prefix(), ChakraOptions{}));
}

TEST(ChakraGroups, PytorchProcessGroupMetadataInOtherQuotings) {
  TempDir dir;
  write_pytorch_trace(dir.prefix("raw"), [](const std::string& s) { return s; });
  check_pytorch_trace(read_chakra(dir.prefix("raw"), ChakraOptions{}));
  write_pytorch_trace(dir.prefix("json"), [](const std::string& s) {
    std::string quoted = "[\"";
    for (char c : s) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    return quoted + "\"]";
  });
  check_pytorch_trace(read_chakra(dir.prefix("json"), ChakraOptions{}));
  write_pytorch_trace(dir.prefix("nested"), [](const std::string& s) { return "[" + s + "]"; });
  check_pytorch_trace(read_chakra(dir.prefix("nested"), ChakraOptions{}));
}

TEST(ChakraGroups, PythonQuotingIsUndone) {
  // A description with a quote and a backslash-escaped quote survives Python's str() and back.
  TempDir dir;
  const std::string groups =
      R"([{"pg_name": "7", "pg_desc": "expert's \"group\"", "ranks": [0, 1]}])";
  for (int r = 0; r < 2; ++r) {
    write_rank(dir.prefix(), r,
               {pg_metadata(1, python_list_of(groups)), coll(2, pb::ALL_TO_ALL, 64, "7", {1})});
  }
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  const auto a2a = find(g, [](const Task& t) { return t.kind == TaskKind::Collective; });
  ASSERT_EQ(a2a.size(), 1u);
  EXPECT_EQ(g.task(a2a[0]).traffic, Traffic::EP);
}

TEST(ChakraGroups, PytorchMetadataErrors) {
  TempDir dir;
  const auto check = [&](const std::string& name, const std::string& values,
                         std::initializer_list<std::string> fragments) {
    SCOPED_TRACE(name);
    write_rank(dir.prefix(name), 0, {pg_metadata(5, values)});
    expect_error(dir.prefix(name), rank_file(dir.prefix(name), 0), fragments);
  };
  check("garbage", "not json at all", {"node 5 (## process_group:init ##)", "not JSON"});
  check("object", R"({"pg_name": "0"})", {"process-group metadata", "JSON object"});
  check("no_name", R"([{"ranks": [0]}])", {"no \"pg_name\""});
  check("no_ranks", R"([{"pg_name": "1"}])", {"group \"1\" has no \"ranks\""});
  check("range", R"([{"pg_name": "1", "ranks": [0, 5]}])",
        {"process group \"1\"", "rank 5 is not a rank of the trace (ranks 0..0)"});
  check("twice", R"([{"pg_name": "1", "ranks": [0, 0]}])", {"rank 0 is listed twice"});
}

TEST(ChakraGroups, PytorchMetadataMustAgreeAcrossRanks) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {pg_metadata(1, R"([{"pg_name": "1", "ranks": [0, 1]}])")});
  write_rank(dir.prefix(), 1, {pg_metadata(1, R"([{"pg_name": "1", "ranks": [1]}])")});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1),
               {"process group \"1\"", "[1]", "[0, 1]", rank_file(dir.prefix(), 0)});
}

// --- Traffic classes ------------------------------------------------------------------------

TEST(ChakraGroups, CommunicationWithoutAKnownClassIsOther) {
  TempDir dir;
  pb::Node dp_send = send(3, 1, 10, 1, {});
  add_string(dp_send, "pg_name", "dp_0");
  write_rank(dir.prefix(), 0,
             {coll(1, pb::ALL_REDUCE, 64, ""), send(2, 1, 10, 0, {1}), dp_send,
              coll(4, pb::ALL_REDUCE, 64, "step_group", {1})});
  write_rank(dir.prefix(), 1,
             {coll(1, pb::ALL_REDUCE, 64, ""), recv(2, 0, 10, 0, {1}), recv(3, 0, 10, 1),
              coll(4, pb::ALL_REDUCE, 64, "step_group", {1})});
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{});
  int other = 0;
  int dp = 0;
  for (const Task& t : g.tasks()) {
    if (t.kind == TaskKind::Compute) {
      EXPECT_EQ(t.traffic, Traffic::None);
      continue;
    }
    (t.traffic == Traffic::DP ? dp : other) += 1;
    if (t.traffic != Traffic::DP) {
      EXPECT_EQ(t.traffic, Traffic::Other);
    }
  }
  EXPECT_EQ(other, 3);  // both all-reduces and the untagged transfer
  EXPECT_EQ(dp, 1);
  EXPECT_STREQ(to_string(Traffic::Other), "other");
}

}  // namespace
}  // namespace mfabric::workload
