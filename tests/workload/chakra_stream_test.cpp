// Chakra reader, decoding and hostile input: gzip through protobuf's streams, the caps on the
// decoded stream and on one message, truncated and malformed files, files that are not regular
// files, and values that cannot be represented (docs/chakra.md, "Validation" and "Limits").
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "workload/chakra_test_util.h"

namespace mfabric::workload {
namespace {

using namespace chakra_testing;

std::vector<pb::Node> chain(int nodes) {
  std::vector<pb::Node> out;
  for (int i = 1; i <= nodes; ++i) {
    out.push_back(
        i == 1 ? comp(1, 1)
               : comp(static_cast<std::uint64_t>(i), 1, {static_cast<std::uint64_t>(i - 1)}));
  }
  return out;
}

// --- Files --------------------------------------------------------------------------------------

TEST(ChakraStream, MissingPrefixNamesRankZeroFile) {
  TempDir dir;
  const std::string prefix = dir.prefix("absent");
  expect_error(prefix, rank_file(prefix, 0), {"absent.0.et", "not found"});
}

TEST(ChakraStream, StopsAtTheFirstMissingRank) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1)});
  write_rank(dir.prefix(), 2, {comp(1, 1)});  // rank 1 missing: rank 2 is not read
  ChakraSummary s;
  const TaskGraph g = read_chakra(dir.prefix(), ChakraOptions{}, &s);
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(g.gpus(), 1);
  EXPECT_EQ(g.size(), 1u);
}

TEST(ChakraStream, ADirectoryAsARankFileIsAnError) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1)});
  fs::create_directory(rank_file(dir.prefix(), 1));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1), {"directory"});
}

TEST(ChakraStream, AFifoAsARankFileIsAnErrorNotAHang) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(rank_file(dir.prefix(), 0).c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"FIFO"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ChakraStream, ADeviceAsARankFileIsAnError) {
  TempDir dir;
  fs::create_symlink("/dev/zero", rank_file(dir.prefix(), 0));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"character device"});
}

// --- gzip ---------------------------------------------------------------------------------------

TEST(ChakraStream, GzipAndPlainReadTheSame) {
  TempDir dir;
  const std::vector<pb::Node> nodes = chain(50);
  write_rank(dir.prefix("plain"), 0, nodes, false);
  write_rank(dir.prefix("gz"), 0, nodes, true);
  const TaskGraph plain = read_chakra(dir.prefix("plain"), ChakraOptions{});
  const TaskGraph gz = read_chakra(dir.prefix("gz"), ChakraOptions{});
  ASSERT_EQ(plain.size(), 50u);
  ASSERT_EQ(gz.size(), plain.size());
  for (TaskId i = 0; i < 50; ++i) {
    EXPECT_EQ(gz.task(i).duration(), plain.task(i).duration());
    EXPECT_EQ(deps_of(gz, i), deps_of(plain, i));
  }
}

TEST(ChakraStream, ConcatenatedGzipMembersAreOneStream) {
  // `cat a.gz b.gz` is a valid gzip file of both contents; the split falls inside a message.
  TempDir dir;
  const std::string bytes = encode(chain(20));
  const std::size_t half = bytes.size() / 2 + 1;
  write_bytes(rank_file(dir.prefix(), 0), gzip(bytes.substr(0, half)) + gzip(bytes.substr(half)));
  EXPECT_EQ(read_chakra(dir.prefix(), ChakraOptions{}).size(), 20u);
}

TEST(ChakraStream, LargeGzipTraceReadsWhole) {
  // Many output buffers of protobuf's GzipInputStream (64 KiB each): messages cross them.
  TempDir dir;
  std::vector<pb::Node> nodes = chain(20000);
  for (pb::Node& n : nodes)
    n.set_name(std::string(40, 'x') + std::to_string(n.id()));
  write_rank(dir.prefix(), 0, nodes, true);
  ChakraSummary s;
  EXPECT_EQ(read_chakra(dir.prefix(), ChakraOptions{}, &s).size(), 20000u);
  EXPECT_EQ(s.compute, 20000);
}

TEST(ChakraStream, GzipBombStopsAtTheCap) {
  // A file of under 1 MiB that inflates to 32 MiB (one node with a 32 MiB name). With the cap
  // at 4 MiB the reader stops after 4 MiB of decoded data, quickly and without holding the
  // rest, and the error names the cap and the option that raises it.
  TempDir dir;
  pb::Node big = comp(1, 1);
  big.set_name(std::string(32u << 20, 'a'));  // 32 MiB: below the message cap of 64 MiB
  std::string bytes = encode({big});
  write_bytes(rank_file(dir.prefix(), 0), gzip(bytes, 9));
  EXPECT_LT(fs::file_size(rank_file(dir.prefix(), 0)), 1u << 20);
  ChakraOptions o;
  o.limits.max_rank_bytes = 4 << 20;  // 4 MiB: the name alone is 32 MiB
  const auto start = std::chrono::steady_clock::now();
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node #0", "decoded stream is larger than the 4MiB", "max_rank_bytes"}, o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // With the cap raised, the same file reads.
  o.limits.max_rank_bytes = 64 << 20;
  EXPECT_EQ(read_chakra(dir.prefix(), o).size(), 1u);
}

TEST(ChakraStream, TruncatedGzipTrailer) {
  TempDir dir;
  const std::string gz = gzip(encode({comp(1, 1), comp(2, 1, {1})}));
  write_bytes(rank_file(dir.prefix(), 0), gz.substr(0, gz.size() - 6));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"gzip", "truncated"});
}

TEST(ChakraStream, TruncatedGzipData) {
  TempDir dir;
  const std::string gz = gzip(encode(chain(2000)));
  write_bytes(rank_file(dir.prefix(), 0), gz.substr(0, gz.size() / 2));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"gzip", "truncated"});
}

TEST(ChakraStream, CorruptGzip) {
  TempDir dir;
  std::string gz = gzip(encode({comp(1, 1), comp(2, 1, {1}), comp(3, 1, {2})}));
  for (std::size_t i = 12; i < gz.size() - 8; i += 3)
    gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  write_bytes(rank_file(dir.prefix(), 0), gz);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"corrupt gzip"});
}

TEST(ChakraStream, GzipCrcMismatchIsCaught) {
  // Flip one byte of the stored CRC: the data decode fine, the check at the end fails.
  TempDir dir;
  std::string gz = gzip(encode(chain(10)));
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 0x01);
  write_bytes(rank_file(dir.prefix(), 0), gz);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"corrupt gzip"});
}

TEST(ChakraStream, GarbageAfterTheGzipMember) {
  TempDir dir;
  write_bytes(rank_file(dir.prefix(), 0), gzip(encode(chain(3))) + "trailing garbage");
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"corrupt gzip"});
}

// --- Framing ------------------------------------------------------------------------------------

TEST(ChakraStream, TruncatedMessage) {
  TempDir dir;
  const std::string bytes = encode({comp(1, 1), comp(2, 1, {1}), comp(3, 1, {2})});
  write_bytes(rank_file(dir.prefix(), 0), bytes.substr(0, bytes.size() - 3));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node #2", "byte offset", "truncated", "remain"});
}

TEST(ChakraStream, TruncatedInsideALengthPrefix) {
  TempDir dir;
  pb::Node big = comp(2, 1, {1});
  big.set_name(std::string(300, 'x'));  // a two-byte length prefix
  std::string bytes = encode({comp(1, 1)});
  const std::size_t cut = bytes.size();
  bytes = encode({comp(1, 1), big}).substr(0, cut + 1);
  write_bytes(rank_file(dir.prefix(), 0), bytes);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node #1", "truncated", "length prefix"});
}

TEST(ChakraStream, TruncatedLengthPrefixInAGzipFile) {
  TempDir dir;
  pb::Node big = comp(2, 1, {1});
  big.set_name(std::string(300, 'x'));
  std::string bytes = encode({comp(1, 1)});
  const std::size_t cut = bytes.size();
  bytes = encode({comp(1, 1), big}).substr(0, cut + 1);
  write_bytes(rank_file(dir.prefix(), 0), gzip(bytes));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node #1", "decompressed stream", "truncated", "length prefix"});
}

TEST(ChakraStream, MalformedVarint) {
  // Eleven continuation bytes: no varint is that long.
  TempDir dir;
  std::string bytes = encode({comp(1, 1)});
  bytes += std::string(11, '\xff');
  write_bytes(rank_file(dir.prefix(), 0), bytes);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node #1", "malformed length prefix"});
}

TEST(ChakraStream, HugeLengthPrefixIsRejectedBeforeReading) {
  TempDir dir;
  std::string bytes = encode({comp(1, 1)});
  varint(bytes, std::uint64_t{1} << 40);
  bytes += "short";
  write_bytes(rank_file(dir.prefix(), 0), bytes);
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node #1", "1099511627776 bytes", "max_message_bytes"});
}

TEST(ChakraStream, MessageCapIsAnOption) {
  TempDir dir;
  pb::Node named = comp(1, 1);
  named.set_name(std::string(2000, 'x'));
  write_rank(dir.prefix(), 0, {named});
  ChakraOptions o;
  o.limits.max_message_bytes = 1000;
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node #0", "max_message_bytes"}, o);
  o.limits.max_message_bytes = 4000;
  EXPECT_EQ(read_chakra(dir.prefix(), o).size(), 1u);
}

TEST(ChakraStream, GarbageBytes) {
  TempDir dir;
  write_bytes(rank_file(dir.prefix(), 0), "this is not a Chakra trace at all");
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"GlobalMetadata", "is this a Chakra .et file?"});
  // Valid framing around bytes that are not a Node.
  std::string bytes = encode({comp(1, 1)});
  bytes += std::string("\x03\xff\xff\xff", 4);
  write_bytes(rank_file(dir.prefix("framed"), 0), bytes);
  expect_error(dir.prefix("framed"), rank_file(dir.prefix("framed"), 0),
               {"node #1", "not a valid Chakra Node"});
}

TEST(ChakraStream, InvalidMessageInsideALargerChunk) {
  // A malformed node longer than the length prefix's look-ahead, with more data after it: the
  // parser gives back the unread part of its chunk (a fuzzer found that this once gave bytes
  // back to protobuf's file stream twice, which aborts). Plain and compressed.
  TempDir dir;
  std::string bytes = encode({comp(1, 1)});
  varint(bytes, 40);
  bytes += "\x08\x02\x12\x02n2" + std::string(34, '\xff');
  bytes += encode({comp(3, 1), comp(4, 1)});
  write_bytes(rank_file(dir.prefix("plain"), 0), bytes);
  expect_error(dir.prefix("plain"), rank_file(dir.prefix("plain"), 0),
               {"node #1", "not a valid Chakra Node"});
  write_bytes(rank_file(dir.prefix("gz"), 0), gzip(bytes));
  expect_error(dir.prefix("gz"), rank_file(dir.prefix("gz"), 0),
               {"node #1", "not a valid Chakra Node"});
}

TEST(ChakraStream, NonUtf8TextIsAnErrorWithoutProtobufLogging) {
  TempDir dir;
  pb::Node bad = comp(2, 1, {1});
  bad.set_name("\xff\xfe");
  {
    const google::protobuf::LogSilencer quiet;  // the writer complains too
    write_rank(dir.prefix(), 0, {comp(1, 1), bad});
  }
  ::testing::internal::CaptureStderr();
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node #1", "UTF-8"});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(ChakraStream, EmptyFile) {
  TempDir dir;
  write_bytes(rank_file(dir.prefix(), 0), "");
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"empty"});
  write_bytes(rank_file(dir.prefix("gz"), 0), gzip(""));
  expect_error(dir.prefix("gz"), rank_file(dir.prefix("gz"), 0), {"empty"});
}

TEST(ChakraStream, ZeroBytesAreEmptyNodesWithOneId) {
  // A run of zero bytes frames empty messages: every node has id 0, and the second one stops
  // the reader at once instead of after millions of nodes.
  TempDir dir;
  write_bytes(rank_file(dir.prefix(), 0), encode({}) + std::string(1 << 20, '\0'));
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"duplicate node id 0", "node #0"});
}

// --- Values -------------------------------------------------------------------------------------

TEST(ChakraStream, WrongAttributeType) {
  TempDir dir;
  pb::Node n = make(1, pb::COMM_COLL_NODE);
  add_string(n, "comm_type", "ALL_REDUCE");
  write_rank(dir.prefix(), 0, {n});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"node 1 (n1)", "comm_type", "expected an integer", "string_val"});
}

TEST(ChakraStream, CommSizeNear2To63IsRejected) {
  TempDir dir;
  pb::Node big = coll(1, pb::ALL_REDUCE, std::numeric_limits<std::int64_t>::max() - 1, "dp");
  write_rank(dir.prefix(), 0, {big});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node 1 (n1)", "comm_size", "2^50"});

  pb::Node unsigned_big = make(1, pb::COMM_COLL_NODE);
  add_int(unsigned_big, "comm_type", pb::ALL_REDUCE);
  auto* a = unsigned_big.add_attr();
  a->set_name("comm_size");
  a->set_uint64_val(std::numeric_limits<std::uint64_t>::max());
  write_rank(dir.prefix("u"), 0, {unsigned_big});
  expect_error(dir.prefix("u"), rank_file(dir.prefix("u"), 0), {"comm_size", "out of range"});

  pb::Node negative = make(1, pb::COMM_SEND_NODE);
  add_int(negative, "comm_size", -5);
  write_rank(dir.prefix("neg"), 0, {negative});
  expect_error(dir.prefix("neg"), rank_file(dir.prefix("neg"), 0), {"non-negative", "-5"});
}

TEST(ChakraStream, DurationsPastTheCapAreRejected) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, std::uint64_t{1} << 63)});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node 1 (n1)", "compute time"});
  // Each node below the cap, together above it (1e6 s per rank).
  write_rank(dir.prefix("sum"), 0, {comp(1, 600'000'000'000), comp(2, 600'000'000'000, {1})});
  expect_error(dir.prefix("sum"), rank_file(dir.prefix("sum"), 0), {"node 2 (n2)", "1000000"});
}

TEST(ChakraStream, NonFiniteNumOpsIsRejected) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    TempDir dir;
    pb::Node n = make(1, pb::COMP_NODE);
    auto* a = n.add_attr();
    a->set_name("num_ops");
    a->set_double_val(bad);
    write_rank(dir.prefix(), 0, {n});
    expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"num_ops", "finite"});
  }
}

TEST(ChakraStream, NumOpsTooLargeForTheClock) {
  TempDir dir;
  pb::Node n = make(1, pb::COMP_NODE);
  auto* a = n.add_attr();
  a->set_name("num_ops");
  a->set_double_val(1e300);
  write_rank(dir.prefix(), 0, {n});
  ChakraOptions o;
  o.gpu.peak_bf16_flops = 1e15;
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"node 1 (n1)", "compute time"}, o);
}

TEST(ChakraStream, ListLongerThanTheTraceIsRejectedBeforeItIsKept) {
  TempDir dir;
  pb::Node a2a = coll(1, pb::ALL_TO_ALL, 0, "ep");
  auto* a = a2a.add_attr();
  a->set_name("send_bytes_per_rank");
  for (int i = 0; i < 100000; ++i)
    a->mutable_int64_list()->add_values(1);
  write_rank(dir.prefix(), 0, {a2a});
  write_rank(dir.prefix(), 1, {coll(1, pb::ALL_TO_ALL, 0, "ep")});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0),
               {"send_bytes_per_rank", "100000 entries", "2 ranks"});
}

TEST(ChakraStream, DependencyOnAnIdNotInTheFile) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1)});
  write_rank(dir.prefix(), 1,
             {comp(1, 1), comp(2, 1, {std::numeric_limits<std::uint64_t>::max()})});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1),
               {"node 2 (n2)", "node 18446744073709551615", "not in this file"});
}

TEST(ChakraStream, DuplicateNodeId) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1), comp(1, 2)});
  expect_error(dir.prefix(), rank_file(dir.prefix(), 0), {"duplicate node id 1"});
}

TEST(ChakraStream, MemoryEstimateIsCappedAcrossRanks) {
  // Each node of chain(100) is counted as kChakraBytesPerNode + its name (n1..n100) + one
  // dependency (none for the first). Two ranks of 100 nodes pass a cap of 150 nodes' worth in
  // rank 1's node 50 or so, whichever exact node it is.
  TempDir dir;
  write_rank(dir.prefix(), 0, chain(100));
  write_rank(dir.prefix(), 1, chain(100));
  ChakraOptions o;
  const std::int64_t per_node = kChakraBytesPerNode + kChakraBytesPerDependency + 3;
  o.limits.max_memory = 150 * per_node;
  expect_error(dir.prefix(), rank_file(dir.prefix(), 1), {"max_memory", "--max-memory"}, o);
  o.limits.max_memory = 210 * per_node;
  EXPECT_EQ(read_chakra(dir.prefix(), o).size(), 200u);
}

TEST(ChakraStream, BadOptions) {
  TempDir dir;
  write_rank(dir.prefix(), 0, {comp(1, 1)});
  ChakraOptions o;
  o.efficiency = 0;
  EXPECT_THROW(read_chakra(dir.prefix(), o), Error);
  o = ChakraOptions{};
  o.limits.max_message_bytes = std::int64_t{1} << 40;
  EXPECT_THROW(read_chakra(dir.prefix(), o), Error);
  o = ChakraOptions{};
  o.limits.max_rank_bytes = 0;
  EXPECT_THROW(read_chakra(dir.prefix(), o), Error);
}

}  // namespace
}  // namespace mfabric::workload
