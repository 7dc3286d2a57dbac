#include "workload/connection_matrix.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/input_files.h"

namespace mfabric::workload {

namespace {

// The largest node count a file may declare: far above any cluster mfabric builds.
constexpr std::int64_t kMaxNodes = 1 << 24;
// The largest start time, in microseconds (about 11.6 days): keeps picoseconds far inside 64
// bits.
constexpr double kMaxStartUs = 1e12;

struct Trigger {
  enum class Kind { Oneshot, Barrier } kind = Kind::Oneshot;
  std::int64_t count = 1;  // Barrier: flows that must finish
  int line = 0;
  std::vector<std::size_t> fired_by;  // flows (indices) that name it as a done trigger
  std::vector<std::size_t> waiting;   // flows that start when it fires
};

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& expectation) const {
    throw Error(source_, fmt::format("line {}", line_), expectation);
  }

  std::int64_t integer(std::string_view word, const char* what, std::int64_t min,
                       std::int64_t max) const {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc{} || end != word.data() + word.size() || v < min || v > max) {
      fail(fmt::format("{} must be a whole number from {} to {}, got '{}'", what, min, max, word));
    }
    return v;
  }

  Time start_time(std::string_view word) const {
    double us = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), us);
    if (ec != std::errc{} || end != word.data() + word.size() || !(us >= 0) || us > kMaxStartUs) {
      fail(fmt::format("start must be a time in microseconds from 0 to {:g}, got '{}'", kMaxStartUs,
                       word));
    }
    return Time::picoseconds(static_cast<std::int64_t>(std::llround(us * 1e6)));
  }

  ConnectionMatrix parse(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    std::optional<std::int64_t> connections, trigger_count;
    while (std::getline(in, raw)) {
      ++line_;
      std::vector<std::string_view> words = split(raw);
      if (words.empty() || words[0].front() == '#') continue;
      const std::string_view head = words[0];
      if (head == "Nodes" || head == "Nodes:") {
        expect_words(words, 2, "'Nodes COUNT'");
        if (cm_.nodes > 0) fail("Nodes is given twice");
        cm_.nodes = static_cast<int>(integer(words[1], "Nodes", 1, kMaxNodes));
      } else if (head == "Connections" || head == "Connections:") {
        expect_words(words, 2, "'Connections COUNT'");
        connections = integer(words[1], "Connections", 0, std::int64_t{1} << 40);
      } else if (head == "Triggers" || head == "Triggers:") {
        expect_words(words, 2, "'Triggers COUNT'");
        trigger_count = integer(words[1], "Triggers", 0, std::int64_t{1} << 40);
      } else if (head == "trigger") {
        parse_trigger(words);
      } else if (head.find("->") != std::string_view::npos) {
        parse_flow(words);
      } else if (head == "Grp") {
        fail("htsim's broadcast groups (Grp) are not supported: give the broadcast's flows");
      } else {
        fail(
            fmt::format("expected 'Nodes', 'Connections', 'Triggers', a flow 'SRC->DST id ...' "
                        "or 'trigger id ...', got '{}'",
                        head));
      }
    }
    line_ = 0;
    if (cm_.nodes == 0) throw Error(source_, "Nodes", "expected a 'Nodes COUNT' line");
    if (connections && *connections != static_cast<std::int64_t>(cm_.flows.size())) {
      throw Error(source_, "Connections",
                  fmt::format("says {} flows but the file has {}", *connections, cm_.flows.size()));
    }
    if (trigger_count && *trigger_count != static_cast<std::int64_t>(triggers_.size())) {
      throw Error(source_, "Triggers",
                  fmt::format("says {} triggers but the file declares {}", *trigger_count,
                              triggers_.size()));
    }
    resolve_triggers();
    return std::move(cm_);
  }

 private:
  static std::vector<std::string_view> split(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        ++i;
      const std::size_t from = i;
      while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
        ++i;
      if (i > from) out.push_back(s.substr(from, i - from));
    }
    return out;
  }

  void expect_words(const std::vector<std::string_view>& words, std::size_t n,
                    const char* form) const {
    if (words.size() != n) fail(fmt::format("expected {}", form));
  }

  void parse_flow(const std::vector<std::string_view>& words) {
    if (cm_.nodes == 0) fail("a flow before the 'Nodes COUNT' line");
    const std::string_view pair = words[0];
    const std::size_t arrow = pair.find("->");
    CmFlow f;
    f.line = line_;
    f.src = static_cast<int>(integer(pair.substr(0, arrow), "the source node", 0, cm_.nodes - 1));
    f.dst =
        static_cast<int>(integer(pair.substr(arrow + 2), "the destination node", 0, cm_.nodes - 1));
    bool has_id = false, has_size = false;
    for (std::size_t i = 1; i < words.size(); i += 2) {
      const std::string_view key = words[i];
      if (i + 1 >= words.size()) fail(fmt::format("'{}' has no value", key));
      const std::string_view value = words[i + 1];
      if (key == "id") {
        f.id = integer(value, "id", 1, std::numeric_limits<std::int64_t>::max());
        has_id = true;
      } else if (key == "start") {
        f.start = start_time(value);
      } else if (key == "size") {
        f.size = Bytes(integer(value, "size (bytes)", 0, kMaxTransferBytes));
        has_size = true;
      } else if (key == "trigger") {
        f.trigger = integer(value, "trigger", 1, std::numeric_limits<std::int64_t>::max());
      } else if (key == "send_done_trigger" || key == "recv_done_trigger") {
        f.fires.push_back(
            integer(value, std::string(key).c_str(), 1, std::numeric_limits<std::int64_t>::max()));
      } else if (key == "priority") {
        integer(value, "priority", std::numeric_limits<std::int64_t>::min(),
                std::numeric_limits<std::int64_t>::max());  // htsim's queue class: no effect here
      } else if (key == "start_bcast") {
        fail("htsim's broadcast flows (start_bcast) are not supported: give the broadcast's flows");
      } else {
        fail(
            fmt::format("unknown flow attribute '{}' (known: id, start, size, trigger, "
                        "send_done_trigger, recv_done_trigger, priority)",
                        key));
      }
    }
    if (!has_id) fail("a flow needs 'id N'");
    if (!has_size) fail("a flow needs 'size BYTES'");
    if (f.start != Time::max() && f.trigger != 0) {
      fail("a flow starts at a time ('start') or when a trigger fires ('trigger'), not both");
    }
    if (f.start == Time::max() && f.trigger == 0) {
      fail("a flow needs 'start MICROSECONDS' or 'trigger ID'");
    }
    if (!flow_ids_.emplace(f.id, line_).second) {
      fail(fmt::format("flow id {} is used twice (first on line {})", f.id, flow_ids_[f.id]));
    }
    cm_.flows.push_back(std::move(f));
  }

  void parse_trigger(const std::vector<std::string_view>& words) {
    if (words.size() < 4 || words[1] != "id") {
      fail("expected 'trigger id ID oneshot' or 'trigger id ID barrier COUNT'");
    }
    const std::int64_t id =
        integer(words[2], "trigger id", 1, std::numeric_limits<std::int64_t>::max());
    Trigger t;
    t.line = line_;
    if (words[3] == "oneshot" && words.size() == 4) {
      t.kind = Trigger::Kind::Oneshot;
    } else if (words[3] == "barrier" && words.size() == 5) {
      t.kind = Trigger::Kind::Barrier;
      t.count = integer(words[4], "the barrier's count", 1, std::int64_t{1} << 40);
    } else if (words[3] == "multishot") {
      fail("multishot triggers are not supported (a flow would start again each time it fires)");
    } else {
      fail("expected 'trigger id ID oneshot' or 'trigger id ID barrier COUNT'");
    }
    if (!triggers_.emplace(id, std::move(t)).second) {
      fail(fmt::format("trigger {} is declared twice (first on line {})", id,
                       triggers_.at(id).line));
    }
  }

  // Turns triggers into dependencies between flows and checks that each fires exactly as a set
  // of dependencies would.
  void resolve_triggers() {
    for (std::size_t i = 0; i < cm_.flows.size(); ++i) {
      const CmFlow& f = cm_.flows[i];
      for (std::int64_t id : f.fires)
        declared(id, f.line).fired_by.push_back(i);
      if (f.trigger != 0) declared(f.trigger, f.line).waiting.push_back(i);
    }
    for (const auto& [id, t] : triggers_) {
      line_ = t.line;
      const auto n = static_cast<std::int64_t>(t.fired_by.size());
      if (n == 0)
        fail(fmt::format("trigger {} is never fired: no flow names it as a done trigger", id));
      if (t.kind == Trigger::Kind::Oneshot && n != 1) {
        fail(
            fmt::format("oneshot trigger {} is fired by {} flows; it would fire at the first to "
                        "finish, which mfabric does not model (use 'barrier {}' to wait for all)",
                        id, n, n));
      }
      if (t.kind == Trigger::Kind::Barrier && n != t.count) {
        fail(fmt::format("barrier trigger {} waits for {} flows but {} flows fire it", id, t.count,
                         n));
      }
      for (std::size_t w : t.waiting)
        cm_.flows[w].waits_for = t.fired_by;
    }
    line_ = 0;
  }

  Trigger& declared(std::int64_t id, int line) {
    const auto it = triggers_.find(id);
    if (it == triggers_.end()) {
      line_ = line;
      fail(fmt::format("trigger {} is not declared (expected a line 'trigger id {} oneshot')", id,
                       id));
    }
    return it->second;
  }

  std::string source_;
  int line_ = 0;
  ConnectionMatrix cm_;
  std::map<std::int64_t, int> flow_ids_;  // id -> line
  std::map<std::int64_t, Trigger> triggers_;
};

}  // namespace

ConnectionMatrix parse_connection_matrix(const std::string& text, const std::string& source) {
  return Parser(source).parse(text);
}

ConnectionMatrix read_connection_matrix(const std::string& path) {
  return parse_connection_matrix(
      read_text_file(path, "connection matrix", "an htsim connection matrix (docs/formats.md)"),
      path);
}

TaskGraph connection_matrix_graph(const ConnectionMatrix& cm, const std::string& source) {
  TaskGraph g(cm.nodes);
  // Flows in an order where each comes after the flows it waits for (Kahn's algorithm, the
  // file's order among flows that are ready together); a cycle of triggers is an error.
  const std::size_t n = cm.flows.size();
  std::vector<std::vector<std::size_t>> waiters(n);
  std::vector<std::size_t> missing(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    missing[i] = cm.flows[i].waits_for.size();
    for (std::size_t w : cm.flows[i].waits_for)
      waiters[w].push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (missing[i] == 0) order.push_back(i);
  }
  for (std::size_t head = 0; head < order.size(); ++head) {
    for (std::size_t w : waiters[order[head]]) {
      if (--missing[w] == 0) order.push_back(w);
    }
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i) {
      if (missing[i] > 0) {
        throw Error(source, fmt::format("line {}", cm.flows[i].line),
                    fmt::format("flow id {} waits on a cycle of triggers and can never start",
                                cm.flows[i].id));
      }
    }
  }
  std::vector<TaskId> task_of(n, -1);
  std::vector<TaskId> deps;
  for (std::size_t i : order) {
    const CmFlow& f = cm.flows[i];
    Task t;
    t.kind = TaskKind::P2P;
    t.traffic = Traffic::Other;
    t.gpu = f.src;
    t.peer = f.dst;
    t.bytes = f.size;
    t.iteration = 0;
    deps.clear();
    for (std::size_t w : f.waits_for)
      deps.push_back(task_of[w]);
    task_of[i] = g.add(t, deps);
    g.set_source_id(task_of[i], f.id);
    if (f.start != Time::max() && f.start > Time::zero()) g.set_not_before(task_of[i], f.start);
  }
  return g;
}

}  // namespace mfabric::workload
