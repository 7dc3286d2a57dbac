// Writing Chakra traces for the reader's tests: each test writes its own small traces (plain
// and gzip) with the generated protobuf classes into a fresh temporary directory. The framing
// and gzip here are written independently of the reader (a varint loop and zlib directly), so
// that the tests check the reader against the format, not against itself.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.h"
#include "workload/chakra.h"
#include "workload/chakra/et_def.pb.h"

namespace mfabric::workload::chakra_testing {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("mfabric_chakra_" + std::string(info->name()) + "_" +
             std::to_string(static_cast<long long>(::getpid())) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string prefix(const std::string& name = "trace") const { return (path_ / name).string(); }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

inline void add_int(pb::Node& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

inline void add_string(pb::Node& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}

inline void add_list(pb::Node& n, const std::string& name,
                     std::initializer_list<std::int64_t> values) {
  auto* a = n.add_attr();
  a->set_name(name);
  for (std::int64_t v : values)
    a->mutable_int64_list()->add_values(v);
}

inline pb::Node make(std::uint64_t id, pb::NodeType type,
                     std::initializer_list<std::uint64_t> deps = {}, const std::string& name = "") {
  pb::Node n;
  n.set_id(id);
  n.set_name(name.empty() ? "n" + std::to_string(id) : name);
  n.set_type(type);
  for (std::uint64_t d : deps)
    n.add_data_deps(d);
  return n;
}

inline pb::Node comp(std::uint64_t id, std::uint64_t micros,
                     std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMP_NODE, deps);
  n.set_duration_micros(micros);
  return n;
}

// A compute node whose only dependencies are control dependencies.
inline pb::Node comp_ctrl(std::uint64_t id, std::uint64_t micros,
                          std::initializer_list<std::uint64_t> ctrl_deps) {
  pb::Node n = comp(id, micros);
  for (std::uint64_t d : ctrl_deps)
    n.add_ctrl_deps(d);
  return n;
}

inline pb::Node coll(std::uint64_t id, pb::CollectiveCommType type, std::int64_t size,
                     const std::string& pg, std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_COLL_NODE, deps);
  add_int(n, "comm_type", type);
  if (size >= 0) add_int(n, "comm_size", size);
  if (!pg.empty()) add_string(n, "pg_name", pg);
  return n;
}

inline pb::Node send(std::uint64_t id, int dst, std::int64_t size, int tag,
                     std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_SEND_NODE, deps);
  add_int(n, "comm_dst", dst);
  add_int(n, "comm_size", size);
  auto* a = n.add_attr();  // int32 as in the schema's documentation
  a->set_name("comm_tag");
  a->set_int32_val(tag);
  return n;
}

inline pb::Node recv(std::uint64_t id, int src, std::int64_t size, int tag,
                     std::initializer_list<std::uint64_t> deps = {}) {
  pb::Node n = make(id, pb::COMM_RECV_NODE, deps);
  add_int(n, "comm_src", src);
  add_int(n, "comm_size", size);
  auto* a = n.add_attr();
  a->set_name("comm_tag");
  a->set_int32_val(tag);
  return n;
}

// A varint, as protobuf encodes lengths.
inline void varint(std::string& out, std::uint64_t n) {
  do {
    const auto low = static_cast<unsigned char>(n & 0x7f);
    n >>= 7;
    out.push_back(static_cast<char>(n != 0 ? (low | 0x80) : low));
  } while (n != 0);
}

// [varint length][message], as Chakra's writers frame every message.
inline void frame(std::string& out, const google::protobuf::MessageLite& m) {
  const std::string body = m.SerializeAsString();
  varint(out, body.size());
  out += body;
}

inline pb::GlobalMetadata default_metadata() {
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  return meta;
}

inline std::string encode(const std::vector<pb::Node>& nodes,
                          const pb::GlobalMetadata* meta = nullptr) {
  std::string out;
  frame(out, meta != nullptr ? *meta : default_metadata());
  for (const pb::Node& n : nodes)
    frame(out, n);
  return out;
}

// One gzip member (zlib's deflate with a gzip header and trailer).
inline std::string gzip(const std::string& in, int level = Z_DEFAULT_COMPRESSION) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string rank_file(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

inline void write_rank(const std::string& prefix, int rank, const std::vector<pb::Node>& nodes,
                       bool compressed = false, const pb::GlobalMetadata* meta = nullptr) {
  const std::string bytes = encode(nodes, meta);
  write_bytes(rank_file(prefix, rank), compressed ? gzip(bytes) : bytes);
}

inline std::vector<TaskId> find(const TaskGraph& g, const std::function<bool(const Task&)>& pred) {
  std::vector<TaskId> out;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (pred(g.task(static_cast<TaskId>(i)))) out.push_back(static_cast<TaskId>(i));
  }
  return out;
}

inline std::vector<TaskId> deps_of(const TaskGraph& g, TaskId id) {
  auto d = g.deps(id);
  std::vector<TaskId> out(d.begin(), d.end());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs the reader and checks it throws an Error located in `file` whose text contains every
// fragment. Returns the message.
inline std::string expect_error(const std::string& prefix, const std::string& file,
                                std::initializer_list<std::string> fragments,
                                const ChakraOptions& options = {}) {
  try {
    read_chakra(prefix, options);
    ADD_FAILURE() << "expected an error naming " << file;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.source(), file) << what;
    for (const std::string& f : fragments) {
      EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
    }
    return what;
  }
  return "";
}

}  // namespace mfabric::workload::chakra_testing
