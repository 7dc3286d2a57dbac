// mfabric predict: Copilot's demand prediction (layer l from layer l-1) run online over a
// routing trace, scored against the uniform, reuse-previous-layer and history baselines
// (docs/control-plane.md, "Demand prediction (Copilot)").
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "control/copilot_evaluation.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/output_text.h"
#include "core/spec.h"
#include "report/table.h"
#include "workload/training.h"

namespace mfabric::cli {

namespace {

struct PredictOptions : SyntheticTraceOptions {
  PredictOptions() {
    iterations = 4;
    micro_batches = 8;
  }
  std::string trace;
  std::optional<int> top_k;  // empty: the model's
  int ranks_per_server = 1;
  control::CopilotOptions copilot;
  bool json = false;
};

struct Input {
  workload::ModelSpec model;
  workload::RoutingTrace trace;
  std::string description;  // where the trace came from
};

Input synthetic_input(const PredictOptions& o) {
  SyntheticTrace t = synthetic_trace_from(o);
  Input in{t.spec.model, std::move(t.trace), ""};
  in.description =
      fmt::format("synthetic trace (seed {}, layer_correlation {}, transition_concentration {})",
                  o.seed, t.params.layer_correlation, t.params.transition_concentration);
  return in;
}

Input file_input(const PredictOptions& o) {
  Input in;
  in.model = with_context("", "--model", [&] { return workload::load_model(o.model); });
  in.trace = workload::read_routing_trace(o.trace);
  if (in.trace.experts() != in.model.experts) {
    throw Error(o.trace, "experts",
                fmt::format("the trace routes to {} experts, model {} has {}", in.trace.experts(),
                            in.model.name, in.model.experts));
  }
  if (o.ep != 0 && o.ep != in.trace.ep()) {
    throw Error("", "--ep",
                fmt::format("the trace {} has {} EP ranks, --ep says {} (leave --ep out to take "
                            "the trace's)",
                            o.trace, in.trace.ep(), o.ep));
  }
  in.description = "trace " + o.trace;
  return in;
}

int run_predict(const PredictOptions& o) {
  if (o.model.empty())
    throw Error("", "--model", "give --model NAME (the model zoo or a YAML file)");
  with_option_names([&] { o.copilot.validate(); });
  // Checked before the trace is made or read; the upper bound (the experts) after.
  if (o.top_k && *o.top_k < 1) {
    throw Error("", "--top-k", fmt::format("expected at least 1 expert, got {}", *o.top_k));
  }
  const Input in = o.trace.empty() ? synthetic_input(o) : file_input(o);
  const workload::RoutingTrace& trace = in.trace;

  control::PredictionSetup setup;
  setup.copilot = o.copilot;
  setup.top_k = o.top_k.value_or(in.model.top_k);
  if (setup.top_k < 1 || setup.top_k > trace.experts()) {
    throw Error(
        "", "--top-k",
        fmt::format("expected 1 to {} (the experts), got {}", trace.experts(), setup.top_k));
  }
  setup.ranks_per_server = o.ranks_per_server;
  setup.bytes_per_token = static_cast<double>(in.model.hidden) * in.model.dtype_bytes;
  const control::PredictionEvaluation result = [&] {
    try {
      return control::evaluate_prediction(trace, setup);
    } catch (const Error& e) {
      // The trace's shape: the file's fault, or the model's (its MoE layers) for a synthetic one.
      if (e.field() == "trace") {
        throw o.trace.empty() ? Error("", "--model", e.message()) : Error(o.trace, "", e.message());
      }
      return with_option_names([&]() -> control::PredictionEvaluation { throw e; });
    }
  }();

  if (o.json) {
    nlohmann::json predictors = nlohmann::json::array();
    for (const control::PredictorScore& s : result.predictors) {
      predictors.push_back({{"name", s.name},
                            {"top_k_accuracy", s.top_k_accuracy},
                            {"load_tvd", s.load_tvd},
                            {"row_tvd", s.row_tvd},
                            {"demand_error", s.demand_error},
                            {"observe_seconds", s.observe_seconds},
                            {"predict_seconds", s.predict_seconds},
                            {"solver_steps", s.solver_steps}});
    }
    const nlohmann::json out = {{"model", in.model.name},
                                {"ep", trace.ep()},
                                {"experts", trace.experts()},
                                {"top_k", setup.top_k},
                                {"source", o.trace.empty() ? "synthetic" : o.trace},
                                {"iterations", trace.iterations()},
                                {"moe_layers", trace.layers().size()},
                                {"micro_batches", trace.micro_batches()},
                                {"copilot",
                                 {{"history", o.copilot.history},
                                  {"decay", o.copilot.decay},
                                  {"solver_iterations", o.copilot.solver_iterations},
                                  {"tolerance", o.copilot.tolerance},
                                  {"refit_every", o.copilot.refit_every},
                                  {"warmup", o.copilot.warmup}}},
                                {"servers", result.servers},
                                {"scored", result.scored},
                                {"warmup_predictions", result.warmup},
                                {"predictors", predictors}};
    std::cout << json_text(out) << "\n";
    return 0;
  }

  std::cout << fmt::format(
      "predict: {}, EP {}, {} experts, top-{} compared; {}: {} iteration(s) "
      "x {} MoE layers x {} micro-batch(es)\n",
      printable(in.model.name), trace.ep(), trace.experts(), setup.top_k, printable(in.description),
      trace.iterations(), trace.layers().size(), trace.micro_batches());
  std::cout << fmt::format(
      "copilot: history {}, decay {}, at most {} solver iterations (tolerance {}), refit every "
      "{} observation(s), warm-up {}\n",
      o.copilot.history, o.copilot.decay, o.copilot.solver_iterations, o.copilot.tolerance,
      o.copilot.refit_every, o.copilot.warmup);
  std::cout << fmt::format(
      "predictions: {} scored, {} during warm-up (not scored); demand over {} server(s) of {} EP "
      "rank(s)\n\n",
      result.scored, result.warmup, result.servers, setup.ranks_per_server);
  using Align = report::Table::Align;
  report::Table table({"predictor", fmt::format("top-{} accuracy", setup.top_k), "load TVD",
                       "row TVD", "demand error"},
                      {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right});
  for (const control::PredictorScore& s : result.predictors) {
    table.add_row({s.name, fmt::format("{:.3f}", s.top_k_accuracy),
                   fmt::format("{:.3f}", s.load_tvd), fmt::format("{:.3f}", s.row_tvd),
                   result.servers > 1 ? fmt::format("{:.3f}", s.demand_error) : "-"});
  }
  std::cout << table.render() << "\n";
  for (const control::PredictorScore& s : result.predictors) {
    if (s.observe_seconds == 0 && s.predict_seconds == 0) continue;
    std::cout << fmt::format(
        "{} time: {} per fit (one layer's observation, {:.1f} solver steps on average), {} per "
        "prediction (one layer)\n",
        s.name, seconds_text(s.observe_seconds), s.solver_steps, seconds_text(s.predict_seconds));
  }
  return 0;
}

}  // namespace

Command register_predict(CLI::App& command) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* app = &command;
  app->add_option("--model", o->model, "Model name from the zoo or a model YAML file")->required();
  app->add_option("--ep", o->ep,
                  "Expert-parallel degree (source ranks); with --trace, the trace's by default");
  app->add_option("--iterations", o->iterations, "Synthetic trace: training iterations")
      ->capture_default_str();
  app->add_option("--micro-batches", o->micro_batches,
                  "Synthetic trace: micro-batches per iteration")
      ->capture_default_str();
  app->add_option("--micro-batch", o->micro_batch, "Synthetic trace: sequences per micro-batch")
      ->capture_default_str();
  app->add_option("--seq", o->seq, "Synthetic trace: tokens per sequence")->capture_default_str();
  app->add_option("--seed", o->seed, "Synthetic trace: seed")->capture_default_str();
  app->add_option("--generator", o->generator,
                  "Synthetic trace: generator parameters key=value,... (as mfabric trace; "
                  "docs/routing.md)");
  auto* trace = app->add_option("--trace", o->trace,
                                "Predict over this routing trace file instead (docs/routing.md)");
  for (const char* synthetic :
       {"--iterations", "--micro-batches", "--micro-batch", "--seq", "--seed", "--generator"}) {
    trace->excludes(app->get_option(synthetic));
  }
  app->add_option("--max-memory", o->max_memory,
                  "Refuse synthetic traces whose estimated memory is above this (default: 8GiB)");
  app->add_option("--top-k", o->top_k, "Heavy experts compared (default: the model's top-k)");
  app->add_option("--ranks-per-server", o->ranks_per_server,
                  "EP ranks per server for the demand error (a divisor of EP)")
      ->capture_default_str();
  app->add_option("--history", o->copilot.history, "Copilot: observations per layer's fit (K)")
      ->capture_default_str();
  app->add_option("--decay", o->copilot.decay,
                  "Copilot: recency weight, decay^age (0 < decay <= 1)")
      ->capture_default_str();
  app->add_option("--solver-iterations", o->copilot.solver_iterations,
                  "Copilot: projected-gradient steps per fit, at most")
      ->capture_default_str();
  app->add_option("--tolerance", o->copilot.tolerance,
                  "Copilot: a fit stops once a step moves no entry of P by more than this")
      ->capture_default_str();
  app->add_option("--refit-every", o->copilot.refit_every,
                  "Copilot: refit a layer at every n-th observation of it")
      ->capture_default_str();
  app->add_option("--warmup", o->copilot.warmup,
                  "Copilot: observations of a layer before predicting it (before: reuse layer l-1)")
      ->capture_default_str();
  app->add_flag("--json", o->json, "Print JSON");
  return Command{app, [o] { return run_predict(*o); }};
}

}  // namespace mfabric::cli
