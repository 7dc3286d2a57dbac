#include "tl1/tl1_message.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "test_text.h"

namespace mfabric::tl1 {
namespace {

using mfabric::testing::error_text;

// --- commands ---

TEST(Tl1Command, ReadsThePolatisCommandsMfabricSends) {
  const Tl1Command connect = parse_tl1_command("ENT-PATCH::1,2:7:;");
  EXPECT_EQ(connect.verb, "ENT-PATCH");
  EXPECT_EQ(connect.tid, "");
  EXPECT_EQ(connect.aid, "1,2");
  EXPECT_EQ(connect.ctag, "7");
  EXPECT_EQ(connect.general_block, "");
  EXPECT_TRUE(connect.parameters.empty());

  const Tl1Command login = parse_tl1_command("act-user:OCS-1:admin:100::\"pa ss;w:d\";\r\n");
  EXPECT_EQ(login.verb, "ACT-USER");
  EXPECT_EQ(login.tid, "OCS-1");
  EXPECT_EQ(login.aid, "admin");
  EXPECT_EQ(login.ctag, "100");
  EXPECT_EQ(login.parameters, std::vector<std::string>{"\"pa ss;w:d\""});

  const Tl1Command short_form = parse_tl1_command("RTRV-PATCH:::5;");
  EXPECT_EQ(short_form.verb, "RTRV-PATCH");
  EXPECT_EQ(short_form.ctag, "5");
  EXPECT_EQ(format_tl1_command(short_form), "RTRV-PATCH:::5:;");
}

TEST(Tl1Command, FormatsWhatItParses) {
  for (const char* text : {"ENT-PATCH::1,2:7:;", "DLT-PATCH::1:8:;", "ACT-USER::admin:1::secret;",
                           "CANC-USER::admin:2:;", "RTRV-PORT-STATUS::ALL:AB12:;",
                           "ED-X-Y:T.1:A&&B:Z:K=V,L=W:a,,b;", "ACT-USER::u:9::\"x, y: z;\";"}) {
    const Tl1Command command = parse_tl1_command(text);
    EXPECT_EQ(format_tl1_command(command), text);
    EXPECT_EQ(parse_tl1_command(format_tl1_command(command)), command);
  }
}

TEST(Tl1Command, RefusesEachMalformedPartByName) {
  const struct {
    const char* text;
    const char* field;
  } cases[] = {
      {"", "command: expected a TL1 command"},
      {"ENT-PATCH::1,2:7:", "command: expected the command to end with ';'"},
      {"ENT-PATCH::1,2:7\n:;", "command: expected printable ASCII, got byte 0x0A"},
      {"ENT-PATCH::1,2:7:\x1b[2J;", "command: expected printable ASCII, got byte 0x1B"},
      {"ENT-PATCH::\"1,2:7:;", "command: a double quote is not closed"},
      {"ENT-PATCH::1,2;", "ctag: expected VERB:TID:AID:CTAG, got 3 block(s)"},
      {"ENT-PATCH::1,2:7:a:b:c;", "command: expected at most one payload block"},
      {":::7:;", "verb: expected 1 to 3 words"},
      {"1ENT::1:7:;", "verb: expected 1 to 3 words"},
      {"ENT--PATCH::1:7:;", "verb: expected 1 to 3 words"},
      {"ENT-PATCH-X-Y::1:7:;", "verb: expected 1 to 3 words"},
      {"ENT-PATCH-::1:7:;", "verb: expected 1 to 3 words"},
      {"ENT PATCH::1:7:;", "verb: expected 1 to 3 words"},
      {"ENT-PATCH:OCS 1:1:7:;", "tid: expected at most 20 letters"},
      {"ENT-PATCH:ABCDEFGHIJKLMNOPQRSTU:1:7:;", "tid: expected at most 20 letters"},
      {"ENT-PATCH::1 2:7:;", "aid: expected letters, digits"},
      {"ENT-PATCH::1,2::;", "ctag: expected 1 to 6 letters or digits, got ''"},
      {"ENT-PATCH::1,2:1234567:;", "ctag: expected 1 to 6 letters or digits"},
      {"ENT-PATCH::1,2:7-1:;", "ctag: expected 1 to 6 letters or digits"},
      {"ENT-PATCH::1,2:7:A B;", "general block: expected letters"},
      {"ACT-USER::admin:7::pass word;", "parameter 1: expected printable text"},
      {"ACT-USER::admin:7::a,b\"c\";", "parameter 2: expected printable text"},
  };
  for (const auto& c : cases) {
    const std::string message = error_text([&] { parse_tl1_command(c.text); });
    EXPECT_EQ(message.rfind(c.field, 0), 0u) << c.text << " -> " << message;
  }
  EXPECT_NE(error_text([&] {
              parse_tl1_command(std::string(kMaxTl1CommandBytes + 1, 'A'));
            }).find("command: expected at most 4096 bytes"),
            std::string::npos);
}

TEST(Tl1Command, FormatRefusesWhatWouldNotReadBack) {
  Tl1Command command{"ENT-PATCH", "", "1,2", "7", "", {}};
  EXPECT_EQ(format_tl1_command(command), "ENT-PATCH::1,2:7:;");
  command.verb = "ent-patch";
  EXPECT_EQ(error_text([&] { format_tl1_command(command); }).rfind("verb: expected upper case", 0),
            0u);
  command.verb = "ENT-PATCH";
  command.ctag = "";
  EXPECT_EQ(error_text([&] { format_tl1_command(command); }).rfind("ctag:", 0), 0u);
  command.ctag = "7";
  command.parameters = {""};
  EXPECT_EQ(error_text([&] { format_tl1_command(command); }).rfind("parameter 1:", 0), 0u);
  command.parameters = {"a;b"};
  EXPECT_EQ(error_text([&] { format_tl1_command(command); }).rfind("parameter 1:", 0), 0u);
}

TEST(Tl1CommandReader, FramesCommandsAcrossChunksAndQuotes) {
  Tl1CommandReader reader;
  reader.feed("\r\n  ENT-PATCH::1,2:7:;DLT-PA");
  reader.feed("TCH::1:8:;\nACT-USER::u:9::\"a;b\"");
  EXPECT_EQ(reader.next_text(), "ENT-PATCH::1,2:7:;");
  EXPECT_EQ(reader.next()->aid, "1");
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_GT(reader.pending_bytes(), 0u);
  reader.feed(";");
  EXPECT_EQ(reader.next()->parameters, std::vector<std::string>{"\"a;b\""});
  EXPECT_EQ(reader.pending_bytes(), 0u);
}

TEST(Tl1CommandReader, RefusesACommandTooLongAndGoesOnAfterItsSemicolon) {
  Tl1CommandReader reader;
  reader.feed("RTRV-PATCH:::1:;");
  const std::string message = error_text(
      [&] { reader.feed(std::string(kMaxTl1CommandBytes + 10, 'A') + "x;RTRV-PATCH:::2:;"); });
  EXPECT_EQ(message.rfind("command: expected ';' within 4096 bytes", 0), 0u) << message;
  EXPECT_EQ(reader.next()->ctag, "1");
  EXPECT_EQ(reader.next()->ctag, "2");
  EXPECT_FALSE(reader.next().has_value());
  // A malformed command is taken off the queue: the next one still reads.
  reader.feed("BAD VERB:::3:;RTRV-PATCH:::4:;");
  EXPECT_EQ(error_text([&] { reader.next(); }).rfind("verb:", 0), 0u);
  EXPECT_EQ(reader.next()->ctag, "4");
}

// --- output messages ---

Tl1Response patches_response() {
  Tl1Response r;
  r.sid = "POLATIS";
  r.date = "26-11-26";
  r.time = "13:44:05";
  r.ctag = "12";
  r.lines = {"1,2", "3,17"};
  return r;
}

TEST(Tl1Response, WritesTheGr831Layout) {
  EXPECT_EQ(format_tl1_response(patches_response()),
            "\r\n\n   POLATIS 26-11-26 13:44:05\r\nM  12 COMPLD\r\n   \"1,2\"\r\n   \"3,17\"\r\n;");
  Tl1Response deny = patches_response();
  deny.completion = Tl1Completion::Deny;
  deny.error_code = "IIAC";
  deny.lines.clear();
  deny.comment = "Invalid AID";
  EXPECT_EQ(format_tl1_response(deny),
            "\r\n\n   POLATIS 26-11-26 13:44:05\r\nM  12 DENY\r\n   IIAC\r\n   /* Invalid AID "
            "*/\r\n;");
  EXPECT_EQ(format_tl1_acknowledgment({"IP", "12"}), "IP 12\r\n<");
}

TEST(Tl1Response, ReadsBackWhatItWrites) {
  std::vector<Tl1Message> messages;
  messages.emplace_back(patches_response());
  Tl1Response odd = patches_response();
  odd.sid = "OCS \\ one";  // written quoted
  odd.completion = Tl1Completion::Rtrv;
  odd.lines = {"", "say \"hi\" \\ there", "  spaced  "};
  odd.comment = "a */ b";
  odd.continued = true;
  messages.emplace_back(odd);
  Tl1Response deny = patches_response();
  deny.completion = Tl1Completion::Deny;
  deny.error_code = "SNVS";
  deny.lines = {"3:STATUS=FAILED"};
  messages.emplace_back(deny);
  messages.emplace_back(Tl1Acknowledgment{"IP", "A1"});
  messages.emplace_back(Tl1AutonomousMessage{
      "OCS-1", "26-01-02", "00:00:60", "*C", "17", "REPT ALM EQPT", {"3:STATUS=FAILED"}, "power"});
  messages.emplace_back(
      Tl1AutonomousMessage{"OCS-1", "26-01-02", "23:59:59", "*", "1.2", "REPT", {}, ""});
  for (const Tl1Message& m : messages) {
    const std::string text = format_tl1_message(m);
    EXPECT_EQ(parse_tl1_message(text), m) << text;
  }
}

TEST(Tl1Response, ReadsAnOcsThatWritesLooserSpacingAndLineEnds) {
  const Tl1Message m = parse_tl1_message(
      "\n\n \"Polatis 1\"   26-11-26  13:44:05\nM 12   DENY\n\tSNVS\n/* a */\n/* b */\n\n;\r\n");
  const auto& r = std::get<Tl1Response>(m);
  EXPECT_EQ(r.sid, "Polatis 1");
  EXPECT_EQ(r.completion, Tl1Completion::Deny);
  EXPECT_EQ(r.error_code, "SNVS");
  EXPECT_EQ(r.comment, "a b");
}

TEST(Tl1Response, RefusesEachMalformedPartByName) {
  const std::string h = "\r\n\n   OCS 26-11-26 13:44:05\r\n";
  const struct {
    std::string text;
    const char* field;
  } cases[] = {
      {"", "message: expected a TL1 message"},
      {h + "M  1 COMPLD\r\n", "message: expected the message to end with a line ';' or '>'"},
      {h + ";", "message: expected a header line and an identification line"},
      {h + "M  1 COMPLD\r\n;junk", "message: expected the message to end with a line"},
      {h + "M  1 COMPLD\r\n;\r\njunk", "message: expected nothing after the terminator"},
      {"\r\n\nOCS 26-11-26 13:44:05\r\nM  1 COMPLD\r\n;", "header: expected '   SID"},
      {"\r\n\n   OCS 26-13-26 13:44:05\r\nM  1 COMPLD\r\n;", "header: expected the date"},
      {"\r\n\n   OCS 26-11-26 24:44:05\r\nM  1 COMPLD\r\n;", "header: expected the time"},
      {"\r\n\n   OCS 26-11-26\r\nM  1 COMPLD\r\n;", "header: expected '   SID"},
      {"\r\n\n   \"OCS 26-11-26 13:44:05\r\nM  1 COMPLD\r\n;", "header: the quoted source"},
      {"\r\n\n   O\x01S 26-11-26 13:44:05\r\nM  1 COMPLD\r\n;", "header: expected a source"},
      {h + "M  1 DONE\r\n;", "identification: expected COMPLD, DENY"},
      {h + "M  1234567 COMPLD\r\n;", "ctag: expected 1 to 6"},
      {h + "M  1 COMPLD extra\r\n;", "identification: expected 'M  CTAG"},
      {h + "X  1 REPT\r\n;", "identification: expected 'M  CTAG COMPLETION' or"},
      {h + "*C  1 REPT ALM\r\n>", "message: expected an autonomous message to end with ';'"},
      {h + "A  1 rept\r\n;", "identification: expected a verb"},
      {h + "M  1 COMPLD\r\n   \"open\r\n;", "body line 3: expected a quoted line to end"},
      {h + "M  1 COMPLD\r\n   \"a\"b\"\r\n;", "body line 3: expected a quote inside"},
      {h + "M  1 COMPLD\r\n   \"a\\nb\"\r\n;", "body line 3: expected \\\" or \\\\"},
      {h + "M  1 COMPLD\r\n   \"a\x7f\"\r\n;", "body line 3: expected printable"},
      {h + "M  1 COMPLD\r\n   /* open\r\n;", "body line 3: expected a comment"},
      {h + "M  1 COMPLD\r\n   IIAC\r\n;",
       "body line 3: expected a quoted line \"...\", a comment /* ... */, got"},
      {h + "M  1 DENY\r\n   IIAC\r\n   SNVS\r\n;", "body line 4: expected"},
      {"IP\r\n<", "acknowledgment: expected 'CODE CTAG'"},
      {"XX 1\r\n<", "acknowledgment: expected 'CODE CTAG'"},
      {"IP 1", "message: expected the message to end with a line"},
      {"IP 1234567\r\n<", "ctag: expected 1 to 6"},
  };
  for (const auto& c : cases) {
    const std::string message = error_text([&] { parse_tl1_message(c.text); });
    EXPECT_EQ(message.rfind(c.field, 0), 0u) << c.text << " -> " << message;
  }
}

TEST(Tl1Response, FormatRefusesWhatWouldNotReadBack) {
  Tl1Response r = patches_response();
  r.error_code = "IIAC";
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("error code: expected no error", 0),
            0u);
  r = patches_response();
  r.lines = {"a\nb"};
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("line 1: expected printable", 0), 0u);
  r = patches_response();
  r.comment = " padded";
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("comment:", 0), 0u);
  r = patches_response();
  r.sid = "";
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("header:", 0), 0u);
  r = patches_response();
  r.date = "2026-11-26";
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("header: expected the date", 0), 0u);
  EXPECT_EQ(error_text([&] {
              format_tl1_acknowledgment({"XX", "1"});
            }).rfind("acknowledgment:", 0),
            0u);
}

TEST(Tl1Response, WhatFormatsAtTheLineBoundReadsBackAndOneByteMoreIsRefused) {
  // '   "TEXT"' is one line of at most kMaxTl1LineBytes; a quote inside is written \".
  Tl1Response r = patches_response();
  r.lines = {std::string(kMaxTl1LineBytes - 7, 'x') + "\""};
  const std::string text = format_tl1_response(r);
  EXPECT_EQ(parse_tl1_message(text), Tl1Message(r));
  Tl1ResponseReader reader;
  reader.feed(text);
  EXPECT_EQ(reader.next(), Tl1Message(r));
  r.lines[0] += "x";
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("line 1: expected printable", 0), 0u);
  r = patches_response();
  r.sid = std::string(65, 'S');
  EXPECT_EQ(error_text([&] { format_tl1_response(r); }).rfind("header: expected a source", 0), 0u);
  r.sid = std::string(64, 'S');
  EXPECT_EQ(parse_tl1_message(format_tl1_response(r)), Tl1Message(r));
}

// --- the incremental reader ---

// A stream of every kind of message, with the prompts and blank lines an OCS puts between them.
std::string sample_stream(std::vector<Tl1Message>& messages) {
  Tl1Response deny = patches_response();
  deny.ctag = "13";
  deny.completion = Tl1Completion::Deny;
  deny.error_code = "IIAC";
  deny.lines.clear();
  deny.comment = "port 99 does not exist";
  Tl1Response continued = patches_response();
  continued.completion = Tl1Completion::Rtrv;
  continued.continued = true;
  messages = {
      Tl1Acknowledgment{"IP", "12"}, patches_response(), continued, deny,
      Tl1AutonomousMessage{"OCS", "26-11-26", "13:44:06", "**", "5", "REPT ALM", {"x"}, ""}};
  std::string stream;
  for (const Tl1Message& m : messages)
    stream += format_tl1_message(m) + "\r\n<";
  return stream;
}

std::vector<Tl1Message> read_all(Tl1ResponseReader& reader) {
  std::vector<Tl1Message> out;
  while (std::optional<Tl1Message> m = reader.next())
    out.push_back(std::move(*m));
  return out;
}

TEST(Tl1ResponseReader, YieldsTheSameMessagesWhateverTheChunks) {
  std::vector<Tl1Message> expected;
  const std::string stream = sample_stream(expected);
  {
    Tl1ResponseReader reader;
    reader.feed(stream);
    EXPECT_EQ(read_all(reader), expected);
    EXPECT_EQ(reader.pending_bytes(), 0u);
  }
  {
    Tl1ResponseReader reader;
    std::vector<Tl1Message> got;
    for (const char c : stream) {
      reader.feed(std::string_view(&c, 1));
      for (Tl1Message& m : read_all(reader))
        got.push_back(std::move(m));
    }
    EXPECT_EQ(got, expected);
  }
  std::mt19937 rng(20261126);
  for (int trial = 0; trial < 50; ++trial) {
    Tl1ResponseReader reader;
    std::vector<Tl1Message> got;
    std::size_t at = 0;
    while (at < stream.size()) {
      const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
      reader.feed(std::string_view(stream).substr(at, n));
      at += n;
      for (Tl1Message& m : read_all(reader))
        got.push_back(std::move(m));
    }
    ASSERT_EQ(got, expected) << "trial " << trial;
  }
}

TEST(Tl1ResponseReader, HoldsAPartialMessageUntilItsTerminator) {
  Tl1ResponseReader reader;
  const std::string text = format_tl1_response(patches_response());
  reader.feed(text.substr(0, text.size() - 1));
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_EQ(reader.pending_bytes(), text.size() - 4);  // the leading CR LF LF are skipped
  reader.feed(";");
  EXPECT_EQ(reader.next(), Tl1Message(patches_response()));
}

TEST(Tl1ResponseReader, RefusesOversizeAndGarbageWithoutHoldingIt) {
  {
    Tl1ResponseReader reader;
    reader.feed("\r\n\n   OCS 26-11-26 13:44:05\r\nM  1 COMPLD\r\n   \"");
    const std::string message =
        error_text([&] { reader.feed(std::string(kMaxTl1LineBytes, 'x')); });
    EXPECT_EQ(message, "message: expected lines of at most 65536 bytes");
    EXPECT_EQ(reader.pending_bytes(), 0u);
  }
  {
    Tl1ResponseReader reader;
    const std::string line = "   \"" + std::string(1000, 'x') + "\"\r\n";
    std::string message;
    for (int k = 0; k < 2000 && message.empty(); ++k) {
      message =
          error_text([&] { reader.feed(k == 0 ? "\r\n\n   OCS 26-11-26 13:44:05\r\n" : line); });
    }
    EXPECT_EQ(message, "message: expected messages of at most 1048576 bytes");
    EXPECT_EQ(reader.pending_bytes(), 0u);
  }
  {
    Tl1ResponseReader reader;
    EXPECT_EQ(error_text([&] {
                reader.feed("IP " + std::string(100, '1'));
              }).rfind("message: expected an acknowledgment 'CODE CTAG' and '<' within 64", 0),
              0u);
  }
  {
    // A complete message stays queued; the garbage after it is refused.
    Tl1ResponseReader reader;
    const std::string message = error_text(
        [&] { reader.feed(format_tl1_response(patches_response()) + "\r\n\x01\x02 binary"); });
    EXPECT_EQ(message.rfind("message: expected a response, an acknowledgment or an autonomous "
                            "message, got '\\x01' between messages",
                            0),
              0u)
        << message;
    EXPECT_EQ(reader.next(), Tl1Message(patches_response()));
    EXPECT_FALSE(reader.next().has_value());
  }
  {
    // A malformed message is taken off the queue; the next still reads.
    Tl1ResponseReader reader;
    reader.feed("\r\n\n   OCS 26-11-26 13:44:05\r\nM  1 MAYBE\r\n;" +
                format_tl1_acknowledgment({"IP", "2"}));
    EXPECT_EQ(error_text([&] { reader.next(); }).rfind("identification:", 0), 0u);
    EXPECT_EQ(reader.next(), Tl1Message(Tl1Acknowledgment{"IP", "2"}));
  }
}

// --- Polatis content ---

TEST(Tl1Polatis, ReadsPatchesIntoAnOcsConfiguration) {
  const auto patches = parse_patches(patches_response());
  EXPECT_EQ(patches, (std::vector<std::pair<int, int>>{{1, 2}, {3, 17}}));
  const control::OcsConfiguration config = configuration_of_patches(patches, 20);
  EXPECT_EQ(config.peer(0), 1);
  EXPECT_EQ(config.peer(16), 2);
  EXPECT_EQ(config.connections(), (std::vector<std::pair<int, int>>{{0, 1}, {2, 16}}));
  EXPECT_EQ(format_patch_line(3, 17), "3,17");
  EXPECT_EQ(error_text([&] {
              configuration_of_patches(patches, 16);
            }).rfind("patches: patch 3,17 is outside the OCS's ports 1 to 16", 0),
            0u);
}

TEST(Tl1Polatis, RefusesABadPatchLineByNumber) {
  for (const char* line : {"1", "1,", ",2", "1,1", "0,2", "1,2,3", "a,2", "1, 2", "1,99999999"}) {
    Tl1Response r = patches_response();
    r.lines = {"5,6", line};
    EXPECT_EQ(error_text([&] { parse_patches(r); }).rfind("patch 2: expected 'A,B'", 0), 0u)
        << line;
  }
  Tl1Response r = patches_response();
  r.lines = {"5,6", "7,5"};
  EXPECT_EQ(error_text([&] { parse_patches(r); }),
            "patch 2: port 5 is already in an earlier patch ('7,5')");
}

TEST(Tl1Polatis, ReadsPortStatus) {
  Tl1Response r = patches_response();
  r.lines = {format_port_status_line({1, PortState::InService}), "2:STATUS=OOS",
             "3:POWER=-3.5,STATUS=FAILED"};
  EXPECT_EQ(r.lines[0], "1:STATUS=IS");
  EXPECT_EQ(parse_port_status(r),
            (std::vector<PortStatus>{
                {1, PortState::InService}, {2, PortState::OutOfService}, {3, PortState::Failed}}));
  for (const char* line : {"1", "1:", "x:STATUS=IS", "1:STATUS=UP", "1:POWER=1",
                           "1:STATUS=IS,STATUS=IS", "1:=IS", "1:STATUS=IS,"}) {
    r.lines = {line};
    EXPECT_EQ(error_text([&] { parse_port_status(r); }).rfind("port status 1: expected", 0), 0u)
        << line;
  }
}

}  // namespace
}  // namespace mfabric::tl1
