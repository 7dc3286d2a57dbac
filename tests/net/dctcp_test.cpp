// DCTCP on its own (net/packet/transports/dctcp.h), driven by a fake host: its two variants'
// window cuts. Expected values are worked out by hand next to each check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "net/packet/transports/dctcp.h"
#include "transport_test_util.h"

namespace mfabric::net::packet {
namespace dctcp_test {

// DCTCP's two variants when the first window (packet 0 alone: alpha's first window ends with the
// first ACK) is marked: both fold the mark into alpha (15/16 x 1 + 1/16 x 1 = 1) and cut the
// window of 10 by alpha / 2 to 5, which congestion avoidance then grows by 1/5 for that ACK.
TEST(Dctcp, TheVariantsCutAtTheFirstEchoOrAtTheWindowsEnd) {
  for (DctcpVariant variant : {DctcpVariant::Rfc8257, DctcpVariant::Htsim}) {
    transport_test::FakeHost host;
    DctcpOptions o;
    o.variant = variant;
    Dctcp dctcp(host, o, Bytes(4096));
    dctcp.open(0, 100, Time::microseconds(10), Rate::gbps(100));
    for (int i = 0; i < 10; ++i)
      ASSERT_EQ(dctcp.next_packet(0), i);
    EXPECT_FALSE(dctcp.can_send(0));
    Ack ack;
    ack.cumulative = 1;
    ack.seq = 0;
    ack.ecn_echo = true;
    dctcp.on_ack(0, ack);
    if (variant == DctcpVariant::Rfc8257) {
      // alpha's first window ended with this ACK (window_end 0): alpha = 15/16 + 1/16 = 1.
      EXPECT_DOUBLE_EQ(dctcp.alpha(0), 1.0);
      EXPECT_DOUBLE_EQ(dctcp.window(0), 5.0 + 0.2);  // cut to 5, then congestion avoidance 1/5
    } else {
      // The first window (packet 0) ends here, marked: the same cut to 5 at its end.
      EXPECT_DOUBLE_EQ(dctcp.alpha(0), 1.0);
      EXPECT_DOUBLE_EQ(dctcp.window(0), 5.0 + 0.2);
    }
    // The next window (packets 1-9) has no marks: RFC 8257 keeps its window growing; the
    // window's end updates alpha to 15/16 in both, with no cut.
    for (int i = 2; i <= 10; ++i) {
      Ack next;
      next.cumulative = i;
      next.seq = i - 1;
      dctcp.on_ack(0, next);
    }
    EXPECT_NEAR(dctcp.alpha(0), 15.0 / 16.0, 1e-12);
    EXPECT_GT(dctcp.window(0), 5.2);
  }
}

// A mark in the middle of a window: RFC 8257 cuts when the echo arrives, htsim's only when the
// window ends.
TEST(Dctcp, HtsimsVariantWaitsForTheWindowsEnd) {
  for (DctcpVariant variant : {DctcpVariant::Rfc8257, DctcpVariant::Htsim}) {
    transport_test::FakeHost host;
    DctcpOptions o;
    o.variant = variant;
    Dctcp dctcp(host, o, Bytes(4096));
    dctcp.open(0, 1000, Time::microseconds(10), Rate::gbps(100));
    for (int i = 0; i < 10; ++i)
      dctcp.next_packet(0);
    Ack first;  // ends the first window (packet 0), unmarked: alpha 15/16, slow start 10 -> 11
    first.cumulative = 1;
    dctcp.on_ack(0, first);
    while (dctcp.can_send(0))
      dctcp.next_packet(0);
    const double before = dctcp.window(0);
    Ack marked;  // packet 1, in the second window (which ends at packet 10's ACK), marked
    marked.cumulative = 2;
    marked.seq = 1;
    marked.ecn_echo = true;
    dctcp.on_ack(0, marked);
    if (variant == DctcpVariant::Rfc8257) {
      EXPECT_LT(dctcp.window(0), before);
    } else {
      EXPECT_GT(dctcp.window(0), before);  // still growing until the window ends
    }
  }
}

}  // namespace dctcp_test
}  // namespace mfabric::net::packet
