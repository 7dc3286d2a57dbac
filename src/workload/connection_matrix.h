// htsim connection matrices (the `.cm` traffic files of htsim's datacenter tools) as workloads,
// so that the same traffic runs in both tools (docs/formats.md, "htsim connection matrix").
//
// A file is one directive per line:
//   Nodes 16                       hosts (htsim node i is GPU i of the cluster)
//   Connections 2                  flows (must match the flow lines)
//   Triggers 1                     triggers (optional; must match the trigger lines)
//   2->11 id 1 start 0 size 2000000 send_done_trigger 1
//   2->4 id 2 trigger 1 size 2000000
//   trigger id 1 oneshot           (or: barrier COUNT)
// `start` is in microseconds (decimals allowed), `size` in bytes. A flow starts at its `start`
// time, or when the trigger it names fires: a oneshot trigger fires when the one flow that names
// it in send_done_trigger or recv_done_trigger finishes; a barrier of COUNT fires when the COUNT
// flows that name it have all finished. A flow finishes when its last byte arrives, so
// send_done_trigger and recv_done_trigger both fire then (htsim fires send_done a path latency
// earlier, when the sender has its last ACK: documented in docs/formats.md).
//
// What mfabric cannot express is refused with the line that uses it: multishot triggers, a
// oneshot fired by several flows (it would fire at the first: an OR), a barrier whose count is
// not the number of flows that fire it, a flow with both `start` and `trigger` or with neither,
// htsim's broadcast flows (`start_bcast`) and groups (`Grp`). Lines starting with `#` and blank
// lines are skipped.
//
// Size: what the matrix and its task graph hold grows with the file (a trigger's dependencies
// are its firing flows plus its waiting flows, never their product), and a matrix whose estimate
// (kCmBytesPerFlow, kCmBytesPerDependency) is above the memory limit is refused before its graph
// is built.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/units.h"
#include "workload/task_graph.h"
#include "workload/training.h"

namespace mfabric::workload {

struct CmFlow {
  int src = -1;
  int dst = -1;
  std::int64_t id = 0;
  Time start = Time::max();  // Time::max(): waits for `trigger`
  Bytes size;
  std::int64_t trigger = 0;         // the trigger it waits for (0: none)
  std::vector<std::int64_t> fires;  // the triggers it fires when it finishes
  std::int32_t waits_on = -1;       // `trigger`'s index in ConnectionMatrix::triggers (-1: none)
  int line = 0;                     // for messages
};

struct CmTrigger {
  std::int64_t id = 0;
  bool barrier = false;  // `barrier COUNT`; otherwise `oneshot`
  int line = 0;          // its declaration, for messages
  // The flows (indices) that name it as a done trigger, in file order (a flow naming it twice is
  // here twice), and the flows that start when it fires.
  std::vector<std::size_t> fired_by;
  std::vector<std::size_t> waiting;
  // A barrier that several flows fire and several wait for is a task of its own in the graph
  // (connection_matrix_graph), so that its dependencies cost fired_by + waiting, not their
  // product.
  bool is_task() const { return fired_by.size() > 1 && waiting.size() > 1; }
};

struct ConnectionMatrix {
  int nodes = 0;
  std::vector<CmFlow> flows;        // in file order
  std::vector<CmTrigger> triggers;  // by id
  // The dependencies connection_matrix_graph() makes, and its tasks (a flow each, and a task for
  // each trigger with is_task()).
  std::int64_t dependencies = 0;
  std::int64_t tasks = 0;

  // The flows (indices) whose finishing fires flow i's trigger; empty for a flow with a start
  // time.
  std::span<const std::size_t> waits_for(std::size_t flow) const;
};

// What simulating a matrix holds, about, per flow (the parsed flow, its task, the engine's
// state, the network's state with every flow active at once, the recorded span and flow record)
// and per dependency (the parsed trigger lists, the graph's and the engine's rows); measured:
// docs/formats.md, "htsim connection matrix".
inline constexpr std::int64_t kCmBytesPerFlow = 800;
inline constexpr std::int64_t kCmBytesPerDependency = 32;
// The estimate for a matrix of these counts read from a file of `text_bytes` bytes.
std::int64_t estimate_connection_matrix_memory(std::int64_t flows, std::int64_t dependencies,
                                               std::int64_t text_bytes);

// Parses and checks a connection matrix: mfabric::Error(path, "line N", expectation) for a
// malformed or unsupported line, and for triggers that are never declared or never fired.
// mfabric::Error(path, field, ...) with the estimate when the matrix's estimated memory is above
// `max_memory` (the experiment's simulation.max_memory): field "Connections" when the header's
// count already says so, else "line N" of the flow at which the estimate for the flows read so
// far passes it (reading stops there).
ConnectionMatrix read_connection_matrix(const std::string& path,
                                        Bytes max_memory = Bytes(kDefaultMaxJobMemory));
// The same from text (`source` names it in messages).
ConnectionMatrix parse_connection_matrix(const std::string& text, const std::string& source,
                                         Bytes max_memory = Bytes(kDefaultMaxJobMemory));

// One P2P task per flow (traffic class Other), from GPU src to GPU dst (the graph has `nodes`
// GPUs), after the flows whose finishing fires its trigger, and not before its start time; its
// source id (TaskGraph::source_id, collectives.csv) is the flow's id. A trigger with is_task()
// is one more task between its firing and its waiting flows: a barrier collective of one GPU
// (the source of its first waiting flow), 0 bytes and traffic None, which finishes as soon as
// it starts and has no source id. Tasks are in an order where dependencies come first: the
// file's order among flows that are ready together, a trigger's task just before the flows it
// releases. mfabric::Error(source, "line N", ...) for a flow on a cycle of triggers.
TaskGraph connection_matrix_graph(const ConnectionMatrix& cm, const std::string& source);

}  // namespace mfabric::workload
