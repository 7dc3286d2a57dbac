// mfabric trace: write a synthetic expert-routing trace, or summarise one.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/output_files.h"
#include "core/output_text.h"
#include "core/spec.h"
#include "report/workload_report.h"
#include "workload/training.h"

namespace mfabric::cli {

namespace {

struct TraceOptions : SyntheticTraceOptions {
  std::string out;
  std::string stats;
  bool json = false;
};

// "skew_initial=1.2,layer_correlation=0.9" -> generator parameters; unknown keys are errors.

int run_trace(const TraceOptions& o) {
  if (!o.stats.empty()) {
    const workload::RoutingTrace trace = workload::read_routing_trace(o.stats);
    const workload::RoutingStats stats = workload::routing_stats(trace);
    if (o.json) {
      std::cout << json_text(report::routing_stats_json(trace, stats)) << "\n";
    } else {
      std::cout << report::routing_stats_text(o.stats, trace, stats);
    }
    return 0;
  }
  if (o.model.empty()) throw Error("", "--model", "give --model NAME (or --stats FILE)");
  if (o.out.empty()) throw Error("", "--out", "give --out FILE for the trace (.json or text)");
  // Before the trace is generated, not after.
  with_context("", "--out", [&] { check_output_file(o.out); });
  const workload::RoutingTrace trace = synthetic_trace_from(o).trace;
  workload::write_routing_trace(trace, o.out);
  std::cerr << fmt::format(
      "wrote {}: {} EP ranks x {} experts, {} iteration(s) x {} MoE layers x {} micro-batch(es), "
      "seed {}\n",
      printable(o.out), trace.ep(), trace.experts(), trace.iterations(), trace.layers().size(),
      trace.micro_batches(), o.seed);
  return 0;
}

}  // namespace

Command register_trace(CLI::App& command) {
  auto o = std::make_shared<TraceOptions>();
  CLI::App* app = &command;
  app->add_option("--model", o->model, "Model name from the zoo or a model YAML file");
  app->add_option("--ep", o->ep, "Expert-parallel degree (source ranks of the trace)");
  app->add_option("--iterations", o->iterations, "Training iterations (1 to 10000)")
      ->capture_default_str();
  app->add_option("--micro-batches", o->micro_batches, "Micro-batches per iteration")
      ->capture_default_str();
  app->add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch")
      ->capture_default_str();
  app->add_option("--seq", o->seq, "Tokens per sequence")->capture_default_str();
  app->add_option("--seed", o->seed, "Seed")->capture_default_str();
  app->add_option("--generator", o->generator,
                  "Generator parameters key=value,... (skew_initial, skew_final, "
                  "skew_decay_iterations, start_iteration, layer_skew_spread, iteration_jitter, "
                  "source_concentration, source_weight, layer_correlation, "
                  "transition_concentration; docs/routing.md)");
  auto* out = app->add_option("-o,--out", o->out,
                              "Write the trace here (.json for JSON, anything else for text)");
  auto* stats = app->add_option("--stats", o->stats, "Summarise this trace instead");
  out->excludes(stats);
  app->add_option("--max-memory", o->max_memory,
                  "Refuse traces whose estimated memory is above this (default: 8GiB)");
  app->add_flag("--json", o->json, "With --stats: print JSON");
  return Command{app, [o] { return run_trace(*o); }};
}

namespace {

workload::SyntheticRouting parse_generator(const std::string& text) {
  workload::SyntheticRouting p;
  Spec spec = Spec::parse("generator:" + text);
  p.skew_initial = spec.get_double("skew_initial", p.skew_initial);
  p.skew_final = spec.get_double("skew_final", p.skew_final);
  p.skew_decay_iterations = spec.get_double("skew_decay_iterations", p.skew_decay_iterations);
  p.start_iteration = spec.get_int("start_iteration", p.start_iteration);
  p.layer_skew_spread = spec.get_double("layer_skew_spread", p.layer_skew_spread);
  p.iteration_jitter = spec.get_double("iteration_jitter", p.iteration_jitter);
  p.source_concentration = spec.get_double("source_concentration", p.source_concentration);
  p.source_weight = spec.get_double("source_weight", p.source_weight);
  p.layer_correlation = spec.get_double("layer_correlation", p.layer_correlation);
  p.transition_concentration =
      spec.get_double("transition_concentration", p.transition_concentration);
  spec.finish({"skew_initial", "skew_final", "skew_decay_iterations", "start_iteration",
               "layer_skew_spread", "iteration_jitter", "source_concentration", "source_weight",
               "layer_correlation", "transition_concentration"});
  workload::validate_shape_free(p);
  return p;
}

}  // namespace

SyntheticTrace synthetic_trace_from(const SyntheticTraceOptions& o) {
  if (o.ep < 1) throw Error("", "--ep", "give the expert-parallel degree, e.g. --ep 8");
  if (o.micro_batches < 1 || o.micro_batches > 32767) {
    throw Error("", "--micro-batches",
                fmt::format("must be between 1 and 32767, got {}", o.micro_batches));
  }
  const int iterations = checked_iterations(o.iterations, "--iterations");
  // A one-stage, TP 1 job with `ep` ranks, each routing its own micro-batches (the paper's
  // convention), as many as asked.
  workload::ParallelismSpec degrees;
  degrees.ep = o.ep;
  degrees.convention = workload::ParallelConvention::Paper;
  workload::TrainingSpec spec =
      training_spec_from(o.model, std::nullopt, degrees, 1, o.micro_batch,
                         o.micro_batch * o.micro_batches, o.seq, "h800", 8);
  spec.iterations = iterations;
  const std::int64_t bytes = workload::routing_trace_bytes(
      o.ep, spec.model.experts, iterations, spec.model.moe_layers(), o.micro_batches);
  const Bytes limit = max_memory_option(o.max_memory, "--max-memory");
  if (bytes > limit.count()) {
    throw Error("", "--max-memory",
                fmt::format("the trace holds {} x {} x {} x {} x {} counts, an estimated {} in "
                            "memory, more than the limit of {}; raise --max-memory, or use "
                            "fewer iterations or micro-batches",
                            iterations, spec.model.moe_layers(), o.micro_batches, o.ep,
                            spec.model.experts, to_string(Bytes(bytes)), to_string(limit)));
  }
  const workload::SyntheticRouting params =
      with_context("", "--generator", [&] { return generator_params(o.generator); });
  SyntheticTrace out{spec, params, workload::synthetic_trace_for(spec, params, o.seed)};
  return out;
}

workload::SyntheticRouting generator_params(const std::string& text) {
  if (text.empty()) return {};
  return parse_generator(text);
}

}  // namespace mfabric::cli
