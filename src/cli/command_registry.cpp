// The commands of `mfabric`, one line each, in the order help lists them: by importance, the
// answer first (compare, simulate, sweep), then the pieces it is made of, then the operable half.
// A new command is cli/<name>_command.cpp with a register function plus a line here; the name and
// the one-line description here are the command's (main.cpp makes the subcommand from them).
#include "cli/commands.h"

namespace mfabric::cli {

CommandRegistry& commands() {
  static CommandRegistry registry(
      "command",
      {
          {"compare",
           "Run training jobs on several fabrics and link speeds: iteration time, tokens/s, "
           "network cost and performance per dollar relative to the fat-tree (no file: the paper's "
           "evaluation, its quick subset unless --full)",
           register_compare},
          {"simulate", "Run an experiment file: a workload on a fabric with a network backend",
           register_simulate},
          {"sweep",
           "Run one experiment over a grid of field values (alpha, reconfiguration delay, link "
           "speed, servers, model, ...): a point per combination, on threads, and on MPI ranks "
           "under mpirun (docs/sweep.md)",
           register_sweep},
          {"cost", "Bill of materials and network cost (CAPEX, US dollars) of one or more fabrics",
           register_cost},
          {"topology", "Build a fabric and show its nodes, links, tiers and regions",
           register_topology},
          {"fabrics", "List the fabric kinds and the parameters each accepts", register_fabrics},
          {"workload",
           "Build the task graph of an MoE training job (or read a Chakra trace) and summarise its "
           "tasks, traffic by parallelism and compute time",
           register_workload},
          {"models", "List the MoE models of the shipped zoo", register_models},
          {"kernel",
           "Time one op (expert FFN, dense GEMM, attention, MoE permutation) as the compute model "
           "sees it on a GPU; fit and check measured kernel tables",
           register_kernel},
          {"trace", "Write a synthetic expert-routing trace (--out) or summarise one (--stats)",
           register_trace},
          {"plan",
           "Plan one region's OCS circuits for a demand matrix: circuits, NICs, TL1 commands",
           register_plan},
          {"predict",
           "Score Copilot's demand prediction (layer l from layer l-1) against baselines on a "
           "routing trace (synthetic by default)",
           register_predict},
          {"ocs-emulator",
           "Run an emulated OCS (Polatis-style TL1 on TCP) whose cross-connects survive a crash",
           register_ocs_emulator},
          {"controller",
           "Run the region controller: a gRPC service that re-plans regions' circuits on one OCS",
           register_controller},
          {"moe-bench",
           "Run MoE layers on MPI ranks through the proxy all-to-all-v with real buffers, every "
           "token checked, against MPI_Alltoallv (under mpirun)",
           register_moe_bench},
          {"plugins",
           "List every registry of plug-ins (fabric kinds, planners, policies, collective "
           "algorithms, backends, packet transports, fabric controllers, commands) with each "
           "entry's description",
           register_plugins},
      });
  return registry;
}

}  // namespace mfabric::cli
