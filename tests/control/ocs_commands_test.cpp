#include "control/ocs_commands.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"

namespace mfabric::control {
namespace {

using Action = CrossConnect::Action;

TEST(OcsCommands, PortsFollowTheCablingOrder) {
  // Region at port 48, 8 NICs, alpha 6: server 2's OCS NIC 5 (its 4th OCS NIC, k = 3) is
  // port 48 + 2 * 6 + 3 = 63.
  const RegionPorts region{.first_port = 48, .servers = 8, .nics = {.nics = 8, .alpha = 6}};
  EXPECT_EQ(region.port(2, 5), 63);
  EXPECT_EQ(region.port(0, 2), 48);
  EXPECT_EQ(region.ports(), 48);
  const OcsConfiguration config = configuration_of({{0, 2, 2, 5}}, region, 96);
  EXPECT_EQ(config.peer(48), 63);
  EXPECT_EQ(config.peer(63), 48);
  EXPECT_EQ(config.peer(49), -1);
}

TEST(OcsCommands, ConfigurationErrors) {
  const RegionPorts region{.first_port = 0, .servers = 2, .nics = {.nics = 4, .alpha = 2}};
  EXPECT_THROW(configuration_of({{0, 1, 1, 2}}, region, 4), Error);  // NIC 1 is an EPS NIC
  EXPECT_THROW(configuration_of({{0, 2, 2, 2}}, region, 4), Error);  // server 2 not in region
  EXPECT_THROW(configuration_of({{0, 2, 1, 2}, {0, 2, 1, 3}}, region, 4), Error);  // NIC twice
  EXPECT_THROW(configuration_of({}, region, 3), Error);  // region does not fit
  OcsConfiguration c(4);
  EXPECT_THROW(c.connect(1, 1), Error);
  EXPECT_THROW(c.connect(0, 4), Error);
  EXPECT_THROW(OcsConfiguration(-1), Error);
}

TEST(OcsCommands, FromEmptyOnlyConnects) {
  OcsConfiguration empty(6), target(6);
  target.connect(4, 1);
  target.connect(0, 5);
  const auto diff = reconfiguration(empty, target);
  EXPECT_EQ(diff, (std::vector<CrossConnect>{{Action::Connect, 0, 5}, {Action::Connect, 1, 4}}));
  EXPECT_EQ(tl1_commands(diff),
            (std::vector<std::string>{"ENT-PATCH::1,6:1:;", "ENT-PATCH::2,5:2:;"}));
}

TEST(OcsCommands, DiffTouchesOnlyChangedPortsDisconnectsFirst) {
  OcsConfiguration from(8), to(8);
  from.connect(0, 1);  // kept
  from.connect(2, 3);  // replaced by 2-4
  from.connect(5, 6);  // removed
  to.connect(0, 1);
  to.connect(2, 4);
  to.connect(3, 7);  // new
  const auto diff = reconfiguration(from, to);
  EXPECT_EQ(diff, (std::vector<CrossConnect>{{Action::Disconnect, 2, 3},
                                             {Action::Disconnect, 5, 6},
                                             {Action::Connect, 2, 4},
                                             {Action::Connect, 3, 7}}));
  EXPECT_EQ(tl1_commands(diff),
            (std::vector<std::string>{"DLT-PATCH::3:1:;", "DLT-PATCH::6:2:;", "ENT-PATCH::3,5:3:;",
                                      "ENT-PATCH::4,8:4:;"}));
  EXPECT_TRUE(reconfiguration(to, to).empty());
}

TEST(OcsCommands, RandomDiffsReachTheTarget) {
  Rng rng(3);
  for (int round = 0; round < 100; ++round) {
    const int ports = 2 + static_cast<int>(rng.below(40));
    const auto random_config = [&] {
      OcsConfiguration c(ports);
      for (int k = 0; k < ports; ++k) {
        const int a = static_cast<int>(rng.below(static_cast<std::uint64_t>(ports)));
        const int b = static_cast<int>(rng.below(static_cast<std::uint64_t>(ports)));
        if (a != b && c.peer(a) < 0 && c.peer(b) < 0) c.connect(a, b);
      }
      return c;
    };
    const OcsConfiguration from = random_config();
    const OcsConfiguration to = random_config();
    const auto diff = reconfiguration(from, to);
    // Apply: disconnects must all precede connects, and every command touches a changed port.
    std::vector<int> peer(static_cast<std::size_t>(ports));
    for (int p = 0; p < ports; ++p)
      peer[static_cast<std::size_t>(p)] = from.peer(p);
    bool connecting = false;
    for (const CrossConnect& c : diff) {
      EXPECT_NE(from.peer(c.a), to.peer(c.a));
      EXPECT_LT(c.a, c.b);
      if (c.action == Action::Connect) {
        connecting = true;
        EXPECT_EQ(peer[static_cast<std::size_t>(c.a)], -1);
        EXPECT_EQ(peer[static_cast<std::size_t>(c.b)], -1);
        peer[static_cast<std::size_t>(c.a)] = c.b;
        peer[static_cast<std::size_t>(c.b)] = c.a;
      } else {
        EXPECT_FALSE(connecting) << "disconnect after a connect";
        EXPECT_EQ(peer[static_cast<std::size_t>(c.a)], c.b);
        peer[static_cast<std::size_t>(c.a)] = -1;
        peer[static_cast<std::size_t>(c.b)] = -1;
      }
    }
    for (int p = 0; p < ports; ++p)
      EXPECT_EQ(peer[static_cast<std::size_t>(p)], to.peer(p)) << "port " << p;
  }
}

TEST(OcsCommands, TemplatesAndTheirErrors) {
  const std::vector<CrossConnect> diff{{Action::Disconnect, 0, 1}, {Action::Connect, 0, 2}};
  const Tl1Syntax custom{.connect = "CONNECT {a} <-> {b} {{tag {ctag}}}",
                         .disconnect = "DISCONNECT {a} {b}",
                         .port_base = 0,
                         .first_ctag = 100};
  EXPECT_EQ(tl1_commands(diff, custom),
            (std::vector<std::string>{"DISCONNECT 0 1", "CONNECT 0 <-> 2 {tag 101}"}));
  try {
    tl1_commands(diff, Tl1Syntax{.connect = "ENT {port}"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "tl1.connect");
    EXPECT_NE(std::string(e.what()).find("'{port}'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tl1_commands({}, Tl1Syntax{.disconnect = "DLT {a"}), Error);
  EXPECT_THROW(tl1_commands({}, Tl1Syntax{.disconnect = "DLT a}"}), Error);
  EXPECT_THROW(reconfiguration(OcsConfiguration(2), OcsConfiguration(3)), Error);
}

}  // namespace
}  // namespace mfabric::control
