// Atomic output (core/output_files.h): a file is its old or its new content, a directory set is
// the old or the new complete set, whatever fails and whatever signal arrives, and nothing
// temporary is left behind.
#include "core/output_files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "test_text.h"

namespace mfabric {
namespace {

namespace fs = std::filesystem;
using Files = std::map<std::string, std::string>;
using testing::slurp;

// Every regular file in `dir` with its content.
Files contents(const fs::path& dir) {
  Files out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    out[entry.path().filename().string()] = slurp(entry.path());
  }
  return out;
}

std::vector<OutputFile> set_of(const Files& files) {
  std::vector<OutputFile> out;
  for (const auto& [name, text] : files) {
    // Copied into a named variable: clang 14 cannot capture a structured binding.
    std::string content = text;
    out.push_back({name, [content](std::ostream& o) { o << content; }});
  }
  return out;
}

const Files kOld = {{"a.json", "{\"old\": 1}\n"}, {"b.csv", "x,y\n1,2\n"}};
const Files kNew = {{"a.json", "{\"new\": 2}\n"}, {"b.csv", "x,y\n3,4\n5,6\n"}};

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("mfabric-output-files-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(root_, ignored);
  }
  fs::path out() const { return root_ / "out"; }
  // Names in the test's root directory: only what the test made, no staging or temporary files.
  std::set<std::string> root_entries() const {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(root_))
      names.insert(entry.path().filename().string());
    return names;
  }

  fs::path root_;
};

TEST_F(OutputFiles, WritesANewDirectoryAndItsMissingParents) {
  const fs::path dir = root_ / "deeper" / "still" / "out";
  write_output_set(dir.string(), set_of(kNew));
  EXPECT_EQ(contents(dir), kNew);
  EXPECT_EQ(root_entries(), std::set<std::string>{"deeper"});
  EXPECT_EQ(fs::directory_iterator(dir.parent_path())->path().filename(), "out");
}

TEST_F(OutputFiles, ReplacesThePreviousSet) {
  write_output_set(out().string(), set_of(kOld));
  write_output_set(out().string(), set_of(kNew));
  EXPECT_EQ(contents(out()), kNew);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

TEST_F(OutputFiles, ASetWithOtherNamesDoesNotReplaceIt) {
  // b.csv is not a file of the new set: it might be the user's, so it is not deleted.
  write_output_set(out().string(), set_of(kOld));
  EXPECT_THROW(write_output_set(out().string(), set_of({{"a.json", "{}"}})), Error);
  EXPECT_EQ(contents(out()), kOld);
  // A subset of the new set's names is a previous set: replaced.
  fs::remove(out() / "b.csv");
  write_output_set(out().string(), set_of(kNew));
  EXPECT_EQ(contents(out()), kNew);
}

TEST_F(OutputFiles, ASetWithOptionalFilesReplacesAPreviousSetWithOthersOfThem) {
  // The set may hold a.json, b.csv and c.svg; each run writes some of them.
  const std::vector<std::string> names = {"a.json", "b.csv", "c.svg"};
  write_output_set(out().string(), set_of(kOld), names);
  EXPECT_EQ(contents(out()), kOld);
  const Files only_a = {{"a.json", "{}"}};
  write_output_set(out().string(), set_of(only_a), names);
  EXPECT_EQ(contents(out()), only_a);  // b.csv went with the previous set
  const Files a_and_c = {{"a.json", "{}"}, {"c.svg", "<svg/>"}};
  write_output_set(out().string(), set_of(a_and_c), names);
  EXPECT_EQ(contents(out()), a_and_c);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
  // A name outside the set is still someone else's file.
  std::ofstream(out() / "notes.txt") << "mine";
  EXPECT_THROW(write_output_set(out().string(), set_of(only_a), names), Error);
  EXPECT_EQ(contents(out()).size(), 3u);
  // A file written must be one of the names.
  EXPECT_THROW(write_output_set((root_ / "other").string(), set_of({{"d.txt", ""}}), names),
               std::invalid_argument);
}

TEST_F(OutputFiles, TrailingSlashAndDotComponents) {
  write_output_set(out().string() + "/", set_of(kOld));
  write_output_set((root_ / "." / "out" / "").string(), set_of(kNew));
  EXPECT_EQ(contents(out()), kNew);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

// The fault injected midway: the second file's writer throws after the first file is complete.
void expect_failed_write_keeps_old_set(const fs::path& dir, bool use_exchange) {
  std::vector<OutputFile> files = set_of(kNew);
  files[1].write = [](std::ostream& o) {
    o << "half a file";
    throw Error("", "", "injected failure");
  };
  EXPECT_THROW(detail::write_output_set(dir.string(), files, use_exchange), Error);
  EXPECT_EQ(contents(dir), kOld);
}

TEST_F(OutputFiles, AFailureMidwayLeavesExactlyTheOldSet) {
  write_output_set(out().string(), set_of(kOld));
  expect_failed_write_keeps_old_set(out(), /*use_exchange=*/true);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

TEST_F(OutputFiles, AFailureMidwayLeavesExactlyTheOldSetWithoutExchange) {
  write_output_set(out().string(), set_of(kOld));
  expect_failed_write_keeps_old_set(out(), /*use_exchange=*/false);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
  // And the two-rename swap itself works.
  detail::write_output_set(out().string(), set_of(kNew), /*use_exchange=*/false);
  EXPECT_EQ(contents(out()), kNew);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

TEST_F(OutputFiles, AFailureOnTheFirstWriteLeavesNoDirectory) {
  std::vector<OutputFile> files = set_of(kNew);
  files[0].write = [](std::ostream&) { throw std::runtime_error("not an mfabric::Error"); };
  EXPECT_THROW(write_output_set(out().string(), files), std::runtime_error);
  EXPECT_TRUE(root_entries().empty());
}

TEST_F(OutputFiles, RefusesADirectoryWithOtherFiles) {
  fs::create_directories(out());
  std::ofstream(out() / "notes.txt") << "mine";
  try {
    write_output_set(out().string(), set_of(kNew));
    FAIL() << "replaced a directory holding a user's file";
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), out().string());
    EXPECT_NE(e.message().find("notes.txt"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("a.json, b.csv"), std::string::npos) << e.what();
  }
  EXPECT_EQ(contents(out()), (Files{{"notes.txt", "mine"}}));
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

TEST_F(OutputFiles, RefusesASubdirectoryEvenWithAKnownName) {
  fs::create_directories(out() / "a.json");
  EXPECT_THROW(write_output_set(out().string(), set_of(kNew)), Error);
  EXPECT_TRUE(fs::is_directory(out() / "a.json"));
}

TEST_F(OutputFiles, RefusesAFile) {
  std::ofstream(out()) << "a file";
  try {
    write_output_set(out().string(), set_of(kNew));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("not a directory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(out()), "a file");
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

TEST_F(OutputFiles, RefusesAParentThatIsAFile) {
  std::ofstream(root_ / "file") << "x";
  EXPECT_THROW(write_output_set((root_ / "file" / "out").string(), set_of(kNew)), Error);
}

TEST_F(OutputFiles, RefusesAnUnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write anywhere";
  write_output_set(out().string(), set_of(kOld));
  fs::permissions(out(), fs::perms::owner_write, fs::perm_options::remove);
  EXPECT_THROW(write_output_set(out().string(), set_of(kNew)), Error);
  fs::permissions(out(), fs::perms::owner_write, fs::perm_options::add);
  EXPECT_EQ(contents(out()), kOld);
}

TEST_F(OutputFiles, FollowsASymbolicLinkAndKeepsPermissions) {
  fs::create_directories(root_ / "real");
  ::chmod((root_ / "real").c_str(), 0750);
  fs::create_directory_symlink("real", out());
  write_output_set(out().string(), set_of(kOld));
  write_output_set(out().string(), set_of(kNew));
  EXPECT_TRUE(fs::is_symlink(out()));
  EXPECT_EQ(contents(root_ / "real"), kNew);
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "real").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(root_entries(), (std::set<std::string>{"out", "real"}));
}

TEST_F(OutputFiles, CheckingWritesNothing) {
  const std::vector<std::string> names = {"a.json", "b.csv"};
  EXPECT_NO_THROW(check_output_set((root_ / "new" / "deeper" / "out").string(), names));
  EXPECT_NO_THROW(check_output_set(out().string(), names));
  EXPECT_TRUE(root_entries().empty());
  write_output_set(out().string(), set_of(kOld));
  EXPECT_NO_THROW(check_output_set(out().string(), names));
  std::ofstream(out() / "notes.txt") << "mine";
  EXPECT_THROW(check_output_set(out().string(), names), Error);
  std::ofstream(root_ / "file") << "x";
  EXPECT_THROW(check_output_set((root_ / "file").string(), names), Error);
  EXPECT_THROW(check_output_set((root_ / "file" / "out").string(), names), Error);
  EXPECT_THROW(check_output_set("/", names), Error);
  EXPECT_EQ(root_entries(), (std::set<std::string>{"out", "file"}));
}

TEST_F(OutputFiles, BadFileNamesAreProgrammingErrors) {
  EXPECT_THROW(write_output_set(out().string(), {}), std::invalid_argument);
  EXPECT_THROW(write_output_set(out().string(), set_of({{"a/b", ""}})), std::invalid_argument);
  EXPECT_THROW(write_output_set(out().string(), set_of({{".hidden", ""}})), std::invalid_argument);
}

// A pid that no process has: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST_F(OutputFiles, LeftoversOfAKilledRunAreRemoved) {
  write_output_set(out().string(), set_of(kOld));
  const pid_t gone = dead_pid();
  const fs::path staging = root_ / (".out.staging." + std::to_string(gone));
  fs::create_directories(staging);
  std::ofstream(staging / "a.json") << "partial";
  std::ofstream(root_ / (".out.tmp." + std::to_string(gone) + ".0")) << "partial";
  // A leftover of a live process (this one's parent shell, say) is not touched.
  const fs::path live = root_ / (".out.staging." + std::to_string(::getppid()));
  fs::create_directories(live);
  write_output_set(out().string(), set_of(kNew));
  EXPECT_EQ(contents(out()), kNew);
  EXPECT_EQ(root_entries(), (std::set<std::string>{"out", live.filename().string()}));
}

TEST_F(OutputFiles, APreviousSetMovedAsideByAKilledRunIsPutBack) {
  // Killed between the two renames of the fallback swap: `out` is missing, the old set is aside.
  const pid_t gone = dead_pid();
  const fs::path aside = root_ / (".out.old." + std::to_string(gone));
  fs::create_directories(aside);
  for (const auto& [name, text] : kOld)
    std::ofstream(aside / name) << text;
  // A failing write still ends with the previous set in place.
  std::vector<OutputFile> files = set_of(kNew);
  files[1].write = [](std::ostream&) { throw Error("", "", "injected failure"); };
  EXPECT_THROW(write_output_set(out().string(), files), Error);
  EXPECT_EQ(contents(out()), kOld);
  EXPECT_EQ(root_entries(), std::set<std::string>{"out"});
}

// Forks a child that writes kNew over kOld and stops inside the second file's writer (after
// telling the parent through a pipe), sends it `sig`, and checks what is left.
void interrupt_while_writing(const fs::path& root, const fs::path& dir, int sig,
                             bool use_exchange) {
  write_output_set(dir.string(), set_of(kOld));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    std::vector<OutputFile> files = set_of(kNew);
    files[1].write = [&](std::ostream& o) {
      o << "half";
      o.flush();
      const char c = 'x';
      (void)!::write(ready[1], &c, 1);
      for (;;)
        ::pause();
    };
    detail::write_output_set(dir.string(), files, use_exchange);
    ::_exit(0);  // not reached
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  // The staging directory exists now, with one complete file and one partial one.
  bool staging_seen = false;
  for (const auto& entry : fs::directory_iterator(root)) {
    staging_seen |= entry.path().filename().string().starts_with(".out.staging.");
  }
  EXPECT_TRUE(staging_seen);
  ASSERT_EQ(::kill(child, sig), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status)) << status;
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(WTERMSIG(status), sig);
  }
  EXPECT_EQ(contents(dir), kOld);
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(root))
    left.insert(entry.path().filename().string());
  EXPECT_EQ(left, std::set<std::string>{dir.filename().string()});
}

TEST_F(OutputFiles, SigintWhileWritingLeavesTheOldSetAndNoStaging) {
  interrupt_while_writing(root_, out(), SIGINT, true);
}

TEST_F(OutputFiles, SigtermWhileWritingLeavesTheOldSetAndNoStaging) {
  interrupt_while_writing(root_, out(), SIGTERM, true);
}

TEST_F(OutputFiles, SigintWhileWritingWithoutExchange) {
  interrupt_while_writing(root_, out(), SIGINT, false);
}

TEST_F(OutputFiles, HandlersAreRestoredAfterwards) {
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  write_output_set(out().string(), set_of(kNew));
  struct sigaction after {};
  ::sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
}

// Single files.

TEST_F(OutputFiles, WritesAndReplacesAFileAtomically) {
  const fs::path file = root_ / "trace.json";
  write_file_atomically(file.string(), std::string("old"));
  write_file_atomically(file.string(), [](std::ostream& o) { o << "new"; });
  EXPECT_EQ(slurp(file), "new");
  EXPECT_EQ(root_entries(), std::set<std::string>{"trace.json"});
}

TEST_F(OutputFiles, AFailedFileWriteLeavesTheOldFile) {
  const fs::path file = root_ / "trace.json";
  write_file_atomically(file.string(), std::string("old"));
  EXPECT_THROW(write_file_atomically(file.string(),
                                     [](std::ostream& o) {
                                       o << std::string(1 << 20, 'x');
                                       throw Error("", "", "injected");
                                     }),
               Error);
  EXPECT_EQ(slurp(file), "old");
  EXPECT_EQ(root_entries(), std::set<std::string>{"trace.json"});
}

TEST_F(OutputFiles, FileErrorsNameThePath) {
  const std::string missing = (root_ / "no-such-dir" / "f.json").string();
  try {
    write_file_atomically(missing, std::string("x"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), missing);
    EXPECT_NE(e.message().find("does not exist"), std::string::npos) << e.what();
  }
  try {
    write_file_atomically(root_.string(), std::string("x"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("is a directory"), std::string::npos) << e.what();
  }
}

TEST_F(OutputFiles, WritesThroughASymbolicLink) {
  std::ofstream(root_ / "target.txt") << "old";
  fs::create_symlink("target.txt", root_ / "link.txt");
  write_file_atomically((root_ / "link.txt").string(), std::string("new"));
  EXPECT_TRUE(fs::is_symlink(root_ / "link.txt"));
  EXPECT_EQ(slurp(root_ / "target.txt"), "new");
}

TEST_F(OutputFiles, SigintWhileWritingAFileLeavesNoTemporary) {
  const fs::path file = root_ / "trace.json";
  write_file_atomically(file.string(), std::string("old"));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    write_file_atomically(file.string(), [&](std::ostream& o) {
      o << "partial" << std::flush;
      const char c = 'x';
      (void)!::write(ready[1], &c, 1);
      for (;;)
        ::pause();
    });
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  EXPECT_EQ(root_entries().size(), 2u);  // the file and its temporary
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  EXPECT_EQ(slurp(file), "old");
  EXPECT_EQ(root_entries(), std::set<std::string>{"trace.json"});
}

}  // namespace
}  // namespace mfabric
