#include "core/registry.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace mfabric {
namespace {

using IntRegistry = Registry<std::function<int()>>;

IntRegistry two() {
  return IntRegistry(
      "widget", {{"one", "the first", [] { return 1; }}, {"two", "the second", [] { return 2; }}});
}

TEST(RegistryTest, FindsEntriesByNameInRegistrationOrder) {
  const IntRegistry r = two();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(r.known(), "one, two");
  ASSERT_NE(r.find("two"), nullptr);
  EXPECT_EQ(r.find("two")->factory(), 2);
  EXPECT_EQ(r.at("one").description, "the first");
  EXPECT_TRUE(r.contains("one"));
  EXPECT_FALSE(r.contains("three"));
  EXPECT_EQ(r.find("On"), nullptr);  // exact names only
}

TEST(RegistryTest, AnUnknownNameListsTheKnownOnes) {
  const IntRegistry r = two();
  try {
    r.at("three");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "unknown widget 'three' (known: one, two)");
    EXPECT_EQ(e.field(), "");
  }
}

TEST(RegistryTest, AddedEntriesComeLastAndKeepEarlierReferencesValid) {
  IntRegistry r = two();
  const IntRegistry::Entry& first = r.at("one");
  for (int i = 0; i < 100; ++i)
    r.add({"extra" + std::to_string(i), "", [i] { return 10 + i; }});
  EXPECT_EQ(first.factory(), 1);  // a deque keeps it where it was
  EXPECT_EQ(r.names().back(), "extra99");
  EXPECT_EQ(r.at("extra42").factory(), 52);
}

TEST(RegistryTest, RefusesARepeatedOrEmptyName) {
  IntRegistry r = two();
  EXPECT_THROW(r.add({"two", "again", [] { return 0; }}), Error);
  EXPECT_THROW(r.add({"", "nameless", [] { return 0; }}), Error);
  EXPECT_THROW(IntRegistry("widget", {{"a", "", nullptr}, {"a", "", nullptr}}), Error);
  EXPECT_EQ(r.names().size(), 2u);
}

}  // namespace
}  // namespace mfabric
