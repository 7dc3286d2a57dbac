// core/rng.h: FNV-1a against its published test vectors, and seeded streams: the same seed and
// label give the same numbers, different labels different ones, and the draws stay in range.
#include "core/rng.h"

#include <gtest/gtest.h>

#include <set>

namespace mfabric {
namespace {

TEST(Fnv1a, MatchesThePublishedTestVectors) {
  // Fowler, Noll, Vo: the FNV-1a 64-bit hashes of "", "a" and "foobar".
  EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a("foobar"), 0x85944171f73967e8ULL);
  // Another start gives another hash of the same text.
  EXPECT_NE(fnv1a("a", 1), fnv1a("a"));
}

TEST(Rng, SameSeedAndLabelGiveTheSameStream) {
  Rng a = Rng(7).derive("routing/layer3");
  Rng b = Rng(7).derive("routing/layer3");
  Rng other_label = Rng(7).derive("routing/layer4");
  Rng other_seed = Rng(8).derive("routing/layer3");
  int same_as_other_label = 0;
  int same_as_other_seed = 0;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    same_as_other_label += x == other_label.next_u64();
    same_as_other_seed += x == other_seed.next_u64();
  }
  EXPECT_EQ(same_as_other_label, 0);
  EXPECT_EQ(same_as_other_seed, 0);
}

TEST(Rng, DrawsStayInRange) {
  Rng r(1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    const std::uint64_t k = r.below(6);
    EXPECT_LT(k, 6u);
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 6u);  // every value of [0, 6) comes up in 10,000 draws
}

}  // namespace
}  // namespace mfabric
