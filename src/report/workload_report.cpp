#include "report/workload_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/output_text.h"
#include "report/format.h"
#include "report/table.h"
#include "workload/gpu_memory.h"

namespace mfabric::report {
namespace {

double share(std::int64_t part, std::int64_t total) {
  return total > 0 ? static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

std::int64_t total_bytes(const workload::WorkloadSummary& s) {
  return s.bytes_tp + s.bytes_cp + s.bytes_ep + s.bytes_dp + s.bytes_pp;
}

nlohmann::json memory_json(const workload::GpuMemory& g) {
  return {{"stage", g.stage},
          {"micro_batches_kept", g.micro_batches_kept},
          {"weights_bytes", g.weights.count()},
          {"gradients_bytes", g.gradients.count()},
          {"optimizer_bytes", g.optimizer.count()},
          {"activations_bytes", g.activations.count()},
          {"buffers_bytes", g.buffers.count()},
          {"total_bytes", g.total().count()},
          {"capacity_bytes", g.capacity.count()},
          {"fits", g.fits()}};
}

}  // namespace

nlohmann::json workload_json(const workload::TrainingSpec& spec, const workload::WorkloadSummary& s,
                             std::uint64_t seed) {
  const std::int64_t total = total_bytes(s);
  return {
      {"model", spec.model.name},
      {"gpu", spec.gpu.name},
      {"gpus", s.gpus},
      {"convention", workload::to_string(s.parallelism.convention)},
      {"dp", s.parallelism.dp},
      {"tp", s.parallelism.tp},
      {"pp", s.parallelism.pp},
      {"ep", s.parallelism.ep},
      {"etp", s.parallelism.expert_tp()},
      {"cp", s.parallelism.cp},
      {"vp", s.parallelism.vp},
      {"expert_dp", s.parallelism.expert_dp()},
      {"micro_batch", spec.micro_batch},
      {"global_batch", spec.global_batch},
      {"seq", spec.seq},
      {"schedule", workload::to_string(spec.schedule)},
      {"precision", workload::to_string(spec.precision)},
      {"recompute", workload::to_string(spec.recompute)},
      {"iterations", spec.iterations},
      {"seed", seed},
      {"micro_batches", s.micro_batches},
      {"region_servers", s.region_servers},
      {"stage_layers", s.stage_layers},
      {"tasks",
       {{"compute", s.compute_tasks}, {"collective", s.collective_tasks}, {"p2p", s.p2p_tasks}}},
      {"bytes_per_iteration",
       {{"tp", s.bytes_tp},
        {"cp", s.bytes_cp},
        {"ep", s.bytes_ep},
        {"dp", s.bytes_dp},
        {"pp", s.bytes_pp}}},
      {"bytes_share",
       {{"tp", share(s.bytes_tp, total)},
        {"cp", share(s.bytes_cp, total)},
        {"ep", share(s.bytes_ep, total)},
        {"dp", share(s.bytes_dp, total)},
        {"pp", share(s.bytes_pp, total)}}},
      {"compute_time_s_per_stage", s.compute_s_per_stage},
      {"moe_layer_forward_s", {{"attention", s.attention_fwd_s}, {"experts", s.experts_fwd_s}}},
      {"moe_layer_forward_ops_s",
       [&] {
         nlohmann::json ops = nlohmann::json::object();
         for (const auto& [op, seconds] : s.moe_layer_fwd_ops)
           ops[workload::to_string(op)] = seconds;
         return ops;
       }()},
      {"compute_model", spec.kernels ? "measured kernels" : "roofline"},
      {"distributed_optimizer", spec.distributed_optimizer},
      {"memory", memory_json(workload::gpu_memory(spec, workload::memory_options(spec)))},
  };
}

std::string workload_text(const workload::TrainingSpec& spec, const workload::WorkloadSummary& s) {
  const auto& p = s.parallelism;
  // The degrees as the convention counts them (workload/parallelism.h).
  const std::string degrees =
      p.paper() ? fmt::format(
                      "TP {} x PP {} x EP {} x DP {} (paper convention: each EP rank a "
                      "data replica)",
                      p.tp, p.pp, p.ep, p.dp)
                : fmt::format(
                      "TP {}{} x PP {}{} x DP {}; experts EP {} x ETP {} x expert-DP {} "
                      "(megatron convention)",
                      p.tp, p.cp > 1 ? fmt::format(" x CP {}", p.cp) : "", p.pp,
                      p.vp > 1 ? fmt::format(" (VP {})", p.vp) : "", p.dp, p.ep, p.expert_tp(),
                      p.expert_dp());
  std::string out = fmt::format(
      "workload {} on {} GPUs ({}): {}\n"
      "batch: micro-batch {} x seq {}, global batch {} -> {} micro-batches per iteration ({}, "
      "{}{})\n"
      "region: {} server(s) per EP group (EP {} x {} {} GPUs); layers per stage: {}\n\n",
      printable(spec.model.name), s.gpus, printable(spec.gpu.name), degrees, spec.micro_batch,
      spec.seq, spec.global_batch, s.micro_batches, workload::to_string(spec.schedule),
      workload::to_string(spec.precision),
      spec.recompute == workload::Recompute::None
          ? std::string()
          : fmt::format(", {} recomputation", workload::to_string(spec.recompute)),
      s.region_servers, p.ep, p.paper() ? "TP" : "ETP", p.expert_tp(),
      fmt::join(s.stage_layers, " "));
  Table tasks({"tasks", "count"});
  tasks.add_row({"compute", with_commas(s.compute_tasks)});
  tasks.add_row({"collective", with_commas(s.collective_tasks)});
  tasks.add_row({"p2p", with_commas(s.p2p_tasks)});
  out += tasks.render() + "\n";
  const std::int64_t total = total_bytes(s);
  Table bytes({"traffic", "bytes per iteration", "share"});
  auto row = [&](const char* name, std::int64_t b) {
    bytes.add_row({name, traffic_bytes(static_cast<double>(b)),
                   fmt::format("{:.1f}%", 100.0 * share(b, total))});
  };
  row("TP", s.bytes_tp);
  if (s.parallelism.cp > 1) row("CP", s.bytes_cp);
  row("EP", s.bytes_ep);
  row("DP", s.bytes_dp);
  row("PP", s.bytes_pp);
  out += bytes.render() + "\n";
  Table stages({"stage", "layers", "compute per iteration"});
  const std::vector<std::string> compute = times_in_one_unit(s.compute_s_per_stage);
  for (std::size_t i = 0; i < s.compute_s_per_stage.size(); ++i) {
    stages.add_row({std::to_string(i), std::to_string(s.stage_layers[i]), compute[i]});
  }
  out += stages.render();
  out += fmt::format(
      "\nMoE layer forward, one micro-batch: attention + router {}, experts (busiest GPU) {}\n",
      to_string(Time::from_seconds(s.attention_fwd_s)),
      to_string(Time::from_seconds(s.experts_fwd_s)));
  if (!s.moe_layer_fwd_ops.empty()) {
    // Every compute task of the layer, the router and the permutation around the experts
    // included: they sit on the compute stream before the all-to-all they feed.
    Table ops({"MoE layer op (forward)", "busiest GPU"});
    for (const auto& [op, seconds] : s.moe_layer_fwd_ops)
      ops.add_row({workload::to_string(op), to_string(Time::from_seconds(seconds))});
    out += fmt::format(
        "\ncompute {}{}:\n",
        spec.kernels ? "from measured kernel tables" : "on the roofline (no measured kernels)",
        spec.expert_per_token || spec.expert_layer_busiest
            ? "; experts from the calibration's time per token"
            : "");
    out += ops.render();
  }
  const workload::GpuMemory memory = workload::gpu_memory(spec, workload::memory_options(spec));
  out +=
      fmt::format("\nmemory per GPU (estimate, docs/workload.md \"Memory\"): {}{}\n",
                  workload::memory_text(memory), memory.fits() ? "" : "; more than the GPU's HBM");
  return out;
}

nlohmann::json expert_routing_json(const config::RoutingSummary& r) {
  nlohmann::json j = {
      {"source", r.trace.empty() ? "synthetic" : "trace"},
      {"busiest_over_mean", {{"mean", r.skew.mean}, {"min", r.skew.min}, {"max", r.skew.max}}}};
  if (r.trace.empty()) {
    j["balance"] = workload::to_string(r.balance);
  } else {
    j["trace"] = r.trace;
  }
  return j;
}

nlohmann::json chakra_json(const workload::ChakraSummary& s) {
  return {{"ranks", s.ranks},
          {"nodes",
           {{"compute", s.compute},
            {"collective", s.collective},
            {"send", s.send},
            {"recv", s.recv},
            {"other", s.other}}},
          {"control_deps",
           {{"dangling", s.dangling_control_deps},
            {"cyclic", s.cyclic_control_deps},
            {"ignored", s.ignored_control_deps}}}};
}

std::string chakra_text(const std::string& prefix, const workload::ChakraSummary& s) {
  Table t({"node type", "count"});
  t.add_row({"compute", with_commas(s.compute)});
  t.add_row({"collective", with_commas(s.collective)});
  t.add_row({"send", with_commas(s.send)});
  t.add_row({"recv", with_commas(s.recv)});
  t.add_row({"other", with_commas(s.other)});
  std::string dropped;
  if (s.dangling_control_deps + s.cyclic_control_deps + s.ignored_control_deps > 0) {
    dropped = fmt::format(
        "\ncontrol dependencies dropped: {} naming missing nodes, {} closing cycles, {} ignored\n",
        with_commas(s.dangling_control_deps), with_commas(s.cyclic_control_deps),
        with_commas(s.ignored_control_deps));
  }
  return fmt::format("chakra trace {}: {} ranks\n\n", printable(prefix), s.ranks) + t.render() +
         dropped;
}

nlohmann::json routing_stats_json(const workload::RoutingTrace& trace,
                                  const workload::RoutingStats& s) {
  return {{"ep", trace.ep()},
          {"experts", trace.experts()},
          {"iterations", trace.iterations()},
          {"micro_batches", trace.micro_batches()},
          {"layers", trace.layers().size()},
          {"records", s.records},
          {"skew", {{"mean", s.skew_mean}, {"min", s.skew_min}, {"max", s.skew_max}}},
          {"load_cv",
           {{"first_iteration", s.cv_first_iteration}, {"last_iteration", s.cv_last_iteration}}},
          {"pairs_for_80pct", s.pairs_for_80pct},
          {"adjacent_layer_correlation", s.adjacent_layer_correlation},
          {"distant_layer_correlation", s.distant_layer_correlation}};
}

std::string routing_stats_text(const std::string& path, const workload::RoutingTrace& trace,
                               const workload::RoutingStats& s) {
  std::string out = fmt::format(
      "routing trace {}: EP {}, {} experts, {} iteration(s) x {} MoE layer(s) x {} "
      "micro-batch(es) = {} records\n\n",
      printable(path), trace.ep(), trace.experts(), trace.iterations(), trace.layers().size(),
      trace.micro_batches(), s.records);
  Table t({"statistic", "value", "meaning"});
  t.add_row({"skew (max/mean expert load)",
             fmt::format("{:.2f} [{:.2f} .. {:.2f}]", s.skew_mean, s.skew_min, s.skew_max),
             "1 = balanced"});
  t.add_row({"load CV, first iteration", fmt::format("{:.3f}", s.cv_first_iteration),
             "spread of expert load"});
  t.add_row({"load CV, last iteration", fmt::format("{:.3f}", s.cv_last_iteration),
             "smaller = skew shrank"});
  t.add_row({"pairs carrying 80% of tokens", fmt::format("{:.1f}%", 100.0 * s.pairs_for_80pct),
             "small = sparse"});
  t.add_row({"adjacent-layer correlation", fmt::format("{:.3f}", s.adjacent_layer_correlation),
             "predictability from layer l-1"});
  t.add_row(
      {"layers two apart (baseline)", fmt::format("{:.3f}", s.distant_layer_correlation), ""});
  return out + t.render();
}

}  // namespace mfabric::report
