#include "ocs/ocs_emulator.h"
#include "ocs_emulator_process.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/error.h"
#include "ocs/ocs_tl1_handler.h"
#include "scratch_dir.h"
#include "tl1/tl1_client.h"
#include "tl1_test_client.h"

namespace mfabric::ocs {
namespace {

using mfabric::testing::Tl1TestClient;
using Clock = std::chrono::steady_clock;
using tl1::format_tl1_message;
using tl1::kMaxTl1CommandBytes;
using tl1::parse_patches;
using tl1::parse_port_status;
using tl1::PortState;
using tl1::PortStatus;
using tl1::Tl1Acknowledgment;
using tl1::Tl1AutonomousMessage;
using tl1::Tl1Client;
using tl1::Tl1Completion;
using tl1::Tl1Denied;
using tl1::Tl1Message;
using tl1::Tl1Response;

constexpr Time kEmulatorSwitching = Time::milliseconds(50);

// An emulator serving on a thread of its own, stopped (and joined) when the test ends; it also
// stops by itself after 20 s, so that a failing test cannot hang.
class RunningEmulator {
 public:
  explicit RunningEmulator(OcsEmulatorOptions options) : emulator_(std::move(options)) {
    thread_ = std::thread([this] { stats_ = emulator_.run(); });
  }
  ~RunningEmulator() { stop(); }
  OcsEmulatorStats stop() {
    if (thread_.joinable()) {
      emulator_.request_stop();
      thread_.join();
    }
    return stats_;
  }
  const std::string& address() const { return emulator_.address(); }

 private:
  OcsEmulator emulator_;
  OcsEmulatorStats stats_;
  std::thread thread_;
};

class OcsEmulatorTest : public mfabric::testing::ScratchDirTest {
 protected:
  OcsEmulatorTest() : ScratchDirTest("ocs_emulator") {}
  OcsEmulatorOptions options() const {
    OcsEmulatorOptions o;
    o.ports = 16;
    o.switching = kEmulatorSwitching;
    o.state_file = (dir_ / "ocs.state").string();
    o.listen = "127.0.0.1:0";
    o.run_for = Time::milliseconds(20000);
    return o;
  }
};

Tl1Acknowledgment acknowledgment(Tl1TestClient& client) {
  const Tl1Message message = client.receive();
  EXPECT_TRUE(std::holds_alternative<Tl1Acknowledgment>(message)) << format_tl1_message(message);
  return std::holds_alternative<Tl1Acknowledgment>(message) ? std::get<Tl1Acknowledgment>(message)
                                                            : Tl1Acknowledgment{};
}

TEST_F(OcsEmulatorTest, APatchCompletesAfterTheSwitchingTime) {
  RunningEmulator emulator(options());
  Tl1TestClient client(emulator.address());
  client.log_in();
  const auto start = Clock::now();
  client.send("ENT-PATCH::3,7:20:;");
  EXPECT_EQ(acknowledgment(client), (Tl1Acknowledgment{"IP", "20"}));
  const Tl1Response done = client.response();
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(done.ctag, "20");
  EXPECT_EQ(done.completion, Tl1Completion::Compld);
  EXPECT_GE(elapsed, std::chrono::milliseconds(50));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2000));

  const Tl1Response patches = client.ask("RTRV-PATCH:::21;");
  EXPECT_EQ(parse_patches(patches), (std::vector<std::pair<int, int>>{{3, 7}}));
  const Tl1Response status = client.ask("RTRV-PORT-STATUS::3:22;");
  EXPECT_EQ(parse_port_status(status), (std::vector<PortStatus>{{3, PortState::InService}}));
}

TEST_F(OcsEmulatorTest, TwoSessionsConflictByErrorCode) {
  RunningEmulator emulator(options());
  Tl1TestClient first(emulator.address());
  Tl1TestClient second(emulator.address());
  first.log_in();
  second.log_in();
  first.send("ENT-PATCH::1,2:5:;");
  EXPECT_EQ(acknowledgment(first).code, "IP");
  // While the first session's mirrors move, port 2 is taken.
  const Tl1Response refused = second.ask("ENT-PATCH::2,3:6:;");
  EXPECT_EQ(refused.completion, Tl1Completion::Deny);
  EXPECT_EQ(refused.error_code, "SAAL");
  EXPECT_EQ(second.ask("DLT-PATCH::1:7:;").error_code, "SBSY");
  EXPECT_EQ(first.response().completion, Tl1Completion::Compld);
  EXPECT_EQ(second.ask("DLT-PATCH::4:8:;").error_code, "SNVS");
  EXPECT_EQ(second.ask("ENT-PATCH::1,99:9:;").error_code, "IIAC");
  EXPECT_EQ(second.ask("OPR-PORT-FAIL::5:10:;").completion, Tl1Completion::Compld);
  // Every logged-in session hears of the failure (an alarm, *C) and of the repair (A).
  const auto alarm = [](Tl1TestClient& client) {
    const Tl1Message message = client.receive();
    EXPECT_TRUE(std::holds_alternative<Tl1AutonomousMessage>(message))
        << format_tl1_message(message);
    return std::holds_alternative<Tl1AutonomousMessage>(message)
               ? std::get<Tl1AutonomousMessage>(message)
               : Tl1AutonomousMessage{};
  };
  const Tl1AutonomousMessage failed = alarm(first);
  EXPECT_EQ(failed.verb, "REPT ALM PORT");
  EXPECT_EQ(failed.alarm_code, "*C");
  EXPECT_EQ(failed.lines, std::vector<std::string>{"5:STATUS=FAILED"});
  EXPECT_EQ(alarm(second), failed);
  EXPECT_EQ(first.ask("ENT-PATCH::5,6:11:;").error_code, "SROF");
  EXPECT_EQ(parse_port_status(first.ask("RTRV-PORT-STATUS::5:12;")),
            (std::vector<PortStatus>{{5, PortState::Failed}}));
  EXPECT_EQ(first.ask("RLS-PORT-FAIL::5:13:;").completion, Tl1Completion::Compld);
  const Tl1AutonomousMessage repaired = alarm(first);
  EXPECT_EQ(repaired.alarm_code, "A");
  EXPECT_EQ(repaired.lines, std::vector<std::string>{"5:STATUS=IS"});
  EXPECT_NE(repaired.atag, failed.atag);
  EXPECT_EQ(first.ask("FROB-PATCH::5:14:;").error_code, "IICM");
}

TEST_F(OcsEmulatorTest, CommandsNeedALogin) {
  RunningEmulator emulator(options());
  Tl1TestClient client(emulator.address());
  EXPECT_EQ(client.ask("ENT-PATCH::1,2:1:;").error_code, "PLNA");
  EXPECT_EQ(client.ask("RTRV-PATCH:::2;").error_code, "PLNA");
  client.log_in();
  EXPECT_EQ(client.ask("RTRV-PATCH:::3;").completion, Tl1Completion::Compld);
  EXPECT_EQ(client.ask("CANC-USER::admin:4;").completion, Tl1Completion::Compld);
  EXPECT_EQ(client.ask("RTRV-PATCH:::5;").error_code, "PLNA");
}

TEST_F(OcsEmulatorTest, FailedLoginsAreRateLimitedPerAddress) {
  RunningEmulator emulator(options());
  {
    Tl1TestClient client(emulator.address());
    for (int k = 0; k < kFreeLoginFailures; ++k)
      EXPECT_EQ(client.ask("ACT-USER::admin:1::guess;").error_code, "PIUI");
  }
  // A new session from the same address does not start over; the right password waits too.
  Tl1TestClient client(emulator.address());
  const Tl1Response locked = client.ask("ACT-USER::admin:2::admin;");
  EXPECT_EQ(locked.error_code, "PIUI");
  EXPECT_NE(locked.comment.find("too many failed logins"), std::string::npos) << locked.comment;
}

TEST_F(OcsEmulatorTest, AnOversizeCommandIsRefusedAndTheSessionGoesOn) {
  RunningEmulator emulator(options());
  Tl1TestClient client(emulator.address());
  client.log_in();
  client.send("RTRV-PATCH::" + std::string(kMaxTl1CommandBytes + 100, '1') + ":1;");
  const Tl1Response refused = client.response();
  EXPECT_EQ(refused.completion, Tl1Completion::Deny);
  EXPECT_EQ(refused.error_code, "IISP");
  EXPECT_EQ(client.ask("RTRV-PATCH:::2;").completion, Tl1Completion::Compld);
  EXPECT_EQ(client.ask("ENT PATCH what;").error_code, "IISP");
}

TEST_F(OcsEmulatorTest, TooManySessionsAreTurnedAway) {
  OcsEmulatorOptions o = options();
  o.max_sessions = 1;
  RunningEmulator emulator(o);
  Tl1TestClient first(emulator.address());
  first.log_in();
  Tl1TestClient second(emulator.address());
  EXPECT_NE(second.response().comment.find("too many sessions"), std::string::npos);
}

TEST_F(OcsEmulatorTest, StopsByItself) {
  OcsEmulatorOptions o = options();
  o.run_for = Time::milliseconds(100);
  OcsEmulator emulator(o);
  const auto start = Clock::now();
  emulator.run();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(2000));
}

TEST_F(OcsEmulatorTest, BadListenAddressesAreOneLineErrors) {
  for (const char* bad : {"localhost", "127.0.0.1:", "127.0.0.1:99999", "no.such.host.invalid:1"}) {
    OcsEmulatorOptions o = options();
    o.listen = bad;
    try {
      OcsEmulator emulator(o);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "--listen") << bad;
    }
  }
}

TEST_F(OcsEmulatorTest, UsersComeFromAFile) {
  OcsEmulatorOptions o = options();
  o.users = read_users_file(write("users", "# operators\nops:s3cret\n\nctl:other:colon\n"));
  EXPECT_EQ(o.users.at("ctl"), "other:colon");
  RunningEmulator emulator(o);
  Tl1TestClient client(emulator.address());
  EXPECT_EQ(client.ask("ACT-USER::admin:1::admin;").error_code, "PIUI");
  client.log_in("ops", "s3cret");
  for (const char* bad : {"ops\n", "ops:a\nops:b\n", ":pw\n", "# none\n", "o ps:pw\n"}) {
    try {
      read_users_file(write("bad-users", bad));
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.source(), (dir_ / "bad-users").string()) << bad;
    }
  }
}

// The TL1 client mfabric drives real switches with (tl1_client.h) works the emulator.
TEST_F(OcsEmulatorTest, TheTl1ClientDrivesIt) {
  RunningEmulator emulator(options());
  Tl1Client client(emulator.address(), {"admin", "admin"});
  client.connect_ports(2, 11);
  client.connect_ports(5, 1);
  EXPECT_EQ(client.patches(), (std::vector<std::pair<int, int>>{{1, 5}, {2, 11}}));
  client.disconnect_port(11);
  EXPECT_EQ(client.patches(), (std::vector<std::pair<int, int>>{{1, 5}}));
  try {
    client.connect_ports(1, 3);
    ADD_FAILURE() << "a busy port was connected";
  } catch (const Tl1Denied& e) {
    EXPECT_EQ(e.code(), "SAAL");
  }
  const std::vector<PortStatus> ports = client.port_status();
  ASSERT_EQ(ports.size(), 16u);
  EXPECT_EQ(ports[0], (PortStatus{1, PortState::InService}));
  client.logout();
  EXPECT_THROW(Tl1Client(emulator.address(), {"admin", "wrong"}).connect(), Tl1Denied);
}

// The group commit: 32 changes written at once on one session are journaled with fewer flushes
// than changes (one per round of commands read), and every one is answered COMPLD and held.
TEST_F(OcsEmulatorTest, PipelinedChangesShareTheJournalsFlushes) {
  OcsEmulatorOptions o = options();
  o.switching = Time::zero();
  auto emulator = std::make_unique<RunningEmulator>(o);
  Tl1TestClient client(emulator->address());
  client.log_in();
  std::string batch;
  for (int k = 0; k < 16; ++k) {
    batch += fmt::format("ENT-PATCH::1,2:{};", 100 + 2 * k);
    batch += fmt::format("DLT-PATCH::1:{};", 101 + 2 * k);
  }
  client.send(batch);
  for (int k = 0; k < 32; ++k) {
    const Tl1Message message = client.receive();
    ASSERT_TRUE(std::holds_alternative<Tl1Response>(message)) << format_tl1_message(message);
    const Tl1Response& response = std::get<Tl1Response>(message);
    EXPECT_EQ(response.ctag, std::to_string(100 + k));
    EXPECT_EQ(response.completion, Tl1Completion::Compld) << format_tl1_message(message);
  }
  const OcsEmulatorStats stats = emulator->stop();
  emulator.reset();  // its journal closed
  EXPECT_EQ(stats.changes, 32u);
  EXPECT_GE(stats.flushes, 1u);
  EXPECT_LT(stats.flushes, stats.changes);
  // Written and flushed: a new journal on the file replays them all.
  OcsState state(16);
  OcsJournal journal(o.state_file, 16, &state);
  EXPECT_EQ(journal.replay().records, 32u);
}

// The real binary: killed with SIGKILL after a patch is answered, restarted on the same state
// file, it still holds the patch.
// The real binary as a child process (ocs_emulator_process.h), on 16 ports.
class OcsEmulatorProcess : public mfabric::testing::OcsEmulatorChild {
 public:
  OcsEmulatorProcess(const std::string& state, const std::string& switching)
      : OcsEmulatorChild(state, switching, 16) {}
};

TEST_F(OcsEmulatorTest, PatchesSurviveAKill) {
  const std::string state = (dir_ / "ocs.state").string();
  {
    OcsEmulatorProcess emulator(state, "10ms");
    Tl1TestClient client(emulator.address());
    client.log_in();
    client.send("ENT-PATCH::4,9:1:;");
    EXPECT_EQ(acknowledgment(client).code, "IP");
    EXPECT_EQ(client.response().completion, Tl1Completion::Compld);
    EXPECT_EQ(client.ask("OPR-PORT-FAIL::2:2:;").completion, Tl1Completion::Compld);
    const int status = emulator.stop(SIGKILL);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  OcsEmulatorProcess emulator(state, "10ms");
  Tl1TestClient client(emulator.address());
  client.log_in();
  EXPECT_EQ(parse_patches(client.ask("RTRV-PATCH:::1;")),
            (std::vector<std::pair<int, int>>{{4, 9}}));
  EXPECT_EQ(parse_port_status(client.ask("RTRV-PORT-STATUS::2:2;")),
            (std::vector<PortStatus>{{2, PortState::Failed}}));
  const int status = emulator.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace mfabric::ocs
