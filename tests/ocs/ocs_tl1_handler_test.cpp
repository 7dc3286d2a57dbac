#include "ocs/ocs_tl1_handler.h"

#include <gtest/gtest.h>

#include <variant>

#include "scratch_dir.h"

namespace mfabric::ocs {
namespace {

using tl1::parse_patches;
using tl1::parse_port_status;
using tl1::parse_tl1_command;
using tl1::parse_tl1_message;
using tl1::PortState;
using tl1::PortStatus;
using tl1::Tl1Acknowledgment;
using tl1::Tl1Completion;
using tl1::Tl1Message;
using tl1::Tl1Response;

constexpr Time kHandlerSwitching = Time::milliseconds(25);

class OcsTl1HandlerTest : public mfabric::testing::ScratchDirTest {
 protected:
  OcsTl1HandlerTest() : ScratchDirTest("ocs_tl1_handler") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    journal_.emplace((dir_ / "ocs.state").string(), 8, &state_);
    handler_.emplace(&state_, &*journal_, std::map<std::string, std::string>{{"ops", "pw"}},
                     kHandlerSwitching, "OCS1");
  }
  OcsReply handle(const std::string& text, Time now = Time::zero(), bool can_wait = true) {
    return handler_->handle(parse_tl1_command(text), &login_, "10.0.0.1", can_wait, now);
  }
  Tl1Response now_response(const std::string& text, Time now = Time::zero()) {
    const Tl1Message message = parse_tl1_message(handle(text, now).now);
    EXPECT_TRUE(std::holds_alternative<Tl1Response>(message)) << text;
    return std::get<Tl1Response>(message);
  }

  OcsState state_{8};
  std::optional<OcsJournal> journal_;
  std::optional<OcsTl1Handler> handler_;
  OcsLogin login_;
};

TEST_F(OcsTl1HandlerTest, APatchIsAcknowledgedThenCompletedWhenSettled) {
  EXPECT_EQ(now_response("ACT-USER::ops:1::pw;").completion, Tl1Completion::Compld);
  EXPECT_TRUE(login_.active);
  const Time now = Time::milliseconds(7);
  const OcsReply reply = handle("ENT-PATCH::2,5:9:;", now);
  EXPECT_EQ(parse_tl1_message(reply.now), (Tl1Message{Tl1Acknowledgment{"IP", "9"}}));
  ASSERT_TRUE(reply.later_at);
  EXPECT_EQ(*reply.later_at, now + kHandlerSwitching);
  const Tl1Message later = parse_tl1_message(reply.later);
  EXPECT_EQ(std::get<Tl1Response>(later).completion, Tl1Completion::Compld);
  EXPECT_EQ(std::get<Tl1Response>(later).sid, "OCS1");
  EXPECT_EQ(state_.peer(2), 5);
  EXPECT_EQ(journal_->records(), 1u);
}

TEST_F(OcsTl1HandlerTest, RefusalsCarryTheirCodes) {
  EXPECT_EQ(now_response("ACT-USER::ops:1::wrong;").error_code, "PIUI");
  EXPECT_EQ(now_response("ACT-USER::nobody:1::pw;").error_code, "PIUI");
  EXPECT_EQ(now_response("ENT-PATCH::1,2:2:;").error_code, "PLNA");
  EXPECT_EQ(now_response("CANC-USER::ops:3;").error_code, "PLNA");
  // The third failure locks the address for a second, the right password included.
  EXPECT_EQ(now_response("ACT-USER::ops:4::wrong;").error_code, "PIUI");
  EXPECT_EQ(now_response("ACT-USER::ops:5::pw;", Time::milliseconds(500)).error_code, "PIUI");
  EXPECT_EQ(now_response("ACT-USER::ops:6::pw;", Time::milliseconds(1001)).completion,
            Tl1Completion::Compld);
  EXPECT_EQ(now_response("ENT-PATCH::1:7:;").error_code, "IIAC");
  EXPECT_EQ(now_response("ENT-PATCH::a,b:8:;").error_code, "IIAC");
  EXPECT_EQ(now_response("ENT-PATCH::1,9:9:;").error_code, "IIAC");
  EXPECT_EQ(now_response("RTRV-PORT-STATUS::0:10;").error_code, "IIAC");
  EXPECT_EQ(now_response("DLT-PATCH::1:11:;").error_code, "SNVS");
  EXPECT_EQ(now_response("RTRV-ALM-ALL:::12;").error_code, "IICM");
  const OcsReply full = handle("ENT-PATCH::1,2:13:;", Time::zero(), /*can_wait=*/false);
  EXPECT_EQ(std::get<Tl1Response>(parse_tl1_message(full.now)).error_code, "SLEM");
  EXPECT_EQ(state_.peer(1), 0);
  handle("ENT-PATCH::1,2:14:;");
  EXPECT_EQ(now_response("DLT-PATCH::1,3:15:;").error_code, "SNVS");
  EXPECT_EQ(now_response("DLT-PATCH::1,2:16:;").error_code, "SBSY");
  EXPECT_EQ(handle("DLT-PATCH::1,2:17:;", kHandlerSwitching).later_at, kHandlerSwitching * 2);
  EXPECT_EQ(journal_->records(), 2u);  // refused commands leave no line
}

TEST_F(OcsTl1HandlerTest, MalformedInputIsAnsweredWithASafeComment) {
  const Tl1Message message = parse_tl1_message(handler_->malformed("bad */ \"input\"\n"));
  const Tl1Response& r = std::get<Tl1Response>(message);
  EXPECT_EQ(r.error_code, "IISP");
  EXPECT_EQ(r.ctag, "0");
  EXPECT_EQ(r.comment.find("*/"), std::string::npos);
}

TEST_F(OcsTl1HandlerTest, RetrievesPatchesAndPortStatus) {
  now_response("ACT-USER::ops:1::pw;");
  handle("ENT-PATCH::6,3:2:;");
  handle("OPR-PORT-FAIL::8:3:;");
  EXPECT_EQ(parse_patches(now_response("RTRV-PATCH:::4;")),
            (std::vector<std::pair<int, int>>{{3, 6}}));
  const std::vector<PortStatus> all = parse_port_status(now_response("RTRV-PORT-STATUS:::5;"));
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all[7], (PortStatus{8, PortState::Failed}));
  EXPECT_EQ(all[0], (PortStatus{1, PortState::InService}));
  EXPECT_EQ(now_response("RLS-PORT-FAIL::8:6:;").completion, Tl1Completion::Compld);
  EXPECT_EQ(now_response("RLS-PORT-FAIL::8:7:;").error_code, "SAIS");
}

}  // namespace
}  // namespace mfabric::ocs
