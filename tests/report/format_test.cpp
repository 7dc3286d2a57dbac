// Number formatting (report/format.h): exact for any finite double, never through a cast that
// overflows (a cost above 9.2e18 printed "-$-0" before), and NaN or infinity reported as errors.
#include "report/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/error.h"

namespace mfabric::report {
namespace {

TEST(Format, WithCommas) {
  EXPECT_EQ(with_commas(0), "0");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(1000), "1,000");
  EXPECT_EQ(with_commas(-1234567), "-1,234,567");
  EXPECT_EQ(with_commas(std::numeric_limits<std::int64_t>::max()), "9,223,372,036,854,775,807");
  // -INT64_MIN does not fit an int64; the magnitude is taken as unsigned.
  EXPECT_EQ(with_commas(std::numeric_limits<std::int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(Format, DollarsRoundToWholeDollars) {
  EXPECT_EQ(dollars(13493248.0), "$13,493,248");
  EXPECT_EQ(dollars(0.5), "$1");  // half away from zero
  EXPECT_EQ(dollars(-2.5), "-$3");
  EXPECT_EQ(dollars(-0.4), "$0");  // no "-$0"
  EXPECT_EQ(dollars(0), "$0");
}

TEST(Format, DollarsBeyondTheInt64RangeAreExact) {
  // 1e19 and 1e20 are exact doubles; their decimal digits are known without the code.
  EXPECT_EQ(dollars(1e19), "$10,000,000,000,000,000,000");
  EXPECT_EQ(dollars(-1e20), "-$100,000,000,000,000,000,000");
  // 2^70 = 1180591620717411303424.
  EXPECT_EQ(dollars(std::ldexp(1.0, 70)), "$1,180,591,620,717,411,303,424");
}

TEST(Format, DollarsAndCents) {
  EXPECT_EQ(dollars_and_cents(2248.5), "$2,248.50");
  EXPECT_EQ(dollars_and_cents(0.3), "$0.30");
  EXPECT_EQ(dollars_and_cents(150), "$150.00");
  EXPECT_EQ(dollars_and_cents(-1.25), "-$1.25");
  EXPECT_EQ(dollars_and_cents(-0.001), "$0.00");
  EXPECT_EQ(dollars_and_cents(1e9), "$1,000,000,000.00");
  EXPECT_EQ(dollars_and_cents(1e19), "$10,000,000,000,000,000,000.00");
}

TEST(Format, WholeNumber) {
  EXPECT_EQ(whole_number(835972.4), "835,972");
  EXPECT_EQ(whole_number(1e21), "1,000,000,000,000,000,000,000");
  EXPECT_EQ(whole_number(0), "0");
}

TEST(Format, NonFiniteValuesAreReportedNotPrinted) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(dollars(inf), Error);
  EXPECT_THROW(dollars(-inf), Error);
  EXPECT_THROW(dollars(nan), Error);
  EXPECT_THROW(dollars_and_cents(inf), Error);
  EXPECT_THROW(whole_number(nan), Error);
  EXPECT_THROW(ratio(inf), Error);
  try {
    dollars(inf);
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("infinite"), std::string::npos) << e.what();
  }
}

// A speed ratio spelled out the way round it reads: above 1 faster by itself, below 1 slower by
// its inverse (0.8 = 1.25x slower), equal to two decimals as fast.
TEST(Format, FasterOrSlower) {
  EXPECT_EQ(faster_or_slower(1.25), "1.25x faster");
  EXPECT_EQ(faster_or_slower(0.8), "1.25x slower");
  EXPECT_EQ(faster_or_slower(1.001), "as fast");
  EXPECT_EQ(faster_or_slower(0.999), "as fast");
  EXPECT_EQ(faster_or_slower(0.5), "2.00x slower");
  EXPECT_THROW(faster_or_slower(0), Error);
  EXPECT_THROW(faster_or_slower(-1), Error);
  EXPECT_THROW(faster_or_slower(std::numeric_limits<double>::quiet_NaN()), Error);
}

TEST(Format, Ratio) {
  EXPECT_EQ(ratio(2.3766), "2.38x");
  EXPECT_EQ(ratio(1), "1.00x");
}

}  // namespace
}  // namespace mfabric::report

namespace mfabric::report {
namespace {

// One unit family per column: traffic decimal, memory binary, a column of times in one unit.
TEST(UnitColumns, TrafficIsDecimalMemoryBinaryAndTimesShareAUnit) {
  // 84 TiB = 84 x 2^40 bytes = 92.358e12 bytes.
  EXPECT_EQ(traffic_bytes(84.0 * 1099511627776.0), "92.36TB");
  EXPECT_EQ(traffic_bytes(712e9), "712GB");
  EXPECT_EQ(traffic_bytes(999.96), "1KB");
  EXPECT_EQ(traffic_bytes(0), "0B");
  EXPECT_EQ(memory_bytes(192.0 * 1073741824.0), "192GiB");
  EXPECT_EQ(memory_bytes(16.0 * 1099511627776.0), "16TiB");
  EXPECT_EQ(memory_bytes(1536), "1.5KiB");
  EXPECT_EQ(times_in_one_unit({1.023, 0.17539}), (std::vector<std::string>{"1.023s", "0.175s"}));
  EXPECT_EQ(times_in_one_unit({0.0005, 0.0002}),
            (std::vector<std::string>{"500.000us", "200.000us"}));
  EXPECT_EQ(times_in_one_unit({0.25, 0.0125}), (std::vector<std::string>{"250.000ms", "12.500ms"}));
  // Below 1 in the column's unit: three significant digits; zero is plain.
  EXPECT_EQ(times_in_one_unit({16.416, 0.004363, 0}),
            (std::vector<std::string>{"16.416s", "0.00436s", "0s"}));
  EXPECT_THROW(traffic_bytes(-1), Error);
  EXPECT_THROW(times_in_one_unit({std::nan("")}), Error);
}

}  // namespace
}  // namespace mfabric::report
