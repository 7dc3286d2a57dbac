#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/rng.h"
#include "workload/routing.h"

namespace mfabric::workload {
namespace {

namespace fs = std::filesystem;

std::string data(const std::string& name) {
  return std::string(MFABRIC_TEST_DATA_DIR) + "/" + name;
}

// A fresh directory per test for written files.
class RoutingIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mfabric-routing-io-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  }
  // Reads `file` expecting an Error located at `field` whose message contains `text`.
  static void expect_error(const std::string& file, const std::string& field,
                           const std::string& text) {
    try {
      read_routing_trace(file);
      ADD_FAILURE() << file << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.source(), file) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(e.message().find(text), std::string::npos) << e.what();
    }
  }

  fs::path dir_;
};

std::vector<std::int32_t> all_counts(const RoutingTrace& t) {
  std::vector<std::int32_t> out;
  for (int it = 0; it < t.iterations(); ++it) {
    for (int li = 0; li < static_cast<int>(t.layers().size()); ++li) {
      for (int mb = 0; mb < t.micro_batches(); ++mb) {
        auto m = t.matrix(it, li, mb);
        out.insert(out.end(), m.begin(), m.end());
      }
    }
  }
  return out;
}

void expect_same(const RoutingTrace& a, const RoutingTrace& b) {
  EXPECT_EQ(a.ep(), b.ep());
  EXPECT_EQ(a.experts(), b.experts());
  EXPECT_EQ(a.iterations(), b.iterations());
  EXPECT_EQ(a.micro_batches(), b.micro_batches());
  EXPECT_EQ(a.layers(), b.layers());
  EXPECT_EQ(a.is_static(), b.is_static());
  EXPECT_EQ(all_counts(a), all_counts(b));
}

TEST_F(RoutingIo, ReadsJsonAndTextOfTheSameTrace) {
  const auto json = read_routing_trace(data("routing_trace.json"));
  const auto text = read_routing_trace(data("routing_trace.txt"));
  EXPECT_EQ(json.ep(), 2);
  EXPECT_EQ(json.experts(), 3);
  EXPECT_EQ(json.iterations(), 2);
  EXPECT_EQ(json.micro_batches(), 1);
  EXPECT_EQ(json.layers(), (std::vector<int>{1, 3}));
  auto m = json.matrix(1, json.layer_index(1), 0);
  EXPECT_EQ(std::vector<std::int32_t>(m.begin(), m.end()),
            (std::vector<std::int32_t>{5, 1, 0, 2, 2, 2}));
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(json.row_sum(0, 1, 0, r), 6);
  expect_same(json, text);
}

TEST_F(RoutingIo, RoundTripsJsonAndText) {
  SyntheticRouting p;
  p.tokens_per_rank = 300;
  const auto trace = generate_routing(p, 3, 5, 2, {1, 2, 4}, 2, Rng(99));
  for (const char* name : {"trace.json", "trace.txt", "trace.routing"}) {
    write_routing_trace(trace, path(name));
    expect_same(trace, read_routing_trace(path(name)));
  }
  // The extension picks the format.
  std::ifstream json(path("trace.json"));
  std::string first;
  json >> first;
  EXPECT_EQ(first, "{");
  std::ifstream text(path("trace.txt"));
  std::getline(text, first);
  EXPECT_EQ(first[0], '#');
  // No temporary files left behind.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    ++files;
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos);
  }
  EXPECT_EQ(files, 3);
}

TEST_F(RoutingIo, AcceptsWindowsLineEndingsAndByteOrderMark) {
  const auto t =
      read_routing_trace(write("crlf.txt", "# c\r\n0 0 0 [[1, 2]]\r\n1 0 0 [[3, 4]]\r\n"));
  EXPECT_EQ(t.iterations(), 2);
  EXPECT_EQ(t.matrix(1, 0, 0)[1], 4);
  // A UTF-8 byte-order mark before JSON or text.
  EXPECT_EQ(read_routing_trace(write("bom.txt",
                                     "\xEF\xBB\xBF"
                                     "0 0 0 [[1, 2]]\n"))
                .experts(),
            2);
  std::ifstream json(data("routing_trace.json"));
  const std::string doc((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read_routing_trace(write("bom.json", "\xEF\xBB\xBF" + doc)).ep(), 2);
}

TEST_F(RoutingIo, OverwritesAnExistingFile) {
  RoutingTrace a(1, 2, 1, {0}, 1);
  a.matrix(0, 0, 0)[1] = 3;
  write("out.txt", "old contents that are longer than the new ones ...................\n");
  write_routing_trace(a, path("out.txt"));
  expect_same(a, read_routing_trace(path("out.txt")));
}

TEST_F(RoutingIo, BareMatrixIsAStaticTrace) {
  const auto t = read_routing_trace(data("routing_bare_matrix.txt"));
  EXPECT_TRUE(t.is_static());
  EXPECT_EQ(t.ep(), 4);
  EXPECT_EQ(t.experts(), 4);
  EXPECT_EQ(t.iterations(), 1);
  EXPECT_EQ(t.micro_batches(), 1);
  EXPECT_EQ(t.layers(), std::vector<int>{0});
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(t.row_sum(0, 0, 0, r), 32768);
  // Any layer of the model maps to the one record.
  EXPECT_EQ(t.layer_index(17), 0);
  EXPECT_EQ(t.matrix(5, t.layer_index(17), 3)[1], 12000);

  // EP x experts, over several lines with comments; written back as a bare matrix (text) or
  // with "static": true (JSON), and read back static.
  const auto multi = write("multi.txt", "# authors' format\n[[1, 2, 3],\n [4, 5, 6]]  # done\n");
  const auto m = read_routing_trace(multi);
  EXPECT_TRUE(m.is_static());
  EXPECT_EQ(m.ep(), 2);
  EXPECT_EQ(m.experts(), 3);
  for (const char* name : {"static.txt", "static.json"}) {
    write_routing_trace(m, path(name));
    expect_same(m, read_routing_trace(path(name)));
  }
}

TEST_F(RoutingIo, FileErrors) {
  expect_error(path("does-not-exist.json"), "", "cannot read");
  expect_error(dir_.string(), "", "cannot read");
  expect_error(write("empty.txt", ""), "", "no routing records");
  expect_error(write("comments.txt", "# nothing\n\n   # here\n"), "", "no routing records");
  expect_error(write("unknown.txt", "\n# comment\nhello world\n"), "line 3", "unknown format");

  RoutingTrace t(1, 1, 1, {0}, 1);
  try {
    write_routing_trace(t, path("no-such-dir/out.json"));
    ADD_FAILURE() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), path("no-such-dir/out.json"));
    EXPECT_NE(e.message().find("cannot write"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_routing_trace(RoutingTrace(), path("empty.json")), Error);
}

TEST_F(RoutingIo, TextErrorsNameTheLine) {
  expect_error(data("routing_ragged.txt"), "line 3", "tokens[1]: ragged matrix");
  expect_error(data("routing_missing.txt"), "",
               "missing record: iteration 1, layer 2, micro-batch 0");
  const std::string ok = "0 0 0 [[1, 2], [3, 4]]\n";
  expect_error(write("neg.txt", ok + "0 1 0 [[1, -2], [3, 4]]\n"), "line 2",
               "tokens[0][1]: expected a non-negative integer, got negative -2");
  expect_error(write("float.txt", "0 0 0 [[1.5, 2], [3, 4]]\n"), "line 1",
               "tokens[0][0]: expected a non-negative integer, got '1.5'");
  expect_error(write("word.txt", "0 0 0 [[1, 2], [x, 4]]\n"), "line 1", "tokens[1][0]");
  expect_error(write("big.txt", "0 0 0 [[1, 2], [3, 4000000000]]\n"), "line 1", "too large");
  expect_error(write("rows.txt", ok + "\n0 1 0 [[1, 2], [3, 4], [5, 6]]\n"), "line 3",
               "3 rows, expected ep = 2 (as on line 1)");
  expect_error(write("cols.txt", ok + "0 1 0 [[1, 2, 0], [3, 4, 0]]\n"), "line 2",
               "3 experts per row, expected 2");
  expect_error(write("dup.txt", ok + "# again\n0 0 0 [[1, 2], [3, 4]]\n"), "line 3",
               "duplicate record (iteration 0, layer 0, micro-batch 0), also on line 1");
  expect_error(write("junk.txt", "0 0 0 [[1, 2], [3, 4]] extra\n"), "line 1",
               "unexpected 'extra' after the matrix");
  expect_error(write("nomatrix.txt", "0 0 0\n"), "line 1", "matrix: expected '['");
  expect_error(write("twoidx.txt", "0 0 [[1]]\n"), "line 1", "micro_batch");
  expect_error(write("negidx.txt", "0 -1 0 [[1]]\n"), "line 1", "layer");
  expect_error(write("unclosed.txt", "0 0 0 [[1, 2], [3, 4]\n"), "line 1", "expected ']'");
  expect_error(write("emptyrow.txt", "0 0 0 [[], []]\n"), "line 1", "tokens[0]: empty row");
}

TEST_F(RoutingIo, BareMatrixErrors) {
  expect_error(write("ragged.txt", "[[1, 2], [3]]"), "line 1", "ragged matrix");
  expect_error(write("after.txt", "[[1, 2], [3, 4]]\n[[5, 6]]\n"), "line 2", "after the matrix");
  expect_error(write("neg.txt", "\n[[1, 2],\n [3, -4]]\n"), "line 3", "negative -4");
  expect_error(write("flat.txt", "[1, 2, 3]"), "line 1", "tokens[0]: expected '['");
}

TEST_F(RoutingIo, JsonErrorsNameTheField) {
  expect_error(data("routing_negative.json"), "records[0].tokens[1][1]",
               "expected a non-negative integer token count, got -4");
  const std::string head =
      R"({"format": "mfabric-routing-trace", "version": 1, "ep": 2, "experts": 2,)"
      R"( "iterations": 1, "micro_batches": 2, "layers": [0, 3], "records": [)";
  const std::string r00 =
      R"({"iteration": 0, "layer": 0, "micro_batch": 0, "tokens": [[1, 2], [3, 4]]})";
  const std::string r01 =
      R"({"iteration": 0, "layer": 0, "micro_batch": 1, "tokens": [[1, 2], [3, 4]]})";
  const std::string r30 =
      R"({"iteration": 0, "layer": 3, "micro_batch": 0, "tokens": [[1, 2], [3, 4]]})";
  const std::string r31 =
      R"({"iteration": 0, "layer": 3, "micro_batch": 1, "tokens": [[1, 2], [3, 4]]})";
  auto doc = [&](const std::string& records) { return head + records + "]}"; };
  // A complete, valid document for reference.
  EXPECT_NO_THROW(
      read_routing_trace(write("ok.json", doc(r00 + "," + r01 + "," + r30 + "," + r31))));

  expect_error(write("syntax.json", "{\"format\": "), "", "invalid JSON");
  expect_error(write("array.json", "{\"records\": [}"), "", "invalid JSON");
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::string full = doc(r00 + "," + r01 + "," + r30 + "," + r31);
  expect_error(write("format.json", replace(full, "mfabric-routing-trace", "other")), "format",
               "expected \"mfabric-routing-trace\"");
  expect_error(write("version.json", replace(full, "\"version\": 1", "\"version\": 2")), "version",
               "expected 1");
  expect_error(write("noep.json", replace(full, "\"ep\": 2,", "")), "ep", "missing \"ep\"");
  expect_error(write("ep0.json", replace(full, "\"ep\": 2", "\"ep\": 0")), "ep",
               "a positive integer");
  expect_error(write("epstr.json", replace(full, "\"ep\": 2", "\"ep\": \"2\"")), "ep",
               "a positive integer");
  expect_error(write("layers.json", replace(full, "[0, 3]", "[3, 0]")), "layers[1]",
               "strictly increasing");
  expect_error(write("unknown.json", replace(full, "\"ep\"", "\"model\": 1, \"ep\"")), "model",
               "unknown key");
  expect_error(write("static.json", replace(full, "\"ep\"", "\"static\": true, \"ep\"")), "static",
               "only a trace of one record");
  expect_error(write("records.json", head + "]}"), "records",
               "missing record: iteration 0, layer 0, micro-batch 0");
  expect_error(write("missing.json", doc(r00 + "," + r01 + "," + r31)), "records",
               "missing record: iteration 0, layer 3, micro-batch 0");
  expect_error(write("dup.json", doc(r00 + "," + r01 + "," + r30 + "," + r01 + "," + r31)),
               "records[3]",
               "duplicate record (iteration 0, layer 0, micro-batch 1), also records[1]");
  expect_error(write("iter.json", doc(replace(r00, "\"iteration\": 0", "\"iteration\": 1"))),
               "records[0].iteration", "an iteration in 0..0");
  expect_error(write("layer.json", doc(r00 + "," + replace(r01, "\"layer\": 0", "\"layer\": 2"))),
               "records[1].layer", "layer 2 is not in \"layers\"");
  expect_error(write("mb.json", doc(replace(r00, "\"micro_batch\": 0", "\"micro_batch\": 2"))),
               "records[0].micro_batch", "a micro-batch in 0..1");
  expect_error(write("reckey.json", doc(replace(r00, "\"tokens\"", "\"note\": 1, \"tokens\""))),
               "records[0].note", "unknown key");
  const std::string rest = "," + r01 + "," + r30 + "," + r31;
  expect_error(write("rows.json", doc(replace(r00, "[[1, 2], [3, 4]]", "[[1, 2]]") + rest)),
               "records[0].tokens", "expected 2 rows (ep), got 1 rows");
  expect_error(write("ragged.json", doc(replace(r00, "[3, 4]", "[3, 4, 5]") + rest)),
               "records[0].tokens[1]", "expected 2 counts (experts), got 3 counts");
  expect_error(write("float.json", doc(replace(r00, "[3, 4]", "[3, 4.5]") + rest)),
               "records[0].tokens[1][1]", "got 4.5");
  expect_error(write("huge.json", doc(replace(r00, "[3, 4]", "[3, 3000000000]") + rest)),
               "records[0].tokens[1][1]", "at most 2147483647");
  expect_error(
      write("notokens.json", doc(replace(r00, ", \"tokens\": [[1, 2], [3, 4]]", "") + rest)),
      "records[0]", "missing \"tokens\"");
}

// Numbers a double cannot hold, NaN, infinity and negative counts are errors naming the file,
// the JSON path and the line, never an nlohmann exception (out_of_range 406 escaped before).
TEST_F(RoutingIo, JsonNumbersOutOfRangeAreErrorsWithThePosition) {
  const std::string head =
      R"({"format": "mfabric-routing-trace", "version": 1, "ep": 2, "experts": 2,)"
      "\n"
      R"( "iterations": 1, "micro_batches": 1, "layers": [0], "records": [)"
      "\n";
  auto doc = [&](const std::string& tokens) {
    return head + R"({"iteration": 0, "layer": 0, "micro_batch": 0, "tokens": )" + tokens + "}]}\n";
  };
  EXPECT_NO_THROW(read_routing_trace(write("ok.json", doc("[[1, 2], [3, 4]]"))));
  // Line 3 is the record; "1e999" starts at its 71st character.
  expect_error(write("overflow.json", doc("[[1, 2], [3, 1e999]]")), "records[0].tokens[1][1]",
               "number 1e999 at line 3, column 71 is out of range");
  expect_error(write("overflow_neg.json", doc("[[-1e999, 2], [3, 4]]")), "records[0].tokens[0][0]",
               "out of range");
  // In the header too.
  std::string big_ep = head;
  big_ep.replace(big_ep.find("\"ep\": 2"), 7, "\"ep\": 1e400");
  expect_error(write("ep.json", big_ep + "]}"), "ep", "number 1e400 at line 1");
  // A whole number beyond int64 is a double: too large, not "not an integer".
  expect_error(write("u64.json", doc("[[1, 2], [3, 99999999999999999999999]]")),
               "records[0].tokens[1][1]", "at most 2147483647");
  expect_error(write("neg.json", doc("[[1, 2], [3, -7]]")), "records[0].tokens[1][1]",
               "expected a non-negative integer token count, got -7");
  expect_error(write("nan.json", doc("[[1, 2], [3, NaN]]")), "", "invalid JSON");
  expect_error(write("inf.json", doc("[[1, 2], [3, Infinity]]")), "", "invalid JSON");
  expect_error(write("frac.json", doc("[[1, 2], [3, 1e-5]]")), "records[0].tokens[1][1]",
               "got 1e-05");
  // Invalid UTF-8 in a string that an error message quotes does not throw from dump().
  expect_error(write("utf8.json", "{\"format\": \"mfabric\xFF\"}"), "", "invalid JSON");
}

TEST_F(RoutingIo, TextNumbersOutOfRangeAreErrors) {
  expect_error(write("exp.txt", "0 0 0 [[1, 2], [3, 1e999]]\n"), "line 1",
               "tokens[1][1]: expected a non-negative integer, got '1e999'");
  expect_error(write("nan.txt", "0 0 0 [[1, nan]]\n"), "line 1", "got 'nan'");
  expect_error(write("inf.txt", "0 0 0 [[inf, 1]]\n"), "line 1", "got 'inf'");
  expect_error(write("neg.txt", "0 0 0 [[1, -1]]\n"), "line 1", "negative -1");
  expect_error(write("idx.txt", "99999999999999999999 0 0 [[1]]\n"), "line 1",
               "iteration: 99999999999999999999 is too large");
  expect_error(write("bare.txt", "[[1, 1e999]]\n"), "line 1", "got '1e999'");
}

TEST_F(RoutingIo, DeclaredDimensionsBeyondTheCapAreRefusedBeforeAllocating) {
  // One record of 2^16 x 2^16 counts (16 GiB): refused from the header, before any allocation.
  const std::string huge =
      R"({"format": "mfabric-routing-trace", "version": 1, "ep": 65536, "experts": 65536,)"
      R"( "iterations": 1, "micro_batches": 1, "layers": [0], "records": [)"
      R"({"iteration": 0, "layer": 0, "micro_batch": 0, "tokens": [[1]]}]})";
  expect_error(write("huge.json", huge), "", "more than the 268435456");
  // The largest int dimensions: their product would overflow 64 bits.
  const std::string overflow =
      R"({"format": "mfabric-routing-trace", "version": 1, "ep": 2147483647,)"
      R"( "experts": 2147483647, "iterations": 1, "micro_batches": 1, "layers": [0],)"
      R"( "records": [{"iteration": 0, "layer": 0, "micro_batch": 0, "tokens": [[1]]}]})";
  expect_error(write("overflow.json", overflow), "", "token counts, more than");
  // Just under the cap is read (2^28 counts would be 1 GiB; a small trace stands in for it).
  EXPECT_LT(std::int64_t{2} * 2, kMaxRoutingTraceCounts);
}

// The JSON writer goes through nlohmann: the file parses as JSON with exactly the documented
// keys, one record per line, and reads back to the same trace.
TEST_F(RoutingIo, JsonWriterOutputIsStandardJson) {
  SyntheticRouting p;
  p.tokens_per_rank = 50;
  const auto trace = generate_routing(p, 2, 3, 2, {1, 4}, 1, Rng(5));
  write_routing_trace(trace, path("t.json"));
  std::ifstream in(path("t.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("format"), "mfabric-routing-trace");
  EXPECT_EQ(doc.at("version"), 1);
  EXPECT_EQ(doc.at("ep"), 2);
  EXPECT_EQ(doc.at("experts"), 3);
  EXPECT_EQ(doc.at("iterations"), 2);
  EXPECT_EQ(doc.at("micro_batches"), 1);
  EXPECT_EQ(doc.at("layers"), nlohmann::json({1, 4}));
  EXPECT_FALSE(doc.contains("static"));
  ASSERT_EQ(doc.at("records").size(), 4u);
  const auto& r = doc.at("records")[3];
  EXPECT_EQ(r.at("iteration"), 1);
  EXPECT_EQ(r.at("layer"), 4);
  EXPECT_EQ(r.at("micro_batch"), 0);
  auto m = trace.matrix(1, 1, 0);
  EXPECT_EQ(r.at("tokens"), nlohmann::json({{m[0], m[1], m[2]}, {m[3], m[4], m[5]}}));
  // One record per line.
  std::istringstream lines(text);
  int record_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    record_lines += line.starts_with("    {") ? 1 : 0;
  }
  EXPECT_EQ(record_lines, 4);
}

}  // namespace
}  // namespace mfabric::workload
