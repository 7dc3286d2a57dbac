#include "core/spec.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/rng.h"

namespace mfabric {
namespace {

TEST(Spec, ParsesNameAndParameters) {
  Spec s = Spec::parse("mfabric:alpha=6,region=8");
  EXPECT_EQ(s.name(), "mfabric");
  EXPECT_EQ(s.get_int("alpha", 0), 6);
  EXPECT_EQ(s.get_int("region", 0), 8);
  EXPECT_EQ(s.get_int("radix", 64), 64);
  EXPECT_NO_THROW(s.finish({"alpha", "region", "radix"}));
  EXPECT_EQ(s.to_string(), "mfabric:alpha=6,region=8");
  EXPECT_EQ(Spec::parse("fat-tree").to_string(), "fat-tree");
}

TEST(Spec, TypedGettersRejectBadValues) {
  Spec s = Spec::parse("x:a=six,b=1.5,c=25,d=400");
  EXPECT_THROW(s.get_int("a", 0), Error);
  EXPECT_DOUBLE_EQ(s.get_double("b", 0), 1.5);
  EXPECT_THROW(s.get_time("c", Time::zero()), Error);
  EXPECT_THROW(s.get_rate("d", Rate()), Error);
  try {
    s.get_time("c", Time::zero());
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "c");
  }
}

TEST(Spec, UnreadParameterIsAnError) {
  Spec s = Spec::parse("fat-tree:radx=16");
  s.get_int("radix", 64);
  try {
    s.finish({"radix", "oversubscription"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("radx"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("radix, oversubscription"), std::string::npos);
  }
}

TEST(Spec, MalformedText) {
  EXPECT_THROW(Spec::parse(""), Error);
  EXPECT_THROW(Spec::parse(":a=1"), Error);
  EXPECT_THROW(Spec::parse("x:a"), Error);
  EXPECT_THROW(Spec::parse("x:a=1,,b=2"), Error);
  EXPECT_THROW(Spec::parse("x:a=1,a=2"), Error);
  EXPECT_THROW(Spec::parse("x:=1"), Error);
}

TEST(ErrorContext, ComposesSourceAndField) {
  Error e = Error("", "nic", "expected a number").in("prices.yaml", "link_speeds.400G");
  EXPECT_STREQ(e.what(), "prices.yaml: link_speeds.400G.nic: expected a number");
  EXPECT_EQ(e.source(), "prices.yaml");
  EXPECT_STREQ(Error("plain").what(), "plain");
}

TEST(Rng, DeterministicAndIndependentStreams) {
  Rng a(42), b(42), c(43);
  EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_NE(Rng(42).next_u64(), c.next_u64());
  Rng x = Rng(7).derive("routing"), y = Rng(7).derive("routing"), z = Rng(7).derive("other");
  const auto xv = x.next_u64();
  EXPECT_EQ(xv, y.next_u64());
  EXPECT_NE(xv, z.next_u64());
  Rng u(1);
  for (int i = 0; i < 1000; ++i) {
    const double v = u.uniform();
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
    ASSERT_LT(u.below(7), 7u);
  }
}

}  // namespace
}  // namespace mfabric
