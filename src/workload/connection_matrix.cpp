#include "workload/connection_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
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

// A trigger while the file is read: its declaration and its barrier count.
struct Trigger {
  CmTrigger trigger;
  std::int64_t count = 1;  // barrier: flows that must finish
};

class Parser {
 public:
  Parser(std::string source, std::size_t text_bytes, Bytes max_memory)
      : source_(std::move(source)),
        text_bytes_(static_cast<std::int64_t>(text_bytes)),
        max_memory_(max_memory) {}

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

  ConnectionMatrix parse(std::string_view text) {
    std::optional<std::int64_t> connections, trigger_count;
    // Line by line in place: the text is not copied.
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      const std::string_view raw = text.substr(0, end);
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
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
        // The count is known before the flows: a matrix too large is refused before they are read.
        const std::int64_t flows =
            std::max(*connections, static_cast<std::int64_t>(cm_.flows.size()));
        const std::int64_t bytes = estimate_connection_matrix_memory(flows, 0, text_bytes_);
        if (bytes > max_memory_.count()) {
          throw Error(source_, "Connections",
                      fmt::format("{} flows need an estimated {} of memory (about {} bytes "
                                  "each), more than the limit of {}; {}",
                                  flows, to_string(Bytes(bytes)), kCmBytesPerFlow,
                                  to_string(max_memory_), kRaiseTheLimit));
        }
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
    // What the flows read so far will take, counting a dependency per trigger they name (at
    // least what their triggers make: connection_matrix_graph): reading stops at the flow that
    // passes the limit.
    dependency_bound_ += static_cast<std::int64_t>(f.fires.size()) + (f.trigger != 0 ? 1 : 0);
    const auto flows = static_cast<std::int64_t>(cm_.flows.size()) + 1;
    const std::int64_t bytes =
        estimate_connection_matrix_memory(flows, dependency_bound_, text_bytes_);
    if (bytes > max_memory_.count()) {
      fail(
          fmt::format("the matrix needs more memory than the limit of {}: an estimated {} for "
                      "its first {} flows (about {} bytes each, {} per dependency, and the "
                      "file's {}); {}",
                      to_string(max_memory_), to_string(Bytes(bytes)), flows, kCmBytesPerFlow,
                      kCmBytesPerDependency, to_string(Bytes(text_bytes_)), kRaiseTheLimit));
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
    t.trigger.id = id;
    t.trigger.line = line_;
    if (words[3] == "oneshot" && words.size() == 4) {
      t.trigger.barrier = false;
    } else if (words[3] == "barrier" && words.size() == 5) {
      t.trigger.barrier = true;
      t.count = integer(words[4], "the barrier's count", 1, std::int64_t{1} << 40);
    } else if (words[3] == "multishot") {
      fail("multishot triggers are not supported (a flow would start again each time it fires)");
    } else {
      fail("expected 'trigger id ID oneshot' or 'trigger id ID barrier COUNT'");
    }
    if (!triggers_.emplace(id, std::move(t)).second) {
      fail(fmt::format("trigger {} is declared twice (first on line {})", id,
                       triggers_.at(id).trigger.line));
    }
  }

  // Finds each trigger's firing and waiting flows and checks that it fires exactly as a set of
  // dependencies would; counts the dependencies and tasks the graph will have.
  void resolve_triggers() {
    for (std::size_t i = 0; i < cm_.flows.size(); ++i) {
      const CmFlow& f = cm_.flows[i];
      for (std::int64_t id : f.fires)
        declared(id, f.line).trigger.fired_by.push_back(i);
      if (f.trigger != 0) declared(f.trigger, f.line).trigger.waiting.push_back(i);
    }
    for (const auto& [id, t] : triggers_) {
      line_ = t.trigger.line;
      const auto n = static_cast<std::int64_t>(t.trigger.fired_by.size());
      if (n == 0)
        fail(fmt::format("trigger {} is never fired: no flow names it as a done trigger", id));
      if (!t.trigger.barrier && n != 1) {
        fail(
            fmt::format("oneshot trigger {} is fired by {} flows; it would fire at the first to "
                        "finish, which mfabric does not model (use 'barrier {}' to wait for all)",
                        id, n, n));
      }
      if (t.trigger.barrier && n != t.count) {
        fail(fmt::format("barrier trigger {} waits for {} flows but {} flows fire it", id, t.count,
                         n));
      }
    }
    line_ = 0;
    cm_.tasks = static_cast<std::int64_t>(cm_.flows.size());
    cm_.triggers.reserve(triggers_.size());
    for (auto& [id, t] : triggers_) {
      CmTrigger& trigger = cm_.triggers.emplace_back(std::move(t.trigger));
      const auto fired = static_cast<std::int64_t>(trigger.fired_by.size());
      const auto waiting = static_cast<std::int64_t>(trigger.waiting.size());
      // Without a task of its own, each waiting flow depends on each firing flow; one side is
      // then a single flow (is_task()), so this too is at most fired + waiting.
      cm_.dependencies += trigger.is_task() ? fired + waiting : fired * waiting;
      cm_.tasks += trigger.is_task() ? 1 : 0;
      const auto index = static_cast<std::int32_t>(cm_.triggers.size() - 1);
      for (std::size_t w : trigger.waiting)
        cm_.flows[w].waits_on = index;
    }
    triggers_.clear();
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

  static constexpr const char* kRaiseTheLimit =
      "raise simulation.max_memory (or --max-memory) to run it anyway";

  std::string source_;
  std::int64_t text_bytes_ = 0;
  Bytes max_memory_;
  int line_ = 0;
  ConnectionMatrix cm_;
  std::int64_t dependency_bound_ = 0;     // triggers named by the flows read so far
  std::map<std::int64_t, int> flow_ids_;  // id -> line
  std::map<std::int64_t, Trigger> triggers_;
};

}  // namespace

std::span<const std::size_t> ConnectionMatrix::waits_for(std::size_t flow) const {
  const std::int32_t t = flows[flow].waits_on;
  if (t < 0) return {};
  return triggers[static_cast<std::size_t>(t)].fired_by;
}

std::int64_t estimate_connection_matrix_memory(std::int64_t flows, std::int64_t dependencies,
                                               std::int64_t text_bytes) {
  return flows * kCmBytesPerFlow + dependencies * kCmBytesPerDependency + text_bytes;
}

ConnectionMatrix parse_connection_matrix(const std::string& text, const std::string& source,
                                         Bytes max_memory) {
  return Parser(source, text.size(), max_memory).parse(text);
}

ConnectionMatrix read_connection_matrix(const std::string& path, Bytes max_memory) {
  return parse_connection_matrix(
      read_text_file(path, "connection matrix", "an htsim connection matrix (docs/formats.md)"),
      path, max_memory);
}

TaskGraph connection_matrix_graph(const ConnectionMatrix& cm, const std::string& source) {
  TaskGraph g(cm.nodes);
  // Flows in an order where each comes after the flows it waits for (Kahn's algorithm over the
  // triggers: a flow is ready once every firing of its trigger is done), the file's order among
  // flows that become ready together, each trigger task just before the flows it releases. A
  // cycle of triggers is an error.
  const std::size_t n = cm.flows.size();
  std::vector<std::int32_t> fires_of_flow;  // trigger indices each flow fires, in compressed rows
  std::vector<std::size_t> fires_begin(n + 1, 0);
  std::map<std::int64_t, std::int32_t> index_of_trigger;
  for (std::size_t t = 0; t < cm.triggers.size(); ++t)
    index_of_trigger.emplace(cm.triggers[t].id, static_cast<std::int32_t>(t));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::int64_t id : cm.flows[i].fires)
      fires_of_flow.push_back(index_of_trigger.at(id));
    fires_begin[i + 1] = fires_of_flow.size();
  }
  std::vector<std::size_t> missing(cm.triggers.size());
  for (std::size_t t = 0; t < cm.triggers.size(); ++t)
    missing[t] = cm.triggers[t].fired_by.size();
  // Entries of `order`: a flow index, or kTriggerTask + a trigger index.
  constexpr std::size_t kTriggerTask = std::size_t{1} << 62;
  std::vector<std::size_t> order;
  order.reserve(static_cast<std::size_t>(cm.tasks));
  for (std::size_t i = 0; i < n; ++i) {
    if (cm.flows[i].waits_on < 0) order.push_back(i);
  }
  std::vector<std::size_t> released;
  for (std::size_t head = 0; head < order.size(); ++head) {
    if (order[head] >= kTriggerTask) continue;
    const std::size_t f = order[head];
    released.clear();
    for (std::size_t k = fires_begin[f]; k < fires_begin[f + 1]; ++k) {
      const auto t = static_cast<std::size_t>(fires_of_flow[k]);
      if (--missing[t] > 0) continue;
      const CmTrigger& trigger = cm.triggers[t];
      if (trigger.is_task()) order.push_back(kTriggerTask + t);
      released.insert(released.end(), trigger.waiting.begin(), trigger.waiting.end());
    }
    std::sort(released.begin(), released.end());
    order.insert(order.end(), released.begin(), released.end());
  }
  if (order.size() != static_cast<std::size_t>(cm.tasks)) {
    for (const CmFlow& f : cm.flows) {
      if (f.waits_on >= 0 && missing[static_cast<std::size_t>(f.waits_on)] > 0) {
        throw Error(
            source, fmt::format("line {}", f.line),
            fmt::format("flow id {} waits on a cycle of triggers and can never start", f.id));
      }
    }
  }
  std::vector<TaskId> task_of(n, -1);
  std::vector<TaskId> task_of_trigger(cm.triggers.size(), -1);
  std::vector<TaskId> deps;
  const auto fired_tasks = [&](const CmTrigger& trigger) {
    deps.clear();
    for (std::size_t w : trigger.fired_by)
      deps.push_back(task_of[w]);
  };
  for (std::size_t entry : order) {
    if (entry >= kTriggerTask) {
      const std::size_t t = entry - kTriggerTask;
      const CmTrigger& trigger = cm.triggers[t];
      // Zero bytes on one GPU: the lowering has nothing to send, so it finishes as it starts.
      Task barrier;
      barrier.kind = TaskKind::Collective;
      barrier.collective = CollectiveKind::Barrier;
      barrier.traffic = Traffic::None;
      barrier.set_group(g.add_group({cm.flows[trigger.waiting.front()].src}));
      barrier.iteration = 0;
      fired_tasks(trigger);
      task_of_trigger[t] = g.add(barrier, deps);
      continue;
    }
    const CmFlow& f = cm.flows[entry];
    Task t;
    t.kind = TaskKind::P2P;
    t.traffic = Traffic::Other;
    t.set_gpu(f.src);
    t.set_peer(f.dst);
    t.set_bytes(f.size);
    t.iteration = 0;
    deps.clear();
    if (f.waits_on >= 0) {
      const auto w = static_cast<std::size_t>(f.waits_on);
      if (cm.triggers[w].is_task()) {
        deps.push_back(task_of_trigger[w]);
      } else {
        fired_tasks(cm.triggers[w]);
      }
    }
    task_of[entry] = g.add(t, deps);
    g.set_source_id(task_of[entry], f.id);
    if (f.start != Time::max() && f.start > Time::zero()) g.set_not_before(task_of[entry], f.start);
  }
  return g;
}

}  // namespace mfabric::workload
