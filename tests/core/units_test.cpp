#include "core/units.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/error.h"

namespace mfabric {
namespace {

TEST(ParseTime, AcceptsEveryUnit) {
  EXPECT_EQ(parse_time("25ms"), Time::milliseconds(25));
  EXPECT_EQ(parse_time("1us"), Time::microseconds(1));
  EXPECT_EQ(parse_time("1.5us"), Time::nanoseconds(1500));
  EXPECT_EQ(parse_time("10ns"), Time::nanoseconds(10));
  EXPECT_EQ(parse_time("7ps"), Time::picoseconds(7));
  EXPECT_EQ(parse_time("2s"), Time::milliseconds(2000));
  EXPECT_EQ(parse_time(" 3 ms "), Time::milliseconds(3));
  EXPECT_EQ(parse_time("0s"), Time::zero());
}

TEST(ParseTime, RejectsBadInputNamingTheText) {
  for (const char* bad : {"25", "", "ms", "25xs", "-1ms", "abc", "1e400s"}) {
    try {
      parse_time(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      if (std::string(bad).size() > 0) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      }
    }
  }
}

TEST(ParseRate, BitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_rate("100G").bps(), 100e9);
  EXPECT_DOUBLE_EQ(parse_rate("400Gbps").bps(), 400e9);
  EXPECT_DOUBLE_EQ(parse_rate("400Gb/s").bps(), 400e9);
  EXPECT_DOUBLE_EQ(parse_rate("900GB/s").bps(), 7200e9);
  EXPECT_DOUBLE_EQ(parse_rate("900GBps").bps(), 7200e9);
  EXPECT_DOUBLE_EQ(parse_rate("1.6T").bps(), 1.6e12);
  EXPECT_DOUBLE_EQ(parse_rate("10Mbps").bps(), 10e6);
  EXPECT_DOUBLE_EQ(parse_rate("25 Gbps").bps(), 25e9);
}

TEST(ParseRate, RejectsUnitlessNegativeAndUnknown) {
  EXPECT_THROW(parse_rate("400"), Error);
  EXPECT_THROW(parse_rate("-400G"), Error);
  EXPECT_THROW(parse_rate("400Q"), Error);
  EXPECT_THROW(parse_rate("400Gbit"), Error);
  EXPECT_THROW(parse_rate("fast"), Error);
}

TEST(ParseBytes, DecimalAndBinary) {
  EXPECT_EQ(parse_bytes("2MiB"), Bytes::mib(2));
  EXPECT_EQ(parse_bytes("1.5GB"), Bytes(1'500'000'000));
  EXPECT_EQ(parse_bytes("512B"), Bytes(512));
  EXPECT_EQ(parse_bytes("1.5KiB"), Bytes(1536));
  EXPECT_EQ(parse_bytes("0.1GB"), Bytes(100'000'000));
  EXPECT_EQ(parse_bytes("1GiB"), Bytes::gib(1));
}

TEST(ParseBytes, RejectsUnitlessFractionalAndNegative) {
  EXPECT_THROW(parse_bytes("1024"), Error);
  EXPECT_THROW(parse_bytes("2.5B"), Error);
  EXPECT_THROW(parse_bytes("-1MB"), Error);
  EXPECT_THROW(parse_bytes("1Mb"), Error);
  try {
    parse_bytes("1024");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no unit"), std::string::npos);
  }
}

TEST(Print, RoundTripsTypicalValues) {
  EXPECT_EQ(to_string(Time::milliseconds(25)), "25ms");
  EXPECT_EQ(to_string(Time::nanoseconds(1500)), "1.5us");
  EXPECT_EQ(to_string(Time::picoseconds(12)), "12ps");
  EXPECT_EQ(to_string(Rate::gbps(400)), "400Gbps");
  EXPECT_EQ(to_string(parse_rate("900GB/s")), "7.2Tbps");
  EXPECT_EQ(to_string(Bytes::mib(2)), "2MiB");
  EXPECT_EQ(to_string(Bytes(1'500'000'000)), "1.5GB");
  EXPECT_EQ(to_string(Bytes(100)), "100B");
  EXPECT_EQ(to_string(Bytes(7503535456LL * 1024)), "7.684TB");
  EXPECT_EQ(to_string(Bytes::kib(1536)), "1.573MB");
  EXPECT_EQ(link_label(Rate::gbps(400)), "400G");
  EXPECT_EQ(link_label(Rate::gbps(1600)), "1.6T");
  for (const char* t : {"25ms", "1.5us", "3s", "40ns"})
    EXPECT_EQ(to_string(parse_time(t)), t);
}

TEST(TransmissionTime, SizeOverRate) {
  // 1 MB at 8 Gbps = 1 ms.
  EXPECT_EQ(transmission_time(Bytes(1'000'000), Rate::gbps(8)), Time::milliseconds(1));
  EXPECT_EQ(transmission_time(Bytes(0), Rate::gbps(8)), Time::zero());
  // Rounds up: 1 byte at 3 bps = 2.666..s -> never early.
  EXPECT_GE(transmission_time(Bytes(1), Rate::bits_per_second(3)).ps(), 2'666'666'666'667);
}

}  // namespace
}  // namespace mfabric

namespace mfabric {
namespace {

TEST(TimeRange, ParsedValuesAtTheEdgeOfTheRange) {
  // Found by fuzzing: 2^63 - 1 ps is 2^63 as a double, which no int64 holds.
  EXPECT_THROW(parse_time("9223372036854775807ps"), Error);
  EXPECT_EQ(parse_time("9223372036854774784ps").ps(), 9223372036854774784);
  // Found by fuzzing: 3e307 x 1e3 is infinite.
  EXPECT_THROW(parse_rate("3e307K"), Error);
  EXPECT_THROW(parse_rate("2e30G"), Error);
  EXPECT_DOUBLE_EQ(parse_rate("1e18G").bps(), 1e27);
}

TEST(TimeRange, FromSecondsOutsideTheClockIsAnError) {
  EXPECT_EQ(Time::from_seconds(1e6), Time::picoseconds(1'000'000'000'000'000'000));
  EXPECT_THROW(Time::from_seconds(1e7), Error);  // 1e19 ps > 2^63
  EXPECT_THROW(Time::from_seconds(-1e7), Error);
  EXPECT_THROW(Time::from_seconds(std::numeric_limits<double>::quiet_NaN()), Error);
  EXPECT_THROW(Time::from_seconds(std::numeric_limits<double>::infinity()), Error);
}

TEST(TimeRange, TransmissionPastTheClockSaturatesInsteadOfOverflowing) {
  // 1 GiB at 1 bps is 8.6e9 s = 8.6e21 ps: past int64, so "never" (Time::max()).
  EXPECT_EQ(transmission_time(Bytes::gib(1), Rate::bits_per_second(1)), Time::max());
  // Just inside: 1e6 s worth of bits.
  EXPECT_EQ(transmission_time(Bytes(125'000), Rate::bits_per_second(1)),
            Time::picoseconds(1'000'000'000'000'000'000));
}

}  // namespace
}  // namespace mfabric
