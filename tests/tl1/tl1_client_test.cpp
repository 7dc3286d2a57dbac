#include "tl1/tl1_client.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <atomic>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "test_text.h"
#include "tl1/scripted_tl1_server.h"

namespace mfabric::tl1 {
namespace {

using mfabric::testing::error_text;

using scripted::ScriptedConnection;
using scripted::ScriptedTl1Server;

// Short timeouts: every test ends within about a second, even when the client is wrong.
Tl1ClientOptions quick_options() {
  Tl1ClientOptions o;
  o.connect_timeout = Time::milliseconds(1000);
  o.command_timeout = Time::milliseconds(300);
  o.max_command_time = Time::milliseconds(2000);
  o.max_attempts = 2;
  o.retry_delay = Time::milliseconds(10);
  return o;
}

Tl1Credentials admin() {
  return {"admin", "secret"};
}

// The script of a connection that logs in and then runs `rest`.
ScriptedTl1Server::Script after_login(std::function<void(ScriptedConnection&)> rest) {
  return [rest = std::move(rest)](ScriptedConnection& c) {
    if (!c.complete()) return;
    rest(c);
  };
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Tl1Client, LogsInAndCrossConnectsWithFreshCtags) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    c.complete();
    c.complete();
    c.wait_for_close();
  })});
  {
    Tl1Client client(server.address(), admin(), quick_options());
    EXPECT_FALSE(client.connected());
    client.connect_ports(1, 2);
    EXPECT_TRUE(client.connected());
    client.disconnect_port(1);
  }
  server.join();
  EXPECT_EQ(server.commands(),
            (std::vector<std::string>{"ACT-USER::admin:1::secret;", "ENT-PATCH::1,2:2:;",
                                      "DLT-PATCH::1:3:;", "CANC-USER::admin:4:;"}));
  EXPECT_EQ(server.accepted(), 1);
}

TEST(Tl1Client, QuotesAPasswordThatNeedsIt) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) { c.wait_for_close(); })});
  {
    Tl1Client client(server.address(), {"admin", "pa ss;word"}, quick_options());
    client.connect();
  }
  server.join();
  ASSERT_FALSE(server.commands().empty());
  EXPECT_EQ(server.commands()[0], "ACT-USER::admin:1::\"pa ss;word\";");
}

TEST(Tl1Client, ALoginDeniedIsOneClearErrorAndNotRetried) {
  ScriptedTl1Server server({[](ScriptedConnection& c) {
    if (auto login = c.read_command()) {
      c.send(format_tl1_response(ScriptedConnection::deny(login->ctag, "PICC", "bad password")));
    }
    c.wait_for_close();
  }});
  Tl1Client client(server.address(), admin(), quick_options());
  try {
    client.connect();
    FAIL() << "the login was not denied";
  } catch (const Tl1Denied& e) {
    EXPECT_EQ(e.code(), "PICC");
    EXPECT_EQ(e.verb(), "ACT-USER");
    EXPECT_EQ(std::string(e.what()),
              "OCS " + server.address() + ": login as 'admin': denied (PICC: 'bad password')");
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos);
  }
  EXPECT_EQ(server.accepted(), 1);
}

TEST(Tl1Client, MatchesTheResponseToItsCtagPastOtherMessages) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    const auto command = c.read_command();
    if (!command) return;
    // A late answer to another command, an autonomous alarm, someone else's acknowledgment, a
    // prompt, then the answer.
    c.send(format_tl1_response(ScriptedConnection::response("77", {"9,10"})));
    c.send(format_tl1_autonomous(
        {"OCS-TEST", "26-11-26", "13:44:06", "*C", "5", "REPT ALM EQPT", {"3:STATUS=FAILED"}, ""}));
    c.send(format_tl1_acknowledgment({"IP", "78"}) + "\r\n<");
    c.send(format_tl1_response(ScriptedConnection::response(command->ctag, {"1,2", "3,4"})));
    c.wait_for_close();
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  EXPECT_EQ(client.patches(), (std::vector<std::pair<int, int>>{{1, 2}, {3, 4}}));
  EXPECT_EQ(client.autonomous_messages(), 1);
}

TEST(Tl1Client, AnInProgressAcknowledgmentExtendsTheTimeout) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    const auto command = c.read_command();
    if (!command) return;
    // 2 x 200 ms: longer than the 300 ms command timeout, but each wait is shorter.
    for (int k = 0; k < 2; ++k) {
      c.send(format_tl1_acknowledgment({"IP", command->ctag}));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    c.send(format_tl1_response(ScriptedConnection::response(command->ctag)));
    c.wait_for_close();
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  EXPECT_NO_THROW(client.connect_ports(5, 6));
}

TEST(Tl1Client, AcknowledgmentsExtendTheTimeoutOnlyUpToABound) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    const auto command = c.read_command();
    if (!command) return;
    // Up to 3 s of acknowledgments, never an answer; ends when the client has gone.
    for (int k = 0; k < 30 && c.send(format_tl1_acknowledgment({"IP", command->ctag})); ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    c.wait_for_close();
  })});
  Tl1ClientOptions options = quick_options();
  options.max_command_time = Time::milliseconds(600);
  Tl1Client client(server.address(), admin(), options);
  client.connect();
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_text([&] { client.connect_ports(5, 6); });
  EXPECT_EQ(message, "OCS " + server.address() +
                         ": 'ENT-PATCH::5,6:2:;': no response within 0.3 s (in progress too long)");
  EXPECT_GE(seconds_since(start), 0.55);
  EXPECT_LT(seconds_since(start), 1.5);
}

TEST(Tl1Client, ASilentOcsTimesOutWithinTheBound) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) { c.wait_for_close(); })});
  Tl1Client client(server.address(), admin(), quick_options());
  client.connect();
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_text([&] { client.patches(); });
  EXPECT_EQ(message, "OCS " + server.address() + ": 'RTRV-PATCH:::2:;': no response within 0.3 s");
  EXPECT_GE(seconds_since(start), 0.25);
  EXPECT_LT(seconds_since(start), 1.0);
  // The session is kept: a late answer would be skipped by its CTAG.
  EXPECT_TRUE(client.connected());
}

TEST(Tl1Client, ReconnectsAndRetriesWhenTheConnectionDrops) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) { c.read_command(); }),
                            after_login([](ScriptedConnection& c) {
                              c.complete({"1,2"});
                              c.wait_for_close();
                            })});
  Tl1Client client(server.address(), admin(), quick_options());
  EXPECT_EQ(client.patches(), (std::vector<std::pair<int, int>>{{1, 2}}));
  EXPECT_EQ(server.accepted(), 2);
  const std::vector<std::string> commands = server.commands();
  EXPECT_EQ(commands, (std::vector<std::string>{"ACT-USER::admin:1::secret;", "RTRV-PATCH:::2:;",
                                                "ACT-USER::admin:3::secret;", "RTRV-PATCH:::4:;"}));
}

TEST(Tl1Client, AfterAReconnectAPatchTheFirstTryMadeIsSuccess) {
  // The first connection takes the command and drops before answering; on the second, the OCS
  // says the ports are in use, and lists the patch.
  const auto drop = after_login([](ScriptedConnection& c) { c.read_command(); });
  const auto in_use = [](std::vector<std::string> listed) {
    return after_login([listed](ScriptedConnection& c) {
      if (auto command = c.read_command()) {
        c.send(format_tl1_response(ScriptedConnection::deny(command->ctag, "SNVS", "in use")));
      }
      c.complete(listed);
      c.wait_for_close();
    });
  };
  {
    ScriptedTl1Server server({drop, in_use({"1,2"})});
    Tl1Client client(server.address(), admin(), quick_options());
    EXPECT_NO_THROW(client.connect_ports(1, 2));
  }
  {
    ScriptedTl1Server server({drop, in_use({"1,3"})});
    Tl1Client client(server.address(), admin(), quick_options());
    EXPECT_THROW(client.connect_ports(1, 2), Tl1Denied);
  }
}

TEST(Tl1Client, GivesUpAfterTheConnectionBrokeMaxAttemptsTimes) {
  const auto drop = after_login([](ScriptedConnection& c) { c.read_command(); });
  ScriptedTl1Server server({drop, drop});
  Tl1Client client(server.address(), admin(), quick_options());
  const std::string message = error_text([&] { client.connect_ports(1, 2); });
  EXPECT_EQ(message, "OCS " + server.address() +
                         ": 'ENT-PATCH::1,2': the connection broke 2 times (last: receive: the "
                         "connection was closed by the peer)");
}

TEST(Tl1Client, ANobodyListeningAddressFailsAfterItsAttempts) {
  // A port that was free a moment ago: connecting is refused.
  int port = 0;
  {
    FileDescriptor probe(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    ASSERT_EQ(::bind(probe.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&a), &length), 0);
    port = ntohs(a.sin_port);
  }
  const std::string address = "127.0.0.1:" + std::to_string(port);
  Tl1Client client(address, admin(), quick_options());
  EXPECT_EQ(error_text([&] { client.connect(); }),
            "OCS " + address +
                ": could not connect and log in (2 attempts): connect: Connection refused");
}

TEST(Tl1Client, AConnectionThatDoesNotOpenTimesOut) {
  // A listener that never accepts, its queue filled: Linux drops further SYNs, so a connect
  // stays in progress.
  FileDescriptor listener(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof a;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener.get(), 0), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &length), 0);
  std::vector<FileDescriptor> queued;
  for (int k = 0; k < 3; ++k) {
    queued.emplace_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    ::connect(queued.back().get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  Tl1ClientOptions options = quick_options();
  options.connect_timeout = Time::milliseconds(200);
  options.max_attempts = 1;
  Tl1Client client(address, admin(), options);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_text([&] { client.connect(); });
  if (message.find("Connection refused") != std::string::npos) {
    GTEST_SKIP() << "this kernel refuses instead of dropping: " << message;
  }
  EXPECT_EQ(message, "OCS " + address +
                         ": could not connect and log in (1 attempt): connect: no connection "
                         "within 0.2 s");
  EXPECT_GE(seconds_since(start), 0.15);
  EXPECT_LT(seconds_since(start), 1.0);
}

TEST(Tl1Client, ADenyNamesTheCommandAndItsCode) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    if (auto command = c.read_command()) {
      c.send(format_tl1_response(ScriptedConnection::deny(command->ctag, "IIAC", "no port 99")));
    }
    c.wait_for_close();
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  try {
    client.connect_ports(99, 2);
    FAIL() << "not denied";
  } catch (const Tl1Denied& e) {
    EXPECT_EQ(e.code(), "IIAC");
    EXPECT_EQ(std::string(e.what()),
              "OCS " + server.address() + ": 'ENT-PATCH::99,2:2:;': denied (IIAC: 'no port 99')");
  }
  EXPECT_EQ(server.accepted(), 1);
}

// Pipelined: three commands at most two ahead; the server sees the first two before it answers
// either, answers them in reverse order (the second denied), then the third; every answer reaches
// its command, a DENY included.
TEST(Tl1Client, PipelinedCommandsAreMatchedToTheirAnswersInAnyOrder) {
  std::vector<std::string> seen_before_answering;
  ScriptedTl1Server server({after_login([&](ScriptedConnection& c) {
    auto first = c.read_command();
    auto second = c.read_command();
    if (!first || !second) return;
    seen_before_answering = {first->aid, second->aid};
    c.send(format_tl1_response(ScriptedConnection::deny(second->ctag, "SAAL", "busy")));
    c.send(format_tl1_response(ScriptedConnection::response(first->ctag)));
    if (auto third = c.read_command()) {
      c.send(format_tl1_response(ScriptedConnection::response(third->ctag)));
    }
    c.wait_for_close();
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  std::vector<std::pair<std::size_t, Tl1Completion>> answers;
  client.execute_pipelined({{"ENT-PATCH", "", "1,2", "", "", {}},
                            {"ENT-PATCH", "", "3,4", "", "", {}},
                            {"DLT-PATCH", "", "5", "", "", {}}},
                           2, [&](std::size_t k, const Tl1Response& response) {
                             answers.push_back({k, response.completion});
                           });
  EXPECT_EQ(seen_before_answering, (std::vector<std::string>{"1,2", "3,4"}));
  EXPECT_EQ(answers,
            (std::vector<std::pair<std::size_t, Tl1Completion>>{
                {1, Tl1Completion::Deny}, {0, Tl1Completion::Compld}, {2, Tl1Completion::Compld}}));
}

// A connection that breaks in the middle of a pipelined batch: one error naming the OCS, no
// resend (the caller reads the OCS back), the answers before it delivered.
TEST(Tl1Client, APipelinedBatchThatLosesItsConnectionIsOneErrorWithoutResending) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
                              auto first = c.read_command();
                              if (first) {
                                c.send(
                                    format_tl1_response(ScriptedConnection::response(first->ctag)));
                              }
                              c.read_command();  // then closes
                            }),
                            after_login([](ScriptedConnection& c) { c.wait_for_close(); })});
  Tl1Client client(server.address(), admin(), quick_options());
  std::vector<std::size_t> answered;
  try {
    client.execute_pipelined(
        {{"DLT-PATCH", "", "1", "", "", {}}, {"DLT-PATCH", "", "2", "", "", {}}}, 8,
        [&](std::size_t k, const Tl1Response&) { answered.push_back(k); });
    FAIL() << "a broken connection went unnoticed";
  } catch (const Tl1Denied&) {
    FAIL() << "not a denial";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OCS " + server.address() + ": 2 pipelined commands"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(answered, (std::vector<std::size_t>{0}));
  EXPECT_EQ(server.accepted(), 1);
}

// Waiting for alarms: none within the wait is nullopt; an alarm is returned whole; a connection
// that closes is one error naming the OCS.
TEST(Tl1Client, AwaitsAutonomousMessagesAndNamesALostConnection) {
  std::atomic<bool> send_alarm{false};
  ScriptedTl1Server server({after_login([&](ScriptedConnection& c) {
    for (int k = 0; k < 200 && !send_alarm; ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Tl1AutonomousMessage alarm;
    alarm.sid = "OCS-TEST";
    alarm.date = "26-11-26";
    alarm.time = "16:00:00";
    alarm.alarm_code = "*C";
    alarm.atag = "7";
    alarm.verb = "REPT ALM PORT";
    alarm.lines = {"3:STATUS=FAILED"};
    c.send(format_tl1_autonomous(alarm));
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  EXPECT_FALSE(client.await_autonomous(Time::milliseconds(50)).has_value());
  send_alarm = true;
  const auto alarm = client.await_autonomous(Time::milliseconds(2000));
  ASSERT_TRUE(alarm.has_value());
  EXPECT_EQ(alarm->verb, "REPT ALM PORT");
  EXPECT_EQ(alarm->lines, std::vector<std::string>{"3:STATUS=FAILED"});
  try {
    client.await_autonomous(Time::milliseconds(2000));
    FAIL() << "a closed connection went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("OCS " + server.address() + ": waiting for alarms"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(client.connected());
}

TEST(Tl1Client, GarbageOrAnOversizedAnswerIsAClearErrorAndDropsTheConnection) {
  const auto answer_with = [](std::string bytes) {
    return after_login([bytes](ScriptedConnection& c) {
      if (c.read_command()) c.send(bytes);
      c.wait_for_close();
    });
  };
  {
    ScriptedTl1Server server({answer_with("\x01\x02garbage\r\n")});
    Tl1Client client(server.address(), admin(), quick_options());
    client.connect();
    EXPECT_EQ(error_text([&] { client.patches(); }),
              "OCS " + server.address() +
                  ": 'RTRV-PATCH:::2:;': a malformed answer (message: expected a response, an "
                  "acknowledgment or an autonomous message, got '\\x01' between messages)");
    EXPECT_FALSE(client.connected());
  }
  {
    std::string huge = "\r\n\n   OCS 26-11-26 13:44:05\r\nM  2 COMPLD\r\n";
    while (huge.size() <= kMaxTl1ResponseBytes)
      huge += "   \"" + std::string(1000, 'x') + "\"\r\n";
    ScriptedTl1Server server({answer_with(huge)});
    Tl1Client client(server.address(), admin(), quick_options());
    client.connect();
    EXPECT_EQ(error_text([&] { client.patches(); }),
              "OCS " + server.address() +
                  ": 'RTRV-PATCH:::2:;': a malformed answer (message: expected messages of at "
                  "most 1048576 bytes)");
    EXPECT_FALSE(client.connected());
  }
  {
    ScriptedTl1Server server(
        {answer_with(format_tl1_response(ScriptedConnection::response("2", {"1,2", "banana"})))});
    Tl1Client client(server.address(), admin(), quick_options());
    EXPECT_EQ(error_text([&] { client.patches(); }),
              "OCS " + server.address() +
                  ": RTRV-PATCH answered an unreadable line: patch 2: expected 'A,B': two "
                  "different ports of 1 to 1048576, got 'banana'");
  }
}

TEST(Tl1Client, APartialCompletionOfACrossConnectIsAnError) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    if (auto command = c.read_command()) {
      Tl1Response partial = ScriptedConnection::response(command->ctag, {}, Tl1Completion::Prtl);
      partial.comment = "one side failed";
      c.send(format_tl1_response(partial));
    }
    c.wait_for_close();
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  EXPECT_EQ(
      error_text([&] { client.connect_ports(1, 2); }),
      "OCS " + server.address() + ": ENT-PATCH answered PRTL (expected COMPLD): 'one side failed'");
}

TEST(Tl1Client, GathersAContinuedResponseAndReadsPortStatus) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
    if (auto command = c.read_command()) {
      Tl1Response first =
          ScriptedConnection::response(command->ctag, {"1:STATUS=IS"}, Tl1Completion::Rtrv);
      first.continued = true;
      c.send(format_tl1_response(first));
      c.send(format_tl1_response(
          ScriptedConnection::response(command->ctag, {"2:STATUS=OOS", "3:STATUS=FAILED"})));
    }
    c.wait_for_close();
  })});
  Tl1Client client(server.address(), admin(), quick_options());
  EXPECT_EQ(client.port_status(),
            (std::vector<PortStatus>{
                {1, PortState::InService}, {2, PortState::OutOfService}, {3, PortState::Failed}}));
  EXPECT_EQ(server.commands().back(), "RTRV-PORT-STATUS::ALL:2:;");
}

TEST(Tl1Client, LogoutWaitsForItsAnswerAndTheNextCommandLogsInAgain) {
  ScriptedTl1Server server({after_login([](ScriptedConnection& c) {
                              c.complete();
                              c.wait_for_close();
                            }),
                            after_login([](ScriptedConnection& c) {
                              c.complete({"4,5"});
                              c.wait_for_close();
                            })});
  Tl1Client client(server.address(), admin(), quick_options());
  client.connect();
  client.logout();
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.patches(), (std::vector<std::pair<int, int>>{{4, 5}}));
  EXPECT_EQ(server.commands()[1], "CANC-USER::admin:2:;");
}

TEST(Tl1Client, RefusesABadAddressOrCredentialsAtOnce) {
  EXPECT_EQ(error_text([] { Tl1Client("ocs-1", admin()); }),
            "OCS ocs-1: address: expected host:port (or [IPv6]:port) with a port of 1 to 65535, "
            "got 'ocs-1'");
  EXPECT_EQ(error_text([] { Tl1Client("ocs-1:70000", admin()); }).substr(0, 23),
            "OCS ocs-1:70000: addres");
  EXPECT_EQ(error_text([] {
              Tl1Client("ocs-1:3082", {"ad min", "x"});
            }),
            "OCS ocs-1:3082: user: expected letters, digits, '-', '_', '.', ',' or '&' (e.g. 1,2), "
            "got 'ad min'");
  EXPECT_EQ(error_text([] {
              Tl1Client("ocs-1:3082", {"admin", "a\"b"});
            }),
            "OCS ocs-1:3082: password: expected printable ASCII without '\"'");
  EXPECT_EQ(parse_host_port("[::1]:3082").host, "::1");
  EXPECT_EQ(parse_host_port("ocs.example:3082").port, 3082);
}

}  // namespace
}  // namespace mfabric::tl1
