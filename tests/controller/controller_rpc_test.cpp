// The region controller's gRPC API on loopback: in process (authentication, the calls, status
// codes) and as the `mfabric controller` daemon.
#ifdef MFABRIC_HAVE_GRPC

#include "controller/controller_rpc.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

#include "controller/controller.grpc.pb.h"
#include "controller/controller_rpc_client.h"
#include "core/error.h"
#include "ocs/ocs_emulator_process.h"
#include "ocs/tl1_test_client.h"
#include "scratch_dir.h"

namespace mfabric::controller {
namespace {

using tl1::parse_patches;
using tl1::Tl1Client;
using tl1::Tl1Credentials;

namespace api = mfabric::controller;
using mfabric::testing::ListeningChild;
using mfabric::testing::OcsEmulatorChild;

constexpr const char* kToken = "0123456789abcdef-test-token";
constexpr const char* kRegions =
    "regions:\n"
    "  - {name: rack0, servers: 4, nics: 4, alpha: 2, first_port: 1}\n";

api::DemandRequest two_pairs() {
  api::DemandRequest request;
  request.set_region("rack0");
  request.set_layer(2);
  request.set_micro_batch(1);
  request.set_servers(4);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      request.add_bytes((i / 2 == j / 2 && i != j) ? 1'000'000'000 : 0);
    }
  }
  return request;
}

// A context with a 10 s deadline (nothing waits longer) and, when given, the token.
std::unique_ptr<grpc::ClientContext> context(const std::string& token = "") {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) c->AddMetadata("authorization", "Bearer " + token);
  return c;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ControllerRpcTest : public mfabric::testing::ScratchDirTest {
 protected:
  ControllerRpcTest() : ScratchDirTest("controller_rpc") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    emulator_ = std::make_unique<OcsEmulatorChild>((dir_ / "ocs.state").string(), "2ms", 16);
    service_ = std::make_unique<RegionControllerService>(
        parse_regions(kRegions, "regions"),
        std::make_unique<Tl1Client>(emulator_->address(), Tl1Credentials{"admin", "admin"}));
    service_->start();
  }
  static std::unique_ptr<api::RegionController::Stub> stub(
      const std::string& address,
      std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials()) {
    return api::RegionController::NewStub(grpc::CreateChannel(address, credentials));
  }

  std::unique_ptr<OcsEmulatorChild> emulator_;
  std::unique_ptr<RegionControllerService> service_;
};

TEST_F(ControllerRpcTest, CallsNeedTheTokenAndAnswerWithTheCircuits) {
  ControllerRpcServer server(*service_, "127.0.0.1:0", ControllerAuth{kToken, "", "", ""});
  auto client = stub(server.address());
  api::Circuits circuits;
  EXPECT_EQ(client->SubmitDemand(context().get(), two_pairs(), &circuits).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(
      client->SubmitDemand(context("0123456789abcdef-test-tokem").get(), two_pairs(), &circuits)
          .error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
  api::HealthReply health;
  EXPECT_EQ(client->Health(context().get(), {}, &health).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  const grpc::Status submitted =
      client->SubmitDemand(context(kToken).get(), two_pairs(), &circuits);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  EXPECT_EQ(circuits.generation(), 2);
  EXPECT_EQ(circuits.layer(), 2);
  ASSERT_EQ(circuits.circuits_size(), 4);
  for (const api::Circuit& c : circuits.circuits()) {
    EXPECT_EQ(c.server() / 2, c.peer_server() / 2);
    EXPECT_EQ(c.port(), c.server() * 2 + (c.nic() - 2) + 1);
  }

  api::CircuitsRequest which;
  which.set_region("rack0");
  api::Circuits in_force;
  ASSERT_TRUE(client->GetCircuits(context(kToken).get(), which, &in_force).ok());
  EXPECT_EQ(in_force.SerializeAsString(), circuits.SerializeAsString());
  ASSERT_TRUE(client->Health(context(kToken).get(), {}, &health).ok());
  EXPECT_TRUE(health.ocs_reachable());
  EXPECT_EQ(health.commands(), 4);
  EXPECT_EQ(health.regions_size(), 1);

  api::DemandRequest bad = two_pairs();
  bad.add_bytes(1);
  EXPECT_EQ(client->SubmitDemand(context(kToken).get(), bad, &circuits).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  which.set_region("rack7");
  EXPECT_EQ(client->GetCircuits(context(kToken).get(), which, &in_force).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// Malformed calls: demands with a negative or overflowing entry, a negative layer, a region too
// big, and a connection that sends garbage instead of HTTP/2; each is refused and the service
// goes on answering.
TEST_F(ControllerRpcTest, MalformedCallsAreRefusedAndTheServiceGoesOn) {
  ControllerRpcServer server(*service_, "127.0.0.1:0", ControllerAuth{kToken, "", "", ""});
  auto client = stub(server.address());
  api::Circuits circuits;
  const auto code = [&](const api::DemandRequest& request) {
    return client->SubmitDemand(context(kToken).get(), request, &circuits).error_code();
  };
  api::DemandRequest negative = two_pairs();
  negative.set_bytes(1, -5);
  EXPECT_EQ(code(negative), grpc::StatusCode::INVALID_ARGUMENT);
  api::DemandRequest overflowing = two_pairs();
  overflowing.set_bytes(1, std::numeric_limits<std::int64_t>::max());
  overflowing.set_bytes(2, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(code(overflowing), grpc::StatusCode::INVALID_ARGUMENT);
  api::DemandRequest layer = two_pairs();
  layer.set_layer(-1);
  EXPECT_EQ(code(layer), grpc::StatusCode::INVALID_ARGUMENT);
  api::DemandRequest huge;
  huge.set_region("rack0");
  huge.set_servers(1 << 30);
  EXPECT_EQ(code(huge), grpc::StatusCode::INVALID_ARGUMENT);
  {
    mfabric::testing::Tl1TestClient garbage(server.address());
    garbage.send(std::string(65536, '\x17') + "GET / HTTP/1.1\r\n\r\n");
  }
  const grpc::Status fine = client->SubmitDemand(context(kToken).get(), two_pairs(), &circuits);
  EXPECT_TRUE(fine.ok()) << fine.error_message();
  EXPECT_EQ(circuits.circuits_size(), 4);
}

TEST_F(ControllerRpcTest, TlsNeedsAClientCertificateTheCaSigned) {
  // A CA, a server certificate for 127.0.0.1 and a client certificate, all made here.
  const std::string d = dir_.string();
  const std::string make_certificates =
      "cd '" + d +
      "' && exec >openssl.log 2>&1 && "
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key "
      "-out ca.pem -days 1 -subj /CN=test-ca && "
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext && "
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key "
      "-out server.csr -subj /CN=localhost && "
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
      "-extfile server.ext -out server.pem && "
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key "
      "-out client.csr -subj /CN=trainer && "
      "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
      "-out client.pem";
  ASSERT_EQ(std::system(make_certificates.c_str()), 0) << file_text(dir_ / "openssl.log");
  ControllerAuth auth;
  auth.tls_cert = file_text(dir_ / "server.pem");
  auth.tls_key = file_text(dir_ / "server.key");
  auth.tls_ca = file_text(dir_ / "ca.pem");
  ControllerRpcServer server(*service_, "127.0.0.1:0", auth);

  grpc::SslCredentialsOptions with_certificate;
  with_certificate.pem_root_certs = auth.tls_ca;
  with_certificate.pem_private_key = file_text(dir_ / "client.key");
  with_certificate.pem_cert_chain = file_text(dir_ / "client.pem");
  api::HealthReply health;
  const grpc::Status answered = stub(server.address(), grpc::SslCredentials(with_certificate))
                                    ->Health(context().get(), {}, &health);
  EXPECT_TRUE(answered.ok()) << answered.error_message();
  // ControllerClient over TLS, with the client's certificate.
  ControllerAuth client_auth;
  client_auth.tls_cert = file_text(dir_ / "client.pem");
  client_auth.tls_key = file_text(dir_ / "client.key");
  client_auth.tls_ca = auth.tls_ca;
  ControllerClient tls_client(server.address(), client_auth, Time::milliseconds(10000));
  EXPECT_EQ(tls_client.circuits("rack0").region, "rack0");

  grpc::SslCredentialsOptions without_certificate;
  without_certificate.pem_root_certs = auth.tls_ca;
  EXPECT_FALSE(stub(server.address(), grpc::SslCredentials(without_certificate))
                   ->Health(context().get(), {}, &health)
                   .ok());
  EXPECT_FALSE(stub(server.address())->Health(context().get(), {}, &health).ok());
}

TEST_F(ControllerRpcTest, AServerWithoutAuthenticationIsRefused) {
  try {
    ControllerRpcServer server(*service_, "127.0.0.1:0", {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "auth");
  }
  EXPECT_THROW(ControllerRpcServer(*service_, "127.0.0.1:0", ControllerAuth{"", "x", "", ""}),
               Error);
  EXPECT_TRUE(same_secret("abc", "abc"));
  EXPECT_FALSE(same_secret("abc", "abd"));
  EXPECT_FALSE(same_secret("abc", "abcd"));
  EXPECT_FALSE(same_secret("", "a"));
}

TEST_F(ControllerRpcTest, TheDaemonServesUntilStopped) {
  const std::string token_file = write("token", std::string(kToken) + "\n");
  const std::string regions_file = write("regions.yaml", kRegions);
  // The in-process controller's session is not needed: the daemon has its own.
  service_.reset();
  ListeningChild daemon({"controller", "--ocs", emulator_->address(), "--regions", regions_file,
                         "--listen", "127.0.0.1:0", "--token-file", token_file, "--max-time", "20s",
                         "-q"});
  auto client = stub(daemon.address());
  api::Circuits circuits;
  const grpc::Status submitted =
      client->SubmitDemand(context(kToken).get(), two_pairs(), &circuits);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  EXPECT_EQ(circuits.circuits_size(), 4);
  api::HealthReply health;
  EXPECT_EQ(client->Health(context().get(), {}, &health).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // With a client still connected, gRPC waits out the daemon's 2 s grace.
  const auto stopping = std::chrono::steady_clock::now();
  const int status = daemon.stop(SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(5));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The daemon killed with SIGKILL in the middle of a reconfiguration (the emulator's mirrors take
// 1.5 s each) and started again: it reports exactly what the OCS holds, and the next submit
// completes the plan.
TEST_F(ControllerRpcTest, ADaemonKilledMidReconfigurationReportsOnlyWhatTheOcsHolds) {
  service_.reset();
  emulator_.reset();
  const std::string state = (dir_ / "slow.state").string();
  OcsEmulatorChild emulator(state, "1500ms", 16);
  const std::vector<std::string> arguments{"controller",
                                           "--ocs",
                                           emulator.address(),
                                           "--regions",
                                           write("regions.yaml", kRegions),
                                           "--token-file",
                                           write("token", kToken),
                                           "--max-time",
                                           "20s",
                                           "--tl1-window",
                                           "1",
                                           "-q"};
  auto daemon = std::make_unique<ListeningChild>(arguments);
  auto submitted = std::async(std::launch::async, [&, address = daemon->address()] {
    api::Circuits circuits;
    return stub(address)->SubmitDemand(context(kToken).get(), two_pairs(), &circuits);
  });
  // Four connects of 1.5 s each, one at a time (--tl1-window 1): kill during the second.
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  daemon->stop(SIGKILL);
  ASSERT_EQ(submitted.wait_for(std::chrono::seconds(15)), std::future_status::ready);
  EXPECT_FALSE(submitted.get().ok());
  // The patch under way when the daemon died settles by itself (the OCS accepted it).
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  daemon = std::make_unique<ListeningChild>(arguments);
  auto client = stub(daemon->address());
  api::CircuitsRequest which;
  which.set_region("rack0");
  api::Circuits in_force;
  const grpc::Status read = client->GetCircuits(context(kToken).get(), which, &in_force);
  ASSERT_TRUE(read.ok()) << read.error_message();
  std::set<std::pair<int, int>> reported;
  for (const api::Circuit& c : in_force.circuits())
    reported.insert({c.port(), c.peer_port()});
  mfabric::testing::Tl1TestClient ocs(emulator.address());
  ocs.log_in();
  const auto held = parse_patches(ocs.ask("RTRV-PATCH:::2;"));
  const std::set<std::pair<int, int>> held_set(held.begin(), held.end());
  EXPECT_EQ(reported, held_set);
  EXPECT_GE(held.size(), 1u);
  EXPECT_LT(held.size(), 4u);
  EXPECT_EQ(in_force.layer(), -1);
}

// What moe-bench --controller uses: ControllerClient with the token.
TEST_F(ControllerRpcTest, ClientSubmitsDemandAndReadsTheCircuitsInForce) {
  ControllerRpcServer server(*service_, "127.0.0.1:0", ControllerAuth{kToken, "", "", ""});
  ControllerClient client(server.address(), ControllerAuth{kToken, "", "", ""},
                          Time::milliseconds(10000));
  control::ServerDemand demand(4);
  demand.add(0, 1, 1'000'000'000);
  demand.add(2, 3, 1'000'000'000);
  const RegionCircuits submitted = client.submit_demand("rack0", 3, 0, demand);
  EXPECT_EQ(submitted.layer, 3);
  EXPECT_FALSE(submitted.circuits.empty());
  for (const control::PortCircuit& c : submitted.circuits) {
    EXPECT_TRUE((c.server == 0 && c.peer_server == 1) || (c.server == 2 && c.peer_server == 3));
  }
  const RegionCircuits in_force = client.circuits("rack0");
  EXPECT_EQ(in_force.generation, submitted.generation);
  EXPECT_EQ(in_force.circuits, submitted.circuits);

  // A wrong token and an unknown region: one line naming the controller and the code.
  ControllerClient stranger(server.address(),
                            ControllerAuth{"0123456789abcdef-test-tokem", "", "", ""},
                            Time::milliseconds(10000));
  try {
    stranger.circuits("rack0");
    ADD_FAILURE() << "a wrong token was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("controller " + server.address() +
                                         ": GetCircuits: UNAUTHENTICATED"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(client.circuits("rack9"), Error);
  EXPECT_THROW(ControllerClient(server.address(), ControllerAuth{}), Error);
}

// The OCS gone for good: the controller answers UNAVAILABLE naming the OCS; the client retries
// within its deadline and then gives that answer, not a bare DEADLINE_EXCEEDED.
TEST_F(ControllerRpcTest, AnOcsThatStaysDownIsNamedInTheClientsError) {
  ControllerRpcServer server(*service_, "127.0.0.1:0", ControllerAuth{kToken, "", "", ""});
  ControllerClient client(server.address(), ControllerAuth{kToken, "", "", ""},
                          Time::milliseconds(1500));
  const std::string ocs = emulator_->address();
  emulator_->stop(SIGKILL);
  control::ServerDemand demand(4);
  demand.add(0, 1, 1'000'000'000);
  const auto start = std::chrono::steady_clock::now();
  try {
    client.submit_demand("rack0", 0, 0, demand);
    ADD_FAILURE() << "a submit succeeded without an OCS";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SubmitDemand: UNAVAILABLE"), std::string::npos) << what;
    EXPECT_NE(what.find("OCS " + ocs), std::string::npos) << what;
    EXPECT_NE(what.find("of retries"), std::string::npos) << what;
    EXPECT_EQ(what.find("DEADLINE_EXCEEDED"), std::string::npos) << what;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// A controller that is not there: retried within the deadline, then one UNAVAILABLE error.
TEST(ControllerClient, GivesUpOnAnAbsentControllerAtItsDeadline) {
  ControllerClient client("127.0.0.1:1", ControllerAuth{kToken, "", "", ""},
                          Time::milliseconds(1000));
  const auto start = std::chrono::steady_clock::now();
  try {
    client.circuits("rack0");
    ADD_FAILURE() << "no controller answered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("UNAVAILABLE"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace mfabric::controller

#endif  // MFABRIC_HAVE_GRPC
