// Link utilisation over time (report/utilisation.h, link_classes.h, utilisation_figure.h):
// classes and their capacities counted by hand, utilisation of bins worked out from rate x
// overlap / (capacity x bin), the CSVs' rows, and the figure's script.
#include "report/utilisation.h"
#include "test_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fabric/builders.h"
#include "report/link_classes.h"
#include "report/utilisation_figure.h"

namespace mfabric::report {
namespace {

using fabric::Topology;

constexpr std::int64_t kUs = 1'000'000;  // picoseconds

fabric::ClusterSpec cluster(int servers, int gpus, int nics, double gbps = 100) {
  fabric::ClusterSpec c;
  c.servers = servers;
  c.gpus_per_server = gpus;
  c.nics_per_server = nics;
  c.link = Rate::gbps(gbps);
  c.nvswitch = Rate::gbps(800);
  return c;
}

std::map<std::string, LinkClass> by_id(const LinkClasses& c) {
  std::map<std::string, LinkClass> out;
  for (const LinkClass& k : c.classes)
    out[k.id] = k;
  return out;
}

std::vector<std::string> ids(const LinkClasses& c) {
  std::vector<std::string> out;
  for (const LinkClass& k : c.classes)
    out.push_back(k.id);
  return out;
}

TEST(LinkClasses, FatTreeHasNvlinkPcieNicUplinksAndTiers) {
  // 2 servers of 2 GPUs and 2 NICs, radix 4: 2 leaves of 2 hosts, 2 spines.
  const Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 2, 2));
  const LinkClasses c = classify_links(t);
  ASSERT_EQ(c.of_link.size(), t.links().size());
  EXPECT_EQ(ids(c), (std::vector<std::string>{"nvlink", "pcie", "nic-leaf", "leaf-spine"}));
  const auto k = by_id(c);
  EXPECT_EQ(k.at("nvlink").links, 4);  // a link per GPU
  EXPECT_EQ(k.at("pcie").links, 4);    // GPU j - NIC j
  EXPECT_EQ(k.at("nic-leaf").links, 4);
  // Both directions: 4 links x 2 x 100 Gb/s = 100 GB/s; NVLink 4 x 2 x 800 Gb/s.
  EXPECT_DOUBLE_EQ(k.at("nic-leaf").capacity_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(k.at("nvlink").capacity_bytes_per_s, 800e9);
  EXPECT_EQ(k.at("nvlink").label, "NVLink (GPU-NVSwitch)");
  std::int64_t links = 0;
  for (const LinkClass& x : c.classes)
    links += x.links;
  EXPECT_EQ(links, static_cast<std::int64_t>(t.links().size()));
}

TEST(LinkClasses, OpticalFabricsHaveTheirFibresAsCircuitClasses) {
  const Topology mf =
      fabric::build_fabric("mfabric:alpha=6,region=2,radix=8", cluster(2, 8, 8, 400));
  const auto m = by_id(classify_links(mf));
  ASSERT_TRUE(m.count("ocs"));
  EXPECT_EQ(m.at("ocs").links, 12);  // alpha 6 NICs per server
  EXPECT_EQ(m.at("nic-leaf").links, 4);
  EXPECT_EQ(m.at("ocs").label, "OCS circuits (NIC-OCS fibres)");
  const Topology panel = fabric::build_fabric("topoopt", cluster(3, 2, 2));
  EXPECT_EQ(ids(classify_links(panel)),
            (std::vector<std::string>{"nvlink", "pcie", "patch-panel"}));
}

// Two servers of one GPU and one NIC on one leaf (100G): channel c of the NIC cable of server s.
struct TwoHosts {
  Topology t = fabric::build_fabric("fat-tree:radix=4", cluster(2, 1, 1));
  net::LinkTable links{t};
  net::ChannelId uplink(int server) const {
    const fabric::NodeId nic = t.nic(server, 0);
    for (fabric::LinkId l : t.links_of(nic)) {
      if (t.link(l).kind == fabric::LinkKind::Cable) return net::channel_of(t, l, nic);
    }
    return -1;
  }
};

// Server 0's uplink at 100G from 5 us to 35 us in 10 us bins; the run ends at 35 us.
sim::RunResult one_busy_uplink(const TwoHosts& h) {
  sim::RunResult result;
  result.timeline.emplace(h.links, net::TimelineOptions{Time::microseconds(10)});
  result.timeline->add_rate(h.uplink(0), 5 * kUs, 35 * kUs, 100e9);
  result.makespan = Time::microseconds(35);
  result.timeline->close();
  return result;
}

TEST(UtilisationSeries, ClassUtilisationIsBytesOverCapacityTimesBin) {
  TwoHosts h;
  // Server 0's uplink at 100G from 5 us to 35 us; the run ends at 35 us (last bin: 5 us).
  const sim::RunResult result = one_busy_uplink(h);
  const UtilisationSeries s(h.t, result);
  ASSERT_EQ(s.bins(), 4);
  EXPECT_DOUBLE_EQ(s.length_s(0), 10e-6);
  EXPECT_DOUBLE_EQ(s.length_s(3), 5e-6);
  EXPECT_DOUBLE_EQ(s.end_s(), 35e-6);
  std::size_t nic = 0;
  while (s.classes().classes[nic].id != "nic-leaf")
    ++nic;
  // The class: 2 cables x 2 directions at 12.5 GB/s = 50 GB/s. One of its four channels full
  // is 0.25; half a bin of it 0.125; the last bin (5 us) full: 0.25 again.
  EXPECT_DOUBLE_EQ(s.bytes(nic, 1), 125'000);
  EXPECT_DOUBLE_EQ(s.utilisation(nic, 0), 0.125);
  EXPECT_DOUBLE_EQ(s.utilisation(nic, 1), 0.25);
  EXPECT_DOUBLE_EQ(s.utilisation(nic, 2), 0.25);
  EXPECT_DOUBLE_EQ(s.utilisation(nic, 3), 0.25);
  // Over the run: 30 us of one channel out of 4 channels x 35 us.
  EXPECT_DOUBLE_EQ(s.mean_utilisation(nic), 30.0 / 140.0);
  EXPECT_DOUBLE_EQ(s.peak_utilisation(nic), 0.25);
  for (std::size_t k = 0; k < s.classes().classes.size(); ++k) {
    if (k == nic) continue;
    for (std::int64_t b = 0; b < s.bins(); ++b)
      EXPECT_EQ(s.utilisation(k, b), 0.0) << s.classes().classes[k].id;
  }

  std::ostringstream csv;
  write_utilisation_csv(s, csv);
  std::istringstream in(mfabric::testing::csv_body(csv.str()));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "time_s,bin_s,class,bytes,utilisation");
  int rows = 0;
  bool found = false;
  while (std::getline(in, line)) {
    ++rows;
    if (line == "0.00001,0.00001,nic-leaf,125000,0.250000") found = true;
  }
  EXPECT_EQ(rows, 4 * static_cast<int>(s.classes().classes.size()));
  EXPECT_TRUE(found) << csv.str();
}

TEST(UtilisationSeries, TwoChannelsOfAClassAddUp) {
  TwoHosts h;
  sim::RunResult result;
  result.timeline.emplace(h.links, net::TimelineOptions{Time::microseconds(10)});
  // Both uplinks at half rate over the first bin, server 1's at full rate over the second.
  result.timeline->add_rate(h.uplink(0), 0, 10 * kUs, 50e9);
  result.timeline->add_rate(h.uplink(1), 0, 20 * kUs, 50e9);
  result.timeline->add_rate(h.uplink(1), 10 * kUs, 20 * kUs, 50e9);
  result.makespan = Time::microseconds(20);
  result.timeline->close();
  const UtilisationSeries s(h.t, result);
  std::size_t nic = 0;
  while (s.classes().classes[nic].id != "nic-leaf")
    ++nic;
  EXPECT_DOUBLE_EQ(s.utilisation(nic, 0), 0.25);  // (0.5 + 0.5) / 4
  EXPECT_DOUBLE_EQ(s.utilisation(nic, 1), 0.25);  // 1 / 4
}

TEST(LinkUtilisationCsv, RowsOnlyForBinsInWhichALinkCarriedBytes) {
  TwoHosts h;
  sim::RunResult result;
  result.timeline.emplace(h.links, net::TimelineOptions{Time::microseconds(10)});
  result.timeline->add_rate(h.uplink(0), 5 * kUs, 20 * kUs, 100e9);
  result.makespan = Time::microseconds(40);
  result.timeline->close();
  std::ostringstream csv;
  write_link_utilisation_csv(h.t, result, csv);
  const fabric::LinkId link = net::link_of_channel(h.uplink(0));
  const std::string dir = h.uplink(0) % 2 == 0 ? "ab" : "ba";
  EXPECT_EQ(mfabric::testing::csv_body(csv.str()),
            "time_s,bin_s,link,direction,from,to,class,bytes,utilisation\n" +
                fmt::format("0,0.00001,{},{},s0.nic0,leaf0,nic-leaf,62500,"
                            "0.500000\n",
                            link, dir) +
                fmt::format("0.00001,0.00001,{},{},s0.nic0,leaf0,nic-leaf,125000,"
                            "1.000000\n",
                            link, dir));
}

TEST(UtilisationFigure, ALinePerClassFromZeroToOne) {
  TwoHosts h;
  const sim::RunResult result = one_busy_uplink(h);
  const UtilisationSeries s(h.t, result);
  const std::string script = utilisation_script(s).text();
  std::size_t lines = 0;
  for (std::size_t at = script.find("with steps"); at != std::string::npos;
       at = script.find("with steps", at + 1))
    ++lines;
  EXPECT_EQ(lines, s.classes().classes.size());
  EXPECT_NE(script.find("set yrange [0:1]"), std::string::npos);
  EXPECT_NE(script.find("time (ms)"), std::string::npos);  // a run shorter than a second
  for (const LinkClass& c : s.classes().classes)
    EXPECT_NE(script.find(c.label), std::string::npos) << c.label;
  // The nic-leaf line's data: bin starts in ms with their utilisation, and the run's end.
  EXPECT_NE(script.find("0.01 0.25\n0.02 0.25\n0.03 0.25\n0.035 0.25\n"), std::string::npos)
      << script;
}

}  // namespace
}  // namespace mfabric::report
