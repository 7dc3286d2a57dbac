// The network backends by name (net/backends.h) and what each offers beyond the core
// (Backend::capabilities(), backend.h): circuits, statistics, timelines, packet reports.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "fabric/builders.h"
#include "net/backend_stats.h"
#include "net/backends.h"
#include "net/circuits.h"
#include "net/flow/flow_backend.h"
#include "net/flow/spraying_backend.h"
#include "net/link_timeline.h"
#include "net/packet_backend.h"
#include "net/packet_report.h"
#include "net_test_util.h"

namespace mfabric::net {
namespace backend_registry_test {

using testing::cluster;

// A backend with only the core: every transfer is done at once.
class InstantBackend final : public Backend {
 public:
  TransferId start(const net::Transfer& /*t*/, DoneCallback on_done) override {
    on_done(next_, now_);
    return next_++;
  }
  void set_link_rate(fabric::LinkId /*link*/, Rate /*rate*/) override {}
  Time now() const override { return now_; }
  std::optional<Time> next_event_time() const override { return std::nullopt; }
  void advance(Time t) override { now_ = t; }

 private:
  Time now_;
  TransferId next_ = 0;
};

TEST(BackendRegistry, NamesTheBackendsAndRefusesAnUnknownOne) {
  const std::vector<std::string> names = backends().names();
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "flow");
  EXPECT_EQ(names[1], "packet");
  EXPECT_FALSE(backends().at("flow").description.empty());
  const fabric::Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  try {
    make_backend("fluid", t);
    FAIL() << "an unknown backend was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.message().rfind("unknown backend 'fluid' (known: flow, packet", 0), 0u) << e.what();
  }
  // A backend of one's own, by name like the others.
  if (!backends().contains("instant")) {
    backends().add({"instant", "a test's: every transfer done at once",
                    [](const fabric::Topology&, const BackendOptions&) {
                      return std::make_unique<InstantBackend>();
                    }});
  }
  const std::unique_ptr<Backend> instant = make_backend("instant", t);
  bool done = false;
  instant->start(testing::transfer(t.gpu(0, 0), t.gpu(1, 0), 100),
                 [&](TransferId, Time) { done = true; });
  EXPECT_TRUE(done);
  EXPECT_THROW(backends().add({"flow", "again", nullptr}), Error);
}

TEST(BackendRegistry, EachBackendOffersWhatItModels) {
  const fabric::Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  // Only the core: nothing else, and what needs a part says so.
  InstantBackend core;
  const Capabilities none = core.capabilities();
  EXPECT_EQ(none.circuits, nullptr);
  EXPECT_EQ(none.stats, nullptr);
  EXPECT_EQ(none.timeline, nullptr);
  EXPECT_EQ(none.packets, nullptr);
  EXPECT_THROW(require_circuits(core), Error);
  EXPECT_THROW(require_timeline(core), Error);
  // The fluid backend: circuits, statistics and timelines, no packets.
  FlowBackend flow(t);
  EXPECT_EQ(flow.circuits(), static_cast<Circuits*>(&flow));
  EXPECT_EQ(flow.stats(), static_cast<BackendStats*>(&flow));
  EXPECT_EQ(flow.timeline(), static_cast<TimelineRecorder*>(&flow));
  EXPECT_EQ(flow.packet_reporting(), nullptr);
  // The packet backend: all four, its circuits the packet part's.
  PacketBackend packet(t);
  EXPECT_NE(packet.circuits(), nullptr);
  EXPECT_EQ(packet.stats(), static_cast<BackendStats*>(&packet));
  EXPECT_EQ(packet.timeline(), static_cast<TimelineRecorder*>(&packet));
  EXPECT_EQ(packet.packet_reporting(), static_cast<const PacketReporting*>(&packet));
  // Spraying: the inner backend's, but for the transfers' statistics, counted whole.
  auto inner = std::make_unique<FlowBackend>(t);
  FlowBackend* inner_flow = inner.get();
  SprayingBackend sprayed(std::move(inner), 4);
  EXPECT_EQ(sprayed.circuits(), static_cast<Circuits*>(inner_flow));
  EXPECT_EQ(sprayed.stats(), static_cast<BackendStats*>(&sprayed));
  EXPECT_EQ(sprayed.timeline(), static_cast<TimelineRecorder*>(inner_flow));
  EXPECT_EQ(sprayed.packet_reporting(), nullptr);
  SprayingBackend over_core(std::make_unique<InstantBackend>(), 4);
  EXPECT_EQ(over_core.stats(), nullptr);
}

}  // namespace backend_registry_test
}  // namespace mfabric::net
