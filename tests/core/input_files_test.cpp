// Reading input files: only regular files, never past a cap, one clear error otherwise.
#include "core/input_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"

namespace mfabric {
namespace {

namespace fs = std::filesystem;

class InputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mfabric_input_files_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // The message of the Error `fn` throws, or a failure.
  template <class F>
  std::string error_of(F&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }
  fs::path dir_;
};

TEST_F(InputFiles, ReadsARegularFileWhole) {
  const std::string text = std::string("a: 1\n") + std::string(200000, 'x') + "\n";
  EXPECT_EQ(read_text_file(write("ok.yaml", text), "file", "a file"), text);
  EXPECT_EQ(read_text_file(write("empty.yaml", ""), "file", "a file"), "");
}

TEST_F(InputFiles, MissingFileNamesThePathAndWhatWasExpected) {
  const std::string msg = error_of(
      [&] { read_text_file((dir_ / "nope.yaml").string(), "price file", "a YAML price file"); });
  EXPECT_NE(msg.find("nope.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("price file not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a YAML price file"), std::string::npos) << msg;
}

TEST_F(InputFiles, DirectoryFifoAndDeviceAreRefusedWithoutBlocking) {
  EXPECT_NE(error_of([&] { read_text_file(dir_.string()); }).find("is a directory"),
            std::string::npos);
  const std::string fifo = (dir_ / "pipe.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // With no writer, opening a FIFO for reading would block forever; it must be refused first.
  EXPECT_NE(error_of([&] { read_text_file(fifo); }).find("is a FIFO"), std::string::npos);
  EXPECT_NE(error_of([&] { require_regular_file(fifo, "file", "a file"); }).find("FIFO"),
            std::string::npos);
  if (fs::exists("/dev/zero")) {
    // /dev/zero never ends: reading it would exhaust memory.
    EXPECT_NE(error_of([] { read_text_file("/dev/zero"); }).find("character device"),
              std::string::npos);
  }
}

TEST_F(InputFiles, FileAboveTheCapIsRefusedNamingBothSizes) {
  const std::string path = write("big.json", std::string(4096, '1'));
  EXPECT_EQ(read_text_file(path, "trace", "a trace", 4096).size(), 4096u);
  const std::string msg = error_of([&] { read_text_file(path, "trace", "a trace", 4095); });
  EXPECT_NE(msg.find("big.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4KiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("larger than"), std::string::npos) << msg;
}

TEST_F(InputFiles, SymbolicLinkToARegularFileIsRead) {
  const std::string target = write("target.yaml", "x: 1\n");
  const fs::path link = dir_ / "link.yaml";
  fs::create_symlink(target, link);
  EXPECT_EQ(read_text_file(link.string()), "x: 1\n");
}

}  // namespace
}  // namespace mfabric
