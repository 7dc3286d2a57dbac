#include "ocs/ocs_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "scratch_dir.h"

namespace mfabric::ocs {
namespace {

using Kind = OcsChange::Kind;

class OcsJournalTest : public mfabric::testing::ScratchDirTest {
 protected:
  OcsJournalTest() : ScratchDirTest("ocs_journal") {}
  std::string path() const { return (dir_ / "ocs.state").string(); }
  std::string content() const {
    std::ifstream in(path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void change(OcsState& state, OcsJournal& journal, const OcsChange& c) {
    journal.append(c);
    state.apply(c, Time::zero(), Time::zero());
    journal.compact_if_due(state);
  }
};

TEST_F(OcsJournalTest, ANewFileStartsEmptyAndReplaysItsChanges) {
  {
    OcsState state(8);
    OcsJournal journal(path(), 8, &state);
    EXPECT_TRUE(state.patches().empty());
    change(state, journal, {Kind::Connect, 1, 5});
    change(state, journal, {Kind::Connect, 2, 6});
    change(state, journal, {Kind::Disconnect, 6, 0});
    change(state, journal, {Kind::Fail, 3, 0});
  }
  EXPECT_EQ(content(),
            "mfabric-ocs-state 1 ports 8\nconnect 1 5\nconnect 2 6\ndisconnect 6\nfail 3\n");
  OcsState state(8);
  OcsJournal journal(path(), 8, &state);
  EXPECT_EQ(journal.replay().records, 4u);
  EXPECT_EQ(state.patches(), (std::vector<OcsPatch>{{1, 5}}));
  EXPECT_EQ(state.failed_ports(), (std::vector<int>{3}));
  EXPECT_FALSE(state.status(1, Time::zero()).switching);
}

// Written changes wait for one flush; a snapshot flushes them too; a reopened journal replays
// what was written (a killed process leaves its writes in the file).
TEST_F(OcsJournalTest, WrittenChangesAreFlushedTogether) {
  {
    OcsState state(8);
    OcsJournal journal(path(), 8, &state);
    EXPECT_FALSE(journal.unsynced());
    journal.write({Kind::Connect, 1, 5});
    journal.write({Kind::Connect, 2, 6});
    EXPECT_TRUE(journal.unsynced());
    EXPECT_EQ(journal.records(), 2u);
    journal.sync();
    EXPECT_FALSE(journal.unsynced());
    journal.sync();  // nothing to flush
    journal.write({Kind::Disconnect, 6, 0});
    state.apply({Kind::Connect, 1, 5}, Time::zero(), Time::zero());
    EXPECT_TRUE(journal.unsynced());
    journal.compact(state);
    EXPECT_FALSE(journal.unsynced());
    journal.write({Kind::Fail, 3, 0});
  }
  OcsState state(8);
  OcsJournal journal(path(), 8, &state);
  EXPECT_EQ(content(), "mfabric-ocs-state 1 ports 8\nconnect 1 5\nfail 3\n");
  EXPECT_EQ(journal.replay().records, 2u);
}

TEST_F(OcsJournalTest, ATornLastLineIsDroppedAndTheFileRepaired) {
  write("ocs.state", "mfabric-ocs-state 1 ports 8\nconnect 1 5\nconnect 2 ");  // killed mid-write
  OcsState state(8);
  {
    OcsJournal journal(path(), 8, &state);
    EXPECT_EQ(journal.replay().torn_line, 3u);
    EXPECT_EQ(state.patches(), (std::vector<OcsPatch>{{1, 5}}));
    change(state, journal, {Kind::Connect, 2, 7});
  }
  EXPECT_EQ(content(), "mfabric-ocs-state 1 ports 8\nconnect 1 5\nconnect 2 7\n");
}

TEST_F(OcsJournalTest, ACorruptLineIsRefusedWithItsNumber) {
  OcsState state(8);
  write("ocs.state", "mfabric-ocs-state 1 ports 8\nconnect 1 5\nconect 2 6\n");
  try {
    OcsJournal journal(path(), 8, &state);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.source(), path());
    EXPECT_NE(e.message().find("line 3:"), std::string::npos) << e.message();
  }
  write("ocs.state", "mfabric-ocs-state 1 ports 8\nconnect 1 5\nconnect 5 6\n");  // 5 is busy
  EXPECT_THROW(OcsJournal(path(), 8, &state), Error);
  write("ocs.state", "mfabric-ocs-state 1 ports 16\n");
  EXPECT_THROW(OcsJournal(path(), 8, &state), Error);
  write("ocs.state", "hello\n");
  EXPECT_THROW(OcsJournal(path(), 8, &state), Error);
}

TEST_F(OcsJournalTest, CompactionKeepsTheFileBounded) {
  {
    OcsState state(4);
    OcsJournal journal(path(), 4, &state, /*compact_after=*/10);
    for (int round = 0; round < 100; ++round) {
      change(state, journal, {Kind::Connect, 1, 2});
      change(state, journal, {Kind::Disconnect, 2, 0});
    }
    change(state, journal, {Kind::Connect, 3, 4});
    EXPECT_LE(journal.records(), 11u);
  }
  EXPECT_LE(content().size(), 200u);
  OcsState state(4);
  OcsJournal journal(path(), 4, &state);
  EXPECT_EQ(state.patches(), (std::vector<OcsPatch>{{3, 4}}));
}

TEST_F(OcsJournalTest, OneJournalPerFile) {
  OcsState state(4);
  OcsJournal first(path(), 4, &state);
  try {
    OcsJournal second(path(), 4, &state);
    FAIL() << "a state file opened twice";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("in use by another emulator"), std::string::npos) << e.message();
  }
}

TEST_F(OcsJournalTest, ADirectoryIsNotAStateFile) {
  std::filesystem::create_directories(path());
  OcsState state(4);
  EXPECT_THROW(OcsJournal(path(), 4, &state), Error);
}

}  // namespace
}  // namespace mfabric::ocs
