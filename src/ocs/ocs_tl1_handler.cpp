#include "ocs/ocs_tl1_handler.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <ctime>

#include "core/error.h"
#include "core/output_text.h"

namespace mfabric::ocs {
namespace {

constexpr Time kMaxLoginLockout = Time::milliseconds(60000);
// Addresses with failed logins remembered before those no longer locked out are forgotten, so
// that many peers cannot grow the table without bound.
constexpr std::size_t kMaxTrackedAddresses = 4096;
// The CTAG of a reply to input that has none (it did not parse).
constexpr const char* kUnknownCtag = "0";

// The ports of an AID "A" or "A,B" (device numbers); nullopt when it is not 1 or 2 numbers.
std::optional<std::vector<int>> aid_ports(const std::string& aid, std::size_t min,
                                          std::size_t max) {
  std::vector<int> ports;
  std::size_t start = 0;
  while (start <= aid.size()) {
    const std::size_t comma = std::min(aid.find(',', start), aid.size());
    int value = 0;
    const char* first = aid.data() + start;
    const char* last = aid.data() + comma;
    const auto [end, ec] = std::from_chars(first, last, value);
    if (first == last || ec != std::errc() || end != last) return std::nullopt;
    ports.push_back(value);
    start = comma + 1;
  }
  if (ports.size() < min || ports.size() > max) return std::nullopt;
  return ports;
}

// A response's date and time stamp, UTC (what an OCS with its clock on UTC writes).
std::pair<std::string, std::string> stamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&t, &utc);
  char date[16];
  char time[16];
  std::strftime(date, sizeof date, "%y-%m-%d", &utc);
  std::strftime(time, sizeof time, "%H:%M:%S", &utc);
  return {date, time};
}

// A comment any TL1 reader takes: printable ASCII without the characters that could end or
// confuse it ('*', '/', '"', '\\'), at most 200 bytes. Error texts quote what peers sent.
std::string comment_text(const std::string& text) {
  constexpr std::size_t kMaxComment = 200;
  std::string out;
  for (const char c : text) {
    if (out.size() >= kMaxComment) break;
    const bool plain = c >= ' ' && c <= '~' && c != '*' && c != '/' && c != '"' && c != '\\';
    out += plain ? c : '?';
  }
  return out;
}

}  // namespace

OcsTl1Handler::OcsTl1Handler(OcsState* state, OcsJournal* journal,
                             std::map<std::string, std::string> users, Time switching,
                             std::string sid)
    : state_(state),
      journal_(journal),
      users_(std::move(users)),
      switching_(switching),
      sid_(std::move(sid)) {}

std::string OcsTl1Handler::response(const std::string& ctag, tl1::Tl1Completion completion,
                                    std::vector<std::string> lines) const {
  tl1::Tl1Response r;
  r.sid = sid_;
  std::tie(r.date, r.time) = stamp();
  r.ctag = ctag;
  r.completion = completion;
  r.lines = std::move(lines);
  return tl1::format_tl1_response(r);
}

std::string OcsTl1Handler::deny(const std::string& ctag, const std::string& code,
                                const std::string& text) const {
  tl1::Tl1Response r;
  r.sid = sid_;
  std::tie(r.date, r.time) = stamp();
  r.ctag = ctag;
  r.completion = tl1::Tl1Completion::Deny;
  r.error_code = code;
  r.comment = comment_text(text);
  return tl1::format_tl1_response(r);
}

std::string OcsTl1Handler::malformed(const std::string& error) {
  return deny(kUnknownCtag, tl1_code::kBadSyntax, printable(error));
}

OcsReply OcsTl1Handler::handle(const tl1::Tl1Command& command, OcsLogin* login,
                               const std::string& peer, bool can_wait, Time now) {
  const std::string& verb = command.verb;
  const std::string& ctag = command.ctag;
  if (verb == "ACT-USER") return log_in(command, login, peer, now);
  if (verb == "CANC-USER") {
    if (!login->active) return {deny(ctag, tl1_code::kNotLoggedIn, "not logged in"), {}, {}};
    *login = OcsLogin{};
    return {response(ctag, tl1::Tl1Completion::Compld), {}, {}};
  }
  const bool known = verb == "ENT-PATCH" || verb == "DLT-PATCH" || verb == "RTRV-PATCH" ||
                     verb == "RTRV-PORT-STATUS" || verb == "OPR-PORT-FAIL" ||
                     verb == "RLS-PORT-FAIL";
  if (!known) {
    return {deny(ctag, tl1_code::kUnknownVerb, fmt::format("unknown command {}", printable(verb))),
            {},
            {}};
  }
  if (!login->active) {
    return {deny(ctag, tl1_code::kNotLoggedIn, "log in first (ACT-USER)"), {}, {}};
  }

  const auto bad_aid = [&](const char* expected) {
    return OcsReply{
        deny(ctag, tl1_code::kInvalidPort,
             fmt::format("expected {} as the AID, got '{}'", expected, printable(command.aid))),
        {},
        {}};
  };
  if (verb == "RTRV-PATCH") {
    std::vector<std::string> lines;
    for (const OcsPatch& patch : state_->patches())
      lines.push_back(tl1::format_patch_line(patch.a, patch.b));
    return {response(ctag, tl1::Tl1Completion::Compld, std::move(lines)), {}, {}};
  }
  if (verb == "RTRV-PORT-STATUS") {
    std::vector<int> ports;
    if (command.aid.empty() || command.aid == "ALL") {
      for (int p = 1; p <= state_->ports(); ++p)
        ports.push_back(p);
    } else {
      const auto port = aid_ports(command.aid, 1, 1);
      if (!port) return bad_aid("a port number");
      if ((*port)[0] < 1 || (*port)[0] > state_->ports()) {
        return {deny(ctag, tl1_code::kInvalidPort,
                     fmt::format("port {} is not a port of this switch (1 to {})", (*port)[0],
                                 state_->ports())),
                {},
                {}};
      }
      ports = *port;
    }
    std::vector<std::string> lines;
    for (const int p : ports) {
      lines.push_back(tl1::format_port_status_line(
          {p, state_->failed(p) ? tl1::PortState::Failed : tl1::PortState::InService}));
    }
    return {response(ctag, tl1::Tl1Completion::Compld, std::move(lines)), {}, {}};
  }

  if (verb == "ENT-PATCH") {
    const auto ports = aid_ports(command.aid, 2, 2);
    if (!ports) return bad_aid("two port numbers 'A,B'");
    return change(command, {OcsChange::Kind::Connect, (*ports)[0], (*ports)[1]}, can_wait, now);
  }
  const auto ports = aid_ports(command.aid, 1, verb == "DLT-PATCH" ? 2 : 1);
  if (!ports)
    return bad_aid(verb == "DLT-PATCH" ? "a port number 'A' or a patch 'A,B'" : "a port number");
  const int a = (*ports)[0];
  if (verb == "DLT-PATCH") {
    if (ports->size() == 2 && a >= 1 && a <= state_->ports() && state_->peer(a) != (*ports)[1]) {
      return {deny(ctag, tl1_code::kNotConnected,
                   fmt::format("port {} is not connected to port {}", a, (*ports)[1])),
              {},
              {}};
    }
    return change(command, {OcsChange::Kind::Disconnect, a, 0}, can_wait, now);
  }
  return change(command,
                {verb == "OPR-PORT-FAIL" ? OcsChange::Kind::Fail : OcsChange::Kind::Repair, a, 0},
                can_wait, now);
}

OcsReply OcsTl1Handler::change(const tl1::Tl1Command& command, const OcsChange& change,
                               bool can_wait, Time now) {
  if (const auto refusal = state_->refusal(change, now))
    return {deny(command.ctag, refusal->code, refusal->text), {}, {}};
  if (!can_wait &&
      (change.kind == OcsChange::Kind::Connect || change.kind == OcsChange::Kind::Disconnect)) {
    return {deny(command.ctag, tl1_code::kTooManyPending,
                 "too many commands of this session are waiting for their mirrors"),
            {},
            {}};
  }
  // Recorded before made: a change the switch would forget in a crash is refused instead. The
  // caller flushes the journal before it sends the reply (a group commit).
  try {
    journal_->write(change);
  } catch (const Error& e) {
    return {deny(command.ctag, tl1_code::kNotRecorded, printable(e.what())), {}, {}};
  }
  const Time settled = state_->apply(change, now, switching_);
  try {
    journal_->compact_if_due(*state_);
  } catch (const Error&) {
    // The journal is whole without its snapshot (the rename never happened); the next change
    // tries again.
  }
  ++changes_;
  if (change.kind == OcsChange::Kind::Fail || change.kind == OcsChange::Kind::Repair) {
    return {response(command.ctag, tl1::Tl1Completion::Compld),
            {},
            {},
            port_alarm(change.a, change.kind == OcsChange::Kind::Fail)};
  }
  if (settled <= now) return {response(command.ctag, tl1::Tl1Completion::Compld), {}, {}};
  return {tl1::format_tl1_acknowledgment({"IP", command.ctag}), settled,
          response(command.ctag, tl1::Tl1Completion::Compld)};
}

std::string OcsTl1Handler::port_alarm(int port, bool failed) {
  tl1::Tl1AutonomousMessage alarm;
  alarm.sid = sid_;
  std::tie(alarm.date, alarm.time) = stamp();
  alarm.alarm_code = failed ? "*C" : "A";
  alarms_ = alarms_ >= 999'999 ? 1 : alarms_ + 1;
  alarm.atag = std::to_string(alarms_);
  alarm.verb = "REPT ALM PORT";
  alarm.lines = {tl1::format_port_status_line(
      {port, failed ? tl1::PortState::Failed : tl1::PortState::InService})};
  return tl1::format_tl1_autonomous(alarm);
}

void OcsTl1Handler::forget_expired_failures(Time now) {
  std::erase_if(failures_, [&](const auto& entry) { return entry.second.locked_until <= now; });
}

OcsReply OcsTl1Handler::log_in(const tl1::Tl1Command& command, OcsLogin* login,
                               const std::string& peer, Time now) {
  if (failures_.size() > kMaxTrackedAddresses) forget_expired_failures(now);
  LoginFailures& failures = failures_[peer];
  if (now < failures.locked_until) {
    return {deny(command.ctag, tl1_code::kBadLogin,
                 fmt::format("too many failed logins from this address; try again in {} ms",
                             (failures.locked_until - now).ps() / 1000000000 + 1)),
            {},
            {}};
  }
  const auto user = users_.find(command.aid);
  const bool ok = user != users_.end() && command.parameters.size() == 1 &&
                  command.parameters[0] == user->second;
  if (!ok) {
    ++failures.count;
    if (failures.count >= kFreeLoginFailures) {
      Time lockout = kFirstLoginLockout;
      for (int k = kFreeLoginFailures; k < failures.count && lockout < kMaxLoginLockout; ++k)
        lockout = lockout * 2;
      failures.locked_until = now + std::min(lockout, kMaxLoginLockout);
    }
    return {deny(command.ctag, tl1_code::kBadLogin, "unknown user or wrong password"), {}, {}};
  }
  failures_.erase(peer);
  *login = OcsLogin{true, command.aid};
  return {response(command.ctag, tl1::Tl1Completion::Compld), {}, {}};
}

}  // namespace mfabric::ocs
