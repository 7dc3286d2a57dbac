// Writing Chakra traces for the reader's tests: each test writes its own small traces (plain
// and gzip, built with chakra_writer.h) into a fresh temporary directory.
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
#include "workload/chakra_writer.h"

namespace mfabric::workload::chakra_testing {

namespace fs = std::filesystem;

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

inline std::string gzip(const std::string& in, int level = Z_DEFAULT_COMPRESSION) {
  std::string out;
  EXPECT_TRUE(gzip_member(in, level, out));
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
