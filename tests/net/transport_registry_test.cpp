// The packet transports by name (net/packet/transports.h): the built-in ones and their traits,
// the registry's errors, and a toy transport registered here the way a new one would be (one unit,
// one registry line), run on a tiny fabric with nothing else knowing it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/packet/transports.h"
#include "net/packet/transports/dctcp.h"
#include "net/packet/transports/irn.h"
#include "net/packet/transports/roce_dcqcn.h"
#include "net/packet_backend.h"
#include "net_test_util.h"
#include "toy_transport.h"

namespace mfabric::net {
namespace transport_registry_test {

using testing::cluster;
using testing::Recorder;
using testing::run_to_idle;
using testing::ToySettings;
using testing::transfer;

TEST(TransportRegistry, NamesTheBuiltInTransportsWithTheirTraits) {
  const std::vector<std::string> names = packet_transports().names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"dctcp", "roce-dcqcn", "irn"}));
  for (const std::string name : {"dctcp", "roce-dcqcn", "irn"}) {
    EXPECT_FALSE(packet_transports().at(name).description.empty()) << name;
    EXPECT_EQ(TransportChoice(name).name(), name);
  }
  // The default: DCTCP, RFC 8257's variant, no PFC.
  const PacketBackendOptions o;
  EXPECT_EQ(o.transport.name(), "dctcp");
  EXPECT_NE(o.transport.get<DctcpSettings>(), nullptr);
  EXPECT_EQ(o.transport.get<IrnSettings>(), nullptr);
  EXPECT_STREQ(o.transport->congestion_control_variant(), "rfc8257");
  EXPECT_FALSE(o.pfc_enabled());
  // PFC is on by default for RoCE only, and `pfc` overrides it.
  PacketBackendOptions roce;
  roce.transport = RoceDcqcnSettings{};
  EXPECT_TRUE(roce.pfc_enabled());
  roce.pfc = false;
  EXPECT_FALSE(roce.pfc_enabled());
  IrnSettings irn;
  EXPECT_FALSE(irn.lossless());
  EXPECT_STREQ(irn.congestion_control_variant(), "paper");
  irn.irn.dcqcn = false;
  EXPECT_STREQ(irn.congestion_control_variant(), "none");
  // The blocks of `simulation:` they read, each once: DCQCN's is shared.
  std::vector<std::string> keys;
  for (const SettingsBlock& b : transport_blocks())
    keys.push_back(b.key);
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 4),
            (std::vector<std::string>{"dctcp", "dcqcn", "roce", "irn"}));
  EXPECT_EQ(transports_reading("dcqcn"), (std::vector<std::string>{"roce-dcqcn", "irn"}));
}

TEST(TransportRegistry, AnUnknownOrRepeatedNameIsAnError) {
  try {
    TransportChoice("tcp");
    FAIL() << "an unknown transport was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.message().rfind("unknown transport 'tcp' (known: dctcp, roce-dcqcn, irn", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(packet_transports().add(transport_entry<DctcpSettings>("again")), Error);
}

TEST(TransportRegistry, AToyTransportRegisteredByATestRuns) {
  testing::register_toy_transport();
  EXPECT_TRUE(packet_transports().contains("toy"));
  const fabric::Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  PacketBackendOptions o;
  o.transport = TransportChoice("toy");
  EXPECT_FALSE(o.pfc_enabled());
  PacketBackend net(t, o);
  Recorder rec;
  const TransferId id = rec.start(net, transfer(t.gpu(0, 0), t.gpu(1, 0), 1'000'000));
  run_to_idle(net);
  EXPECT_GT(rec.at(id), Time::zero());
  EXPECT_EQ(net.totals().bytes_delivered, 1'000'000);
  // 245 packets of 4096 bytes, each sent once: nothing is lost on an idle path.
  EXPECT_EQ(net.packet_stats().packets_sent, 245);
  EXPECT_EQ(net.packet_stats().retransmissions, 0);
  // Its own checks, under its own field.
  ToySettings bad;
  bad.window = 0;
  o.transport = bad;
  try {
    PacketBackend refused(t, o);
    FAIL() << "a window of 0 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "simulation.toy.window");
  }
}

}  // namespace transport_registry_test
}  // namespace mfabric::net
