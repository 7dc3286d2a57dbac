// An experiment's failures (config/failures.h): the list read and checked against the fabric.
#include "config/failures.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "config/failure_cases.h"
#include "core/error.h"

namespace mfabric::config {
namespace {

using testing::error_field;
using testing::mfabric_fabric;
using testing::parse;

TEST(FailureList, ALongerListThanThePartsIsRefusedBeforeItIsRead) {
  // 2 servers of 8 GPUs and 8 NICs: 34 parts. A list of 35 entries is refused as a whole
  // (524k entries took 2.4 GB and 14 s before a radix error).
  fabric::ClusterSpec two;
  two.servers = 2;
  std::string yaml = "[";
  for (int k = 0; k < 35; ++k)
    yaml += "{kind: nic, server: 0, index: 0},";
  yaml += "]";
  try {
    parse_failures(YAML::Load(yaml), "t.yaml", two);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "t.yaml: failures: lists 35 failures, more than the 34 parts of the cluster "
                 "(servers, GPUs and NICs) that can fail, each once");
  }
}

TEST(Failures, ParsesEveryKindWithStartAsTheDefaultTime) {
  const auto f = parse(
      "[{kind: nic, server: 3, index: 0, at: start}, {kind: ocs-port, server: 5, index: 2, at: "
      "2s}, {kind: gpu, server: 9, index: 4}, {kind: server, server: 12}]");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].kind, FailureKind::Nic);
  EXPECT_EQ(f[0].server, 3);
  EXPECT_FALSE(f[0].at.has_value());
  EXPECT_EQ(f[1].kind, FailureKind::OcsPort);
  EXPECT_EQ(f[1].index, 2);
  EXPECT_EQ(f[1].at, Time::milliseconds(2000));
  EXPECT_EQ(f[2].kind, FailureKind::Gpu);
  EXPECT_FALSE(f[2].at.has_value());
  EXPECT_EQ(f[3].kind, FailureKind::Server);
  EXPECT_EQ(f[3].time(), Time::zero());
}

TEST(Failures, BadEntriesNameTheirField) {
  EXPECT_EQ(error_field([] { parse("{kind: nic}"); }), "failures");
  EXPECT_EQ(error_field([] { parse("[{kind: cable, server: 1, index: 0}]"); }), "failures[0].kind");
  EXPECT_EQ(error_field([] { parse("[{server: 1, index: 0}]"); }), "failures[0].kind");
  EXPECT_EQ(error_field([] { parse("[{kind: nic, index: 0}]"); }), "failures[0].server");
  EXPECT_EQ(error_field([] { parse("[{kind: nic, server: -1, index: 0}]"); }),
            "failures[0].server");
  EXPECT_EQ(error_field([] { parse("[{kind: gpu, server: 1}]"); }), "failures[0].index");
  EXPECT_EQ(error_field([] { parse("[{kind: server, server: 1, index: 2}]"); }),
            "failures[0].index");
  EXPECT_EQ(error_field([] { parse("[{kind: nic, server: 1, index: 0, at: soon}]"); }),
            "failures[0].at");
  EXPECT_EQ(error_field([] { parse("[{kind: nic, server: 1, index: 0, at: 5}]"); }),
            "failures[0].at");
  EXPECT_EQ(error_field([] { parse("[{kind: nic, server: 1, index: 0, when: 5s}]"); }),
            "failures[0].when");
}

TEST(Failures, ChecksAgainstTheFabric) {
  const fabric::Topology m = mfabric_fabric();
  const auto check = [&](const std::string& yaml, const fabric::Topology& t) {
    return error_field([&] { check_failures(parse(yaml), t, "t.yaml"); });
  };
  EXPECT_EQ(check("[{kind: nic, server: 7, index: 7}, {kind: ocs-port, server: 0, index: 5}, "
                  "{kind: gpu, server: 1, index: 7}, {kind: server, server: 2}]",
                  m),
            "");
  EXPECT_EQ(check("[{kind: nic, server: 8, index: 0}]", m), "failures[0].server");
  EXPECT_EQ(check("[{kind: nic, server: 0, index: 8}]", m), "failures[0].index");
  EXPECT_EQ(check("[{kind: gpu, server: 0, index: 8}]", m), "failures[0].index");
  EXPECT_EQ(check("[{kind: ocs-port, server: 0, index: 6}]", m), "failures[0].index");
  EXPECT_EQ(check("[{kind: gpu, server: 0, index: 1, at: 2s}]", m), "failures[0].at");
  EXPECT_EQ(check("[{kind: server, server: 0, at: 2s}]", m), "failures[0].at");
  // The same part twice, or a part and its server; an OCS port is its NIC (NIC 2 + port).
  EXPECT_EQ(check("[{kind: nic, server: 0, index: 3}, {kind: ocs-port, server: 0, index: 1}]", m),
            "failures[1]");
  EXPECT_EQ(check("[{kind: server, server: 4}, {kind: nic, server: 4, index: 0}]", m),
            "failures[1]");
  EXPECT_EQ(check("[{kind: server, server: 4}, {kind: server, server: 4}]", m), "failures[1]");
  EXPECT_EQ(check("[{kind: gpu, server: 4, index: 1}, {kind: gpu, server: 4, index: 1}]", m),
            "failures[1]");
  // GPU k's NIC is NIC k: it fails with its GPU.
  EXPECT_EQ(check("[{kind: gpu, server: 4, index: 1}, {kind: nic, server: 4, index: 1}]", m),
            "failures[1]");
  fabric::ClusterSpec c;
  c.servers = 8;
  const fabric::Topology fat = fabric::build_fabric(Spec{"fat-tree", {}}, c);
  EXPECT_EQ(check("[{kind: ocs-port, server: 0, index: 0}]", fat), "failures[0].kind");
  EXPECT_EQ(check("[{kind: nic, server: 0, index: 0, at: 1ms}]", fat), "");
  const fabric::Topology topoopt = fabric::build_fabric(Spec{"topoopt", {}}, c);
  EXPECT_EQ(check("[{kind: nic, server: 0, index: 0}]", topoopt), "failures[0].kind");
}

}  // namespace
}  // namespace mfabric::config
