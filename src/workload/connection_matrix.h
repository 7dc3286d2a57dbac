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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.h"
#include "workload/task_graph.h"

namespace mfabric::workload {

struct CmFlow {
  int src = -1;
  int dst = -1;
  std::int64_t id = 0;
  Time start = Time::max();  // Time::max(): waits for `trigger`
  Bytes size;
  std::int64_t trigger = 0;            // the trigger it waits for (0: none)
  std::vector<std::int64_t> fires;     // the triggers it fires when it finishes
  std::vector<std::size_t> waits_for;  // the flows (indices) whose finishing fires its trigger
  int line = 0;                        // for messages
};

struct ConnectionMatrix {
  int nodes = 0;
  std::vector<CmFlow> flows;  // in file order
};

// Parses and checks a connection matrix: mfabric::Error(path, "line N", expectation) for a
// malformed or unsupported line, and for triggers that are never declared or never fired.
ConnectionMatrix read_connection_matrix(const std::string& path);
// The same from text (`source` names it in messages).
ConnectionMatrix parse_connection_matrix(const std::string& text, const std::string& source);

// One P2P task per flow (traffic class Other), from GPU src to GPU dst (the graph has `nodes`
// GPUs), after the flows whose finishing fires its trigger, and not before its start time; its
// source id (TaskGraph::source_id, collectives.csv) is the flow's id.
// mfabric::Error(source, "line N", ...) for a flow on a cycle of triggers.
TaskGraph connection_matrix_graph(const ConnectionMatrix& cm, const std::string& source);

}  // namespace mfabric::workload
