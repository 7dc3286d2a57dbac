#include "ocs/ocs_state.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace mfabric::ocs {
namespace {

using Kind = OcsChange::Kind;
constexpr Time kStateSwitching = Time::milliseconds(25);

std::string code_of(const OcsState& state, const OcsChange& change, Time now = Time::zero()) {
  const auto refusal = state.refusal(change, now);
  return refusal ? refusal->code : "";
}

TEST(OcsState, ConnectSettlesAfterTheSwitchingTime) {
  OcsState state(8);
  const Time now = Time::milliseconds(100);
  EXPECT_EQ(state.apply({Kind::Connect, 3, 7}, now, kStateSwitching), now + kStateSwitching);
  EXPECT_EQ(state.peer(3), 7);
  EXPECT_EQ(state.peer(7), 3);
  EXPECT_TRUE(state.status(3, now).switching);
  EXPECT_FALSE(state.status(3, now + kStateSwitching).switching);
  EXPECT_EQ(state.patches(), (std::vector<OcsPatch>{{3, 7}}));
}

TEST(OcsState, RefusesWithTl1Codes) {
  OcsState state(8);
  state.apply({Kind::Connect, 1, 2}, Time::zero(), kStateSwitching);
  EXPECT_EQ(code_of(state, {Kind::Connect, 0, 3}), "IIAC");
  EXPECT_EQ(code_of(state, {Kind::Connect, 3, 9}), "IIAC");
  EXPECT_EQ(code_of(state, {Kind::Connect, 3, 3}), "IIAC");
  EXPECT_EQ(code_of(state, {Kind::Connect, 2, 3}), "SAAL");  // busy, even while still moving
  EXPECT_EQ(code_of(state, {Kind::Disconnect, 4, 0}), "SNVS");
  EXPECT_EQ(code_of(state, {Kind::Disconnect, 1, 0}), "SBSY");  // mirrors still moving
  EXPECT_EQ(code_of(state, {Kind::Disconnect, 1, 0}, kStateSwitching), "");
  EXPECT_EQ(code_of(state, {Kind::Repair, 5, 0}), "SAIS");
  state.apply({Kind::Fail, 5, 0}, Time::zero(), kStateSwitching);
  EXPECT_EQ(code_of(state, {Kind::Fail, 5, 0}), "SAIS");
  EXPECT_EQ(code_of(state, {Kind::Connect, 4, 5}), "SROF");
  EXPECT_THROW(state.apply({Kind::Connect, 4, 5}, Time::zero(), kStateSwitching), Error);
  EXPECT_THROW(OcsState(0), Error);
}

TEST(OcsState, AFailedPortKeepsItsPatchUntilDeleted) {
  OcsState state(4);
  state.apply({Kind::Connect, 1, 2}, Time::zero(), kStateSwitching);
  state.apply({Kind::Fail, 2, 0}, kStateSwitching, kStateSwitching);
  EXPECT_EQ(state.peer(1), 2);
  EXPECT_TRUE(state.status(2, kStateSwitching).failed);
  EXPECT_EQ(code_of(state, {Kind::Connect, 1, 3}, kStateSwitching), "SAAL");
  state.apply({Kind::Disconnect, 1, 0}, kStateSwitching, kStateSwitching);
  EXPECT_EQ(state.peer(2), 0);
  EXPECT_EQ(code_of(state, {Kind::Connect, 2, 3}, kStateSwitching * 2), "SROF");
  state.apply({Kind::Repair, 2, 0}, kStateSwitching * 2, kStateSwitching);
  EXPECT_EQ(code_of(state, {Kind::Connect, 2, 3}, kStateSwitching * 2), "");
}

TEST(OcsState, ChangesRoundTripThroughText) {
  for (const OcsChange& change : {OcsChange{Kind::Connect, 3, 7}, OcsChange{Kind::Disconnect, 3, 0},
                                  OcsChange{Kind::Fail, 5, 0}, OcsChange{Kind::Repair, 5, 0}}) {
    EXPECT_EQ(parse_change(change_text(change)), change);
  }
  for (const char* bad : {"", "connect 1", "connect 1 x", "unplug 1", "fail -1", "fail 1 2"})
    EXPECT_THROW(parse_change(bad), Error) << bad;
}

TEST(OcsState, SnapshotRebuildsTheState) {
  OcsState state(6);
  state.apply({Kind::Connect, 4, 1}, Time::zero(), kStateSwitching);
  state.apply({Kind::Fail, 6, 0}, Time::zero(), kStateSwitching);
  OcsState rebuilt(6);
  for (const OcsChange& change : state.snapshot())
    rebuilt.apply(change, Time::zero(), Time::zero());
  EXPECT_EQ(rebuilt.patches(), state.patches());
  EXPECT_EQ(rebuilt.failed_ports(), state.failed_ports());
}

}  // namespace
}  // namespace mfabric::ocs
